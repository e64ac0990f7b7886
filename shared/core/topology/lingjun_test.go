package topology

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestLoadLingjunCSV(t *testing.T) {
	// S1 appears under both P8 and P10: they are different ToRs.
	const csv = "ip,DSW,PSW,ASW\n" +
		"aa,G6,P10,S1\n" +
		"bb,G6,P8,S1\n" +
		"cc,G6,P10,S1\n" +
		"dd,G6,P10,S2\n"
	topo, err := LoadLingjunCSV(strings.NewReader(csv))
	if err != nil {
		t.Fatal(err)
	}
	want := Spec{Switches: []SwitchSpec{
		{Name: "G6", Children: []string{"P10", "P8"}},
		{Name: "P10", Children: []string{"P10/S1", "P10/S2"}},
		{Name: "P10/S1", Nodes: []string{"lj-0001", "lj-0003"}},
		{Name: "P10/S2", Nodes: []string{"lj-0004"}},
		{Name: "P8", Children: []string{"P8/S1"}},
		{Name: "P8/S1", Nodes: []string{"lj-0002"}},
	}}
	if got := topo.Spec(); !reflect.DeepEqual(got, want) {
		t.Errorf("got  %+v\nwant %+v", got, want)
	}
}

func TestLoadLingjunCSVRejects(t *testing.T) {
	const header = "ip,DSW,PSW,ASW\n"
	for _, tc := range []struct{ name, csv, want string }{
		{"wrong header", "host,core,agg,tor\na,G,P,S\n", `header is "host,core,agg,tor"`},
		{"empty field", header + "a,G6,,S1\n", "line 2: empty PSW"},
		{"duplicate host", header + "a,G6,P1,S1\nb,G6,P1,S1\na,G6,P1,S2\n", "line 4: host a already listed on line 2"},
		{"short row", header + "a,G6,P1\n", "wrong number of fields"},
		{"no hosts", header, "no hosts"},
		{"empty input", "", "reading header"},
		{"aggregation under two cores", header + "a,G1,P1,S1\nb,G2,P1,S2\n", `switch "P1" is a child of both "G1" and "G2"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := LoadLingjunCSV(strings.NewReader(tc.csv))
			wantInvalid(t, err, tc.want)
		})
	}
}

// TestLoadLingjunTrace loads the real trace shipped beside the module.
func TestLoadLingjunTrace(t *testing.T) {
	path := filepath.Join(moduleRoot(t), "..", "shared", "traces", "alibaba_lingjun2023_topo.csv.gz")
	if _, err := os.Stat(path); err != nil {
		t.Skipf("Lingjun trace not available at %s (%v); it lives in the shared traces directory beside the module", path, err)
	}
	topo, err := LoadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	roots := topo.Roots()
	if len(roots) != 1 || roots[0] != "G6" {
		t.Fatalf("Roots() = %q, want the one core switch G6", roots)
	}
	if n := len(topo.Nodes(roots[0])); n != 847 {
		t.Errorf("%d nodes, want 847", n)
	}
	if n := len(topo.Leaves()); n != 119 {
		t.Errorf("%d leaves, want 119", n)
	}
	if aggs := topo.Children(roots[0]); len(aggs) != 3 {
		t.Errorf("aggregation switches %q, want 3", aggs)
	}
	if h := topo.Height(); h != 3 {
		t.Errorf("Height() = %d, want 3 (ToR, aggregation, core)", h)
	}
	biggest := 0
	for _, leaf := range topo.Leaves() {
		biggest = max(biggest, len(topo.Nodes(leaf)))
	}
	if biggest != 8 {
		t.Errorf("largest ToR has %d hosts, want 8", biggest)
	}
	// The first data row is "...,G6,P10,S14".
	if got := topo.Path(LingjunNodeName(1)); !reflect.DeepEqual(got, []string{"P10/S14", "P10", "G6"}) {
		t.Errorf("Path(lj-0001) = %q, want [P10/S14 P10 G6]", got)
	}
}

// moduleRoot walks up from the test's working directory to the go.mod.
func moduleRoot(t *testing.T) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("no go.mod above the test's working directory")
		}
		dir = parent
	}
}
