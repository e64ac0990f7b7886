package topology

import (
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/lockstep-dev/lockstep/shared/contract/errs"
)

// fixture is an uneven three-level tree: leaf-4 hangs straight off the core.
//
//	core ─┬─ spine-1 ─┬─ leaf-1: n01 n02
//	      │           └─ leaf-2: n03 n04
//	      ├─ spine-2 ─── leaf-3: n05
//	      └─ leaf-4: n06
func fixture(t *testing.T) *Topology {
	t.Helper()
	topo, err := New(Spec{
		Switches: []SwitchSpec{
			{Name: "core", Children: []string{"spine-2", "spine-1", "leaf-4"}},
			{Name: "spine-1", Children: []string{"leaf-1", "leaf-2"}},
			{Name: "spine-2", Children: []string{"leaf-3"}},
			{Name: "leaf-1", Nodes: []string{"n02", "n01"}},
			{Name: "leaf-2", Nodes: []string{"n03", "n04"}},
			{Name: "leaf-3", Nodes: []string{"n05"}},
			{Name: "leaf-4", Nodes: []string{"n06"}},
		},
		Blocks: []BlockSpec{
			{Name: "nvl-2", Nodes: []string{"n05"}},
			{Name: "nvl-1", Nodes: []string{"n03", "n01", "n02"}},
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	return topo
}

func TestNodeLookups(t *testing.T) {
	topo := fixture(t)
	for _, tc := range []struct {
		node      string
		leaf      string
		path      []string
		block     string
		inBlock   bool
		notInTree bool
	}{
		{node: "n01", leaf: "leaf-1", path: []string{"leaf-1", "spine-1", "core"}, block: "nvl-1", inBlock: true},
		{node: "n04", leaf: "leaf-2", path: []string{"leaf-2", "spine-1", "core"}},
		{node: "n05", leaf: "leaf-3", path: []string{"leaf-3", "spine-2", "core"}, block: "nvl-2", inBlock: true},
		{node: "n06", leaf: "leaf-4", path: []string{"leaf-4", "core"}},
		{node: "ghost", notInTree: true},
	} {
		leaf, ok := topo.Leaf(tc.node)
		if ok == tc.notInTree || leaf != tc.leaf {
			t.Errorf("Leaf(%s) = %q, %v; want %q", tc.node, leaf, ok, tc.leaf)
		}
		if got := topo.Path(tc.node); !slices.Equal(got, tc.path) {
			t.Errorf("Path(%s) = %q, want %q", tc.node, got, tc.path)
		}
		if b, ok := topo.Block(tc.node); ok != tc.inBlock || b != tc.block {
			t.Errorf("Block(%s) = %q, %v; want %q, %v", tc.node, b, ok, tc.block, tc.inBlock)
		}
	}
}

func TestSwitchLookups(t *testing.T) {
	topo := fixture(t)
	for _, tc := range []struct {
		sw       string
		level    int
		nodes    []string
		children []string
	}{
		{"core", 2, []string{"n01", "n02", "n03", "n04", "n05", "n06"}, []string{"leaf-4", "spine-1", "spine-2"}},
		{"spine-1", 1, []string{"n01", "n02", "n03", "n04"}, []string{"leaf-1", "leaf-2"}},
		{"leaf-1", 0, []string{"n01", "n02"}, nil},
		{"leaf-4", 0, []string{"n06"}, nil},
		{"nope", -1, nil, nil},
	} {
		if got := topo.Level(tc.sw); got != tc.level {
			t.Errorf("Level(%s) = %d, want %d", tc.sw, got, tc.level)
		}
		if got := topo.Nodes(tc.sw); !slices.Equal(got, tc.nodes) {
			t.Errorf("Nodes(%s) = %q, want %q", tc.sw, got, tc.nodes)
		}
		if got := topo.Children(tc.sw); !slices.Equal(got, tc.children) {
			t.Errorf("Children(%s) = %q, want %q", tc.sw, got, tc.children)
		}
	}
	if got, want := topo.Leaves(), []string{"leaf-1", "leaf-2", "leaf-3", "leaf-4"}; !slices.Equal(got, want) {
		t.Errorf("Leaves() = %q, want %q", got, want)
	}
	if got := topo.Roots(); !slices.Equal(got, []string{"core"}) {
		t.Errorf("Roots() = %q, want [core]", got)
	}
	if got := topo.Height(); got != 3 {
		t.Errorf("Height() = %d, want 3", got)
	}
	if got, want := topo.Blocks(), []string{"nvl-1", "nvl-2"}; !slices.Equal(got, want) {
		t.Errorf("Blocks() = %q, want %q", got, want)
	}
	if got, want := topo.BlockNodes("nvl-1"), []string{"n01", "n02", "n03"}; !slices.Equal(got, want) {
		t.Errorf("BlockNodes(nvl-1) = %q, want %q", got, want)
	}
}

func TestLookupsReturnCopies(t *testing.T) {
	topo := fixture(t)
	topo.Path("n01")[0] = "mutated"
	topo.Nodes("core")[0] = "mutated"
	topo.Leaves()[0] = "mutated"
	if topo.Path("n01")[0] != "leaf-1" || topo.Nodes("core")[0] != "n01" || topo.Leaves()[0] != "leaf-1" {
		t.Fatal("a caller's edit to a returned slice changed the topology")
	}
}

func TestLowestCommonLevel(t *testing.T) {
	topo := fixture(t)
	for _, tc := range []struct {
		nodes []string
		want  int
	}{
		{nil, -1},
		{[]string{"n01"}, -1},
		{[]string{"n01", "n01"}, -1},
		{[]string{"ghost"}, -1},
		{[]string{"n01", "n02"}, 0},
		{[]string{"n02", "n01", "n02"}, 0},
		{[]string{"n01", "n03"}, 1},
		{[]string{"n01", "n02", "n04"}, 1},
		{[]string{"n01", "n05"}, 2},
		{[]string{"n06", "n05"}, 2},
		{[]string{"n01", "n02", "n03", "n04", "n05", "n06"}, 2},
		{[]string{"n01", "ghost"}, 3}, // outside the tree: Height()
		{[]string{"ghost", "phantom"}, 3},
	} {
		if got := topo.LowestCommonLevel(tc.nodes); got != tc.want {
			t.Errorf("LowestCommonLevel(%q) = %d, want %d", tc.nodes, got, tc.want)
		}
	}
}

func TestSeparateTreesShareNoLevel(t *testing.T) {
	topo, err := New(Spec{Switches: []SwitchSpec{
		{Name: "a", Nodes: []string{"a1", "a2"}},
		{Name: "top", Children: []string{"b"}},
		{Name: "b", Nodes: []string{"b1"}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	if got := topo.Roots(); !slices.Equal(got, []string{"a", "top"}) {
		t.Fatalf("Roots() = %q", got)
	}
	if got := topo.LowestCommonLevel([]string{"a1", "b1"}); got != 2 {
		t.Errorf("nodes in separate trees: got level %d, want Height() = 2", got)
	}
	if got := topo.LowestCommonLevel([]string{"a1", "a2"}); got != 0 {
		t.Errorf("nodes on one leaf: got %d, want 0", got)
	}
}

func TestZeroTopologyIsEmpty(t *testing.T) {
	var topo Topology
	if _, ok := topo.Leaf("n1"); ok {
		t.Error("Leaf found a node in the zero Topology")
	}
	if topo.Path("n1") != nil || topo.Level("s") != -1 || topo.Height() != 0 || len(topo.Leaves()) != 0 {
		t.Error("zero Topology is not empty")
	}
	if got := topo.LowestCommonLevel([]string{"n1", "n2"}); got != 0 {
		t.Errorf("LowestCommonLevel in the zero Topology = %d, want Height() = 0", got)
	}
}

func TestJSONRoundTrip(t *testing.T) {
	topo := fixture(t)
	data, err := json.Marshal(topo)
	if err != nil {
		t.Fatal(err)
	}
	var back Topology
	if err := json.Unmarshal(data, &back); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(back.Spec(), topo.Spec()) {
		t.Fatalf("round trip changed the topology:\n%+v\n%+v", back.Spec(), topo.Spec())
	}
	if got := back.LowestCommonLevel([]string{"n01", "n03"}); got != 1 {
		t.Errorf("decoded topology: LowestCommonLevel = %d, want 1", got)
	}
	bad := `{"switches":[{"name":"a","children":["b"]},{"name":"b","children":["a"]}]}`
	if err := json.Unmarshal([]byte(bad), &back); err == nil {
		t.Error("decoding a cyclic topology succeeded")
	}
}

// wantInvalid fails t unless err is a rejection marked invalid whose message
// contains want: the checks every loader's and Validate's bad-input table
// makes of each case.
func wantInvalid(t *testing.T, err error, want string) {
	t.Helper()
	if err == nil {
		t.Fatal("accepted")
	}
	if !strings.Contains(err.Error(), want) {
		t.Errorf("error %q does not contain %q", err, want)
	}
	if !errs.IsInvalid(err) {
		t.Errorf("error %q is not marked invalid", err)
	}
}
