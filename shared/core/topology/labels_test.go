package topology

import (
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/lockstep-dev/lockstep/shared/contract/errs"
)

func TestFromLabels(t *testing.T) {
	for _, tc := range []struct {
		name   string
		labels []NodeLabels
		want   Spec
	}{
		{
			name: "several spines get a synthetic root",
			labels: []NodeLabels{
				{Name: "n1", Leaf: "l1", Spine: "s1", Block: "b1"},
				{Name: "n2", Leaf: "l1", Spine: "s1", Block: "b1"},
				{Name: "n3", Leaf: "l2", Spine: "s2"},
				{Name: "n4"}, // no labels: outside the tree
			},
			want: Spec{
				Switches: []SwitchSpec{
					{Name: "l1", Nodes: []string{"n1", "n2"}},
					{Name: "l2", Nodes: []string{"n3"}},
					{Name: "root", Children: []string{"s1", "s2"}},
					{Name: "s1", Children: []string{"l1"}},
					{Name: "s2", Children: []string{"l2"}},
				},
				Blocks: []BlockSpec{{Name: "b1", Nodes: []string{"n1", "n2"}}},
			},
		},
		{
			name: "one spine is the root",
			labels: []NodeLabels{
				{Name: "n1", Leaf: "l1", Spine: "s1"},
				{Name: "n2", Leaf: "l2", Spine: "s1"},
			},
			want: Spec{Switches: []SwitchSpec{
				{Name: "l1", Nodes: []string{"n1"}},
				{Name: "l2", Nodes: []string{"n2"}},
				{Name: "s1", Children: []string{"l1", "l2"}},
			}},
		},
		{
			name: "leaves without spines share the synthetic root",
			labels: []NodeLabels{
				{Name: "n1", Leaf: "l1"},
				{Name: "n2", Leaf: "l2"},
			},
			want: Spec{Switches: []SwitchSpec{
				{Name: "l1", Nodes: []string{"n1"}},
				{Name: "l2", Nodes: []string{"n2"}},
				{Name: "root", Children: []string{"l1", "l2"}},
			}},
		},
		{
			name:   "blocks only",
			labels: []NodeLabels{{Name: "n1", Block: "b"}},
			want:   Spec{Blocks: []BlockSpec{{Name: "b", Nodes: []string{"n1"}}}},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			topo, err := FromLabels(tc.labels)
			if err != nil {
				t.Fatal(err)
			}
			if got := topo.Spec(); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got  %+v\nwant %+v", got, tc.want)
			}
		})
	}
}

func TestFromLabelsRejects(t *testing.T) {
	for _, tc := range []struct {
		name   string
		labels []NodeLabels
		want   string
	}{
		{"leaf under two spines", []NodeLabels{{Name: "n1", Leaf: "l", Spine: "s1"}, {Name: "n2", Leaf: "l", Spine: "s2"}},
			`leaf "l" is under spine "s1" according to node "n1" but "s2" according to node "n2"`},
		{"leaf with and without spine", []NodeLabels{{Name: "n1", Leaf: "l", Spine: "s1"}, {Name: "n2", Leaf: "l"}},
			`leaf "l" is under spine "s1"`},
		{"spine without leaf", []NodeLabels{{Name: "n1", Spine: "s1"}}, `node "n1" has a spine label but no leaf label`},
		{"reserved root name", []NodeLabels{{Name: "n1", Leaf: "l", Spine: "root"}, {Name: "n2", Leaf: "m", Spine: "s"}},
			`reserved for the synthetic root`},
		{"duplicate node", []NodeLabels{{Name: "n1", Leaf: "l1"}, {Name: "n1", Leaf: "l2"}}, `node "n1" is under two leaf switches`},
		{"unnamed node", []NodeLabels{{Leaf: "l1"}}, "a node has no name"},
		{"leaf name reused as spine", []NodeLabels{{Name: "n1", Leaf: "x", Spine: "s"}, {Name: "n2", Leaf: "y", Spine: "x"}},
			`switch "x" lists both child switches and nodes`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := FromLabels(tc.labels)
			if err == nil || !strings.Contains(err.Error(), tc.want) || !errs.IsInvalid(err) {
				t.Errorf("error %v, want an invalid-spec error containing %q", err, tc.want)
			}
		})
	}
}

// mergeFile is the operator's file: core over spine-1 (leaf-1, leaf-2) and
// leaf-9 directly; blocks f1.
func mergeFile(t *testing.T) *Topology {
	t.Helper()
	topo, err := LoadYAML(strings.NewReader(`
switches:
  - {name: core, children: [spine-1, leaf-9]}
  - {name: spine-1, children: [leaf-1, leaf-2]}
  - {name: leaf-1, nodes: [a1, a2]}
  - {name: leaf-2, nodes: [b1]}
  - {name: leaf-9, nodes: [z1]}
blocks:
  - {name: f1, nodes: [a1]}
`))
	if err != nil {
		t.Fatal(err)
	}
	return topo
}

func TestMerge(t *testing.T) {
	labels, err := FromLabels([]NodeLabels{
		{Name: "a1", Leaf: "leaf-7", Spine: "spine-7", Block: "g1"}, // file wins: stays on leaf-1, in f1
		{Name: "a2", Leaf: "leaf-1", Spine: "spine-1", Block: "g1"}, // tree from file, block from labels
		{Name: "b2", Leaf: "leaf-2", Spine: "spine-1"},              // joins the file's leaf-2
		{Name: "z2", Leaf: "leaf-9", Spine: "spine-1"},              // file's leaf-9 is used where the file has it
		{Name: "c1", Leaf: "leaf-3", Spine: "spine-1"},              // new leaf under the file's spine-1
		{Name: "d1", Leaf: "leaf-4", Spine: "spine-2", Block: "f1"}, // nothing known: a separate tree; joins f1
	})
	if err != nil {
		t.Fatal(err)
	}
	topo, err := Merge(mergeFile(t), labels)
	if err != nil {
		t.Fatal(err)
	}
	for node, want := range map[string][]string{
		"a1": {"leaf-1", "spine-1", "core"},
		"a2": {"leaf-1", "spine-1", "core"},
		"b1": {"leaf-2", "spine-1", "core"},
		"b2": {"leaf-2", "spine-1", "core"},
		"c1": {"leaf-3", "spine-1", "core"},
		"z1": {"leaf-9", "core"},
		"z2": {"leaf-9", "core"},
		"d1": {"leaf-4", "spine-2", "root"},
	} {
		if got := topo.Path(node); !slices.Equal(got, want) {
			t.Errorf("Path(%s) = %q, want %q", node, got, want)
		}
	}
	for node, want := range map[string]string{"a1": "f1", "a2": "g1", "d1": "f1", "b1": ""} {
		if got, _ := topo.Block(node); got != want {
			t.Errorf("Block(%s) = %q, want %q", node, got, want)
		}
	}
	if topo.Level("leaf-7") != -1 || topo.Level("spine-7") != -1 {
		t.Error("switches only a file-placed node's labels mention were added")
	}
	if got := topo.LowestCommonLevel([]string{"a1", "d1"}); got != topo.Height() {
		t.Errorf("a node only the labels place shares no switch with the file's: got level %d, want %d", got, topo.Height())
	}
}

func TestMergeNil(t *testing.T) {
	file := mergeFile(t)
	for name, got := range map[string]func() (*Topology, error){
		"nil labels": func() (*Topology, error) { return Merge(file, nil) },
		"nil file":   func() (*Topology, error) { return Merge(nil, file) },
	} {
		topo, err := got()
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if !reflect.DeepEqual(topo.Spec(), file.Spec()) {
			t.Errorf("%s: merge changed the topology", name)
		}
	}
}

func TestMergeRejectsLabelsThatContradictTheFileShape(t *testing.T) {
	for _, tc := range []struct {
		name  string
		label NodeLabels
		want  string
	}{
		{"node on a file switch that has children", NodeLabels{Name: "x", Leaf: "spine-1"},
			`labels put node "x" on leaf "spine-1", which the file defines as a switch with child switches`},
		{"new switch under a file leaf", NodeLabels{Name: "x", Leaf: "new-leaf", Spine: "leaf-1"},
			`labels put switch "new-leaf" under "leaf-1", which the file defines as a leaf with nodes`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			labels, err := FromLabels([]NodeLabels{tc.label})
			if err != nil {
				t.Fatal(err)
			}
			_, err = Merge(mergeFile(t), labels)
			if err == nil || !strings.Contains(err.Error(), tc.want) || !errs.IsInvalid(err) {
				t.Errorf("error %v, want an invalid-spec error containing %q", err, tc.want)
			}
		})
	}
}
