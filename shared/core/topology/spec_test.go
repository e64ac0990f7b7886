package topology

import "testing"

func TestValidateRejects(t *testing.T) {
	leaf := func(name string, nodes ...string) SwitchSpec { return SwitchSpec{Name: name, Nodes: nodes} }
	parent := func(name string, children ...string) SwitchSpec { return SwitchSpec{Name: name, Children: children} }
	for _, tc := range []struct {
		name string
		spec Spec
		want string
	}{
		{"node under two leaves", Spec{Switches: []SwitchSpec{leaf("l1", "n1"), leaf("l2", "n1")}},
			`node "n1" is under two leaf switches, "l1" and "l2"`},
		{"node twice under one leaf", Spec{Switches: []SwitchSpec{leaf("l1", "n1", "n1")}},
			`switch "l1" lists node "n1" twice`},
		{"cycle", Spec{Switches: []SwitchSpec{parent("a", "b"), parent("b", "c"), parent("c", "a")}},
			`switch cycle (each is a child of the next): a -> c -> b -> a`},
		{"self cycle", Spec{Switches: []SwitchSpec{parent("a", "a")}},
			`switch cycle (each is a child of the next): a -> a`},
		{"cycle beside a valid tree", Spec{Switches: []SwitchSpec{parent("top", "l"), leaf("l", "n"), parent("x", "y"), parent("y", "x")}},
			`x -> y -> x`},
		{"unknown child", Spec{Switches: []SwitchSpec{parent("s", "l1", "l9"), leaf("l1", "n1")}},
			`switch "s": unknown child switch "l9"`},
		{"duplicate switch", Spec{Switches: []SwitchSpec{leaf("l1", "n1"), leaf("l1", "n2")}},
			`duplicate switch "l1"`},
		{"two parents", Spec{Switches: []SwitchSpec{parent("s1", "l"), parent("s2", "l"), leaf("l", "n")}},
			`switch "l" is a child of both "s1" and "s2"`},
		{"child listed twice", Spec{Switches: []SwitchSpec{parent("s", "l", "l"), leaf("l", "n")}},
			`switch "s" lists child "l" twice`},
		{"nodes and children", Spec{Switches: []SwitchSpec{{Name: "s", Children: []string{"l"}, Nodes: []string{"n"}}, leaf("l", "m")}},
			`switch "s" lists both child switches and nodes`},
		{"unnamed switch", Spec{Switches: []SwitchSpec{leaf("l1", "n1"), leaf("", "n2")}},
			`switch #2 has no name`},
		{"empty node name", Spec{Switches: []SwitchSpec{leaf("l1", "")}},
			`switch "l1" lists an empty node name`},
		{"node in two blocks", Spec{Blocks: []BlockSpec{{Name: "b1", Nodes: []string{"n1"}}, {Name: "b2", Nodes: []string{"n1"}}}},
			`node "n1" is in two blocks, "b1" and "b2"`},
		{"duplicate block", Spec{Blocks: []BlockSpec{{Name: "b1"}, {Name: "b1"}}},
			`duplicate block "b1"`},
		{"unnamed block", Spec{Blocks: []BlockSpec{{Nodes: []string{"n1"}}}},
			`block #1 has no name`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.spec.Validate()
			wantInvalid(t, err, tc.want)
			if topo, err := New(tc.spec); topo != nil || err == nil {
				t.Errorf("New accepted what Validate rejects")
			}
		})
	}
}

func TestValidateAccepts(t *testing.T) {
	for name, spec := range map[string]Spec{
		"empty":                {},
		"blocks only":          {Blocks: []BlockSpec{{Name: "b", Nodes: []string{"n1", "n2"}}}},
		"leaf without nodes":   {Switches: []SwitchSpec{{Name: "s", Children: []string{"l"}}, {Name: "l"}}},
		"switch named as node": {Switches: []SwitchSpec{{Name: "x", Nodes: []string{"x"}}}},
	} {
		if err := spec.Validate(); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
}
