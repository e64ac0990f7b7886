package topology

import (
	"bytes"
	"compress/gzip"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lockstep-dev/lockstep/shared/contract/errs"
)

func TestLoadFilePicksFormatByExtension(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, data []byte) string {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, data, 0o600); err != nil {
			t.Fatal(err)
		}
		return path
	}
	gz := func(s string) []byte {
		var buf bytes.Buffer
		w := gzip.NewWriter(&buf)
		if _, err := w.Write([]byte(s)); err != nil {
			t.Fatal(err)
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		return buf.Bytes()
	}
	for _, tc := range []struct {
		file string
		data []byte
		leaf string // of node "n1"
	}{
		{"topo.yaml", []byte("switches:\n  - name: y\n    nodes: [n1]\n"), "y"},
		{"topo.YML", []byte("switches:\n  - name: y\n    nodes: [n1]\n"), "y"},
		{"topology.conf", []byte("SwitchName=c Nodes=n1\n"), "c"},
		{"topology.conf.gz", gz("SwitchName=cz Nodes=n1\n"), "cz"},
		{"topo.csv", []byte("ip,DSW,PSW,ASW\nh,G,P,S\n"), ""}, // named lj-0001
	} {
		topo, err := LoadFile(write(tc.file, tc.data))
		if err != nil {
			t.Errorf("%s: %v", tc.file, err)
			continue
		}
		node, want := "n1", tc.leaf
		if want == "" {
			node, want = "lj-0001", "P/S"
		}
		if leaf, _ := topo.Leaf(node); leaf != want {
			t.Errorf("%s: Leaf(%s) = %q, want %q", tc.file, node, leaf, want)
		}
	}

	for _, tc := range []struct {
		file    string
		data    []byte
		want    string
		invalid bool
	}{
		{"topo.json", []byte("{}"), "unknown format", true},
		{"topo.yaml.gz", []byte("not gzip at all"), "decompressing", true},
		{"bad.conf", []byte("Bogus=1\n"), "bad.conf: parsing Slurm topology.conf: line 1", true},
	} {
		_, err := LoadFile(write(tc.file, tc.data))
		if err == nil || !strings.Contains(err.Error(), tc.want) || errs.IsInvalid(err) != tc.invalid {
			t.Errorf("%s: error %v, want one containing %q (invalid=%v)", tc.file, err, tc.want, tc.invalid)
		}
	}
	if _, err := LoadFile(filepath.Join(dir, "missing.yaml")); err == nil || errs.IsInvalid(err) {
		t.Errorf("missing file: error %v, want an I/O error not marked invalid", err)
	}
}
