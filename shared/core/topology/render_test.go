package topology

import (
	"strings"
	"testing"

	"github.com/cockroachdb/errors"
)

func TestRender(t *testing.T) {
	free := map[string]int{"n01": 8, "n02": 4, "n03": 0, "n04": 8, "n05": 2, "n06": 8}
	asked := map[string]int{}
	gpus := func(node string) (int, int) {
		asked[node]++
		return free[node], 8
	}
	var out strings.Builder
	if err := fixture(t).Render(&out, gpus); err != nil {
		t.Fatal(err)
	}
	const want = `SWITCH      LEVEL  NODES  FREE/TOTAL GPUS
core        2      6      30/48
  leaf-4    0      1      8/8
  spine-1   1      4      20/32
    leaf-1  0      2      12/16
    leaf-2  0      2      8/16
  spine-2   1      1      2/8
    leaf-3  0      1      2/8

BLOCK  NODES  FREE/TOTAL GPUS
nvl-1  3      12/24
nvl-2  1      2/8
`
	if got := out.String(); got != want {
		t.Errorf("got:\n%s\nwant:\n%s", got, want)
	}
	for node, n := range asked {
		if n != 1 {
			t.Errorf("gpus(%s) called %d times, want once", node, n)
		}
	}
}

func TestRenderWithoutGPUs(t *testing.T) {
	topo, err := New(Spec{Switches: []SwitchSpec{
		{Name: "s", Children: []string{"l"}},
		{Name: "l", Nodes: []string{"n1", "n2"}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	if err := topo.Render(&out, nil); err != nil {
		t.Fatal(err)
	}
	const want = `SWITCH  LEVEL  NODES  FREE/TOTAL GPUS
s       1      2      -
  l     0      2      -
`
	if got := out.String(); got != want {
		t.Errorf("got:\n%s\nwant:\n%s", got, want)
	}

	out.Reset()
	if err := (&Topology{}).Render(&out, nil); err != nil || out.Len() != 0 {
		t.Errorf("empty topology rendered %q, %v; want nothing", out.String(), err)
	}
}

type failingWriter struct{}

func (failingWriter) Write([]byte) (int, error) { return 0, errors.New("disk full") }

func TestRenderReportsWriteErrors(t *testing.T) {
	err := fixture(t).Render(failingWriter{}, nil)
	if err == nil || !strings.Contains(err.Error(), "disk full") {
		t.Fatalf("error %v, want the writer's error", err)
	}
}
