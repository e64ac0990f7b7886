package topology

import (
	"reflect"
	"strings"
	"testing"
)

func TestLoadYAML(t *testing.T) {
	const doc = `
switches:
  - name: core
    children: [spine-1, spine-2]
  - name: spine-1
    children: ["leaf-[1-2]"]
  - name: spine-2
    children: [leaf-3]
  - name: leaf-1
    nodes: ["node-[01-02]"]
  - name: leaf-2
    nodes: ["node-[03-04]", node-x]
  - name: leaf-3
    nodes: []
blocks:
  - name: nvl-1
    nodes: ["node-[01-04]"]
`
	topo, err := LoadYAML(strings.NewReader(doc))
	if err != nil {
		t.Fatal(err)
	}
	want := Spec{
		Switches: []SwitchSpec{
			{Name: "core", Children: []string{"spine-1", "spine-2"}},
			{Name: "leaf-1", Nodes: []string{"node-01", "node-02"}},
			{Name: "leaf-2", Nodes: []string{"node-03", "node-04", "node-x"}},
			{Name: "leaf-3"},
			{Name: "spine-1", Children: []string{"leaf-1", "leaf-2"}},
			{Name: "spine-2", Children: []string{"leaf-3"}},
		},
		Blocks: []BlockSpec{{Name: "nvl-1", Nodes: []string{"node-01", "node-02", "node-03", "node-04"}}},
	}
	if got := topo.Spec(); !reflect.DeepEqual(got, want) {
		t.Errorf("got  %+v\nwant %+v", got, want)
	}
}

func TestLoadYAMLRejects(t *testing.T) {
	for _, tc := range []struct{ name, doc, want string }{
		{"unknown switch field names the switch", "switches:\n  - name: leaf-1\n    node: [a]\n",
			`switch "leaf-1": line 3: unknown field "node" (allowed: name, children, nodes)`},
		{"unknown field before the name", "switches:\n  - chidren: [x]\n    name: spine\n",
			`switch "spine": line 2: unknown field "chidren"`},
		{"unknown block field", "blocks:\n  - name: b1\n    hosts: [a]\n",
			`block "b1": line 3: unknown field "hosts"`},
		{"unknown top-level field", "switchs:\n  - name: a\n", "field switchs not found"},
		{"switch not a mapping", "switches:\n  - leaf-1\n", "line 2: each switch must be a mapping"},
		{"wrong type names the switch", "switches:\n  - name: l\n    nodes: a\n", `switch "l": yaml: unmarshal errors:`},
		{"malformed hostlist names the switch", "switches:\n  - name: leaf-1\n    nodes: [\"n[1-\"]\n",
			`switch "leaf-1": nodes: hostlist "n[1-": '[' without ']'`},
		{"a hostlist naming no host", "switches:\n  - name: leaf-1\n    nodes: [\", ,\"]\n", `switch "leaf-1": nodes: hostlist ", ," names no host`},
		{"bad child hostlist", "switches:\n  - name: s\n    children: [\"l[2-1]\"]\n",
			`switch "s": children: hostlist "l[2-1]"`},
		{"bad block hostlist", "blocks:\n  - name: b\n    nodes: [\"n[x]\"]\n", `block "b": nodes: hostlist`},
		{"unnamed switch", "switches:\n  - nodes: [a]\n", "switch #1 has no name"},
		{"empty", "", "empty"},
		{"nothing defined", "switches: []\n", "defines no switches and no blocks"},
		{"unknown child", "switches:\n  - name: s\n    children: [l1]\n", `switch "s": unknown child switch "l1"`},
		{"duplicate switch", "switches:\n  - name: s\n  - name: s\n", `duplicate switch "s"`},
		{"node under two leaves", "switches:\n  - name: a\n    nodes: [\"n[1-2]\"]\n  - name: b\n    nodes: [n2]\n",
			`node "n2" is under two leaf switches, "a" and "b"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := LoadYAML(strings.NewReader(tc.doc))
			wantInvalid(t, err, tc.want)
		})
	}
}
