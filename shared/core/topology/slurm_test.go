package topology

import (
	"reflect"
	"strings"
	"testing"
)

func TestLoadSlurm(t *testing.T) {
	const conf = `# topology.conf for a small DGX pod
SwitchName=s0 Nodes=dgx[01-03] LinkSpeed=100   # leaf
switchname=s1 nodes=dgx[04-05],dgx07
SWITCHNAME=s2 \
    Switches=s[0-1] \
    LinkSpeed=400

# NVLink blocks
BlockName=b1 Nodes=dgx[01-02]
BlockName=b2 Nodes=dgx[04-05]
BlockSizes=2,4
`
	topo, err := LoadSlurm(strings.NewReader(conf))
	if err != nil {
		t.Fatal(err)
	}
	want := Spec{
		Switches: []SwitchSpec{
			{Name: "s0", Nodes: []string{"dgx01", "dgx02", "dgx03"}},
			{Name: "s1", Nodes: []string{"dgx04", "dgx05", "dgx07"}},
			{Name: "s2", Children: []string{"s0", "s1"}},
		},
		Blocks: []BlockSpec{
			{Name: "b1", Nodes: []string{"dgx01", "dgx02"}},
			{Name: "b2", Nodes: []string{"dgx04", "dgx05"}},
		},
	}
	if got := topo.Spec(); !reflect.DeepEqual(got, want) {
		t.Errorf("got  %+v\nwant %+v", got, want)
	}
}

func TestLoadSlurmContinuationAtEOF(t *testing.T) {
	// The last line may end in '\' with no newline after it.
	topo, err := LoadSlurm(strings.NewReader("SwitchName=s0 \\\nNodes=n[1-2] \\"))
	if err != nil {
		t.Fatal(err)
	}
	if leaf, _ := topo.Leaf("n2"); leaf != "s0" {
		t.Errorf("Leaf(n2) = %q, want s0", leaf)
	}
}

func TestLoadSlurmRejects(t *testing.T) {
	for _, tc := range []struct{ name, conf, want string }{
		{"unknown key", "SwitchName=s0 Nodes=n1\nSwitchName=s1 Node=n2\n", `line 2: unknown key "Node"`},
		{"not key=value", "SwitchName=s0 n1\n", `line 1: "n1" is not Key=Value`},
		{"no name", "Nodes=n[1-2]\n", "line 1: line has neither SwitchName= nor BlockName="},
		{"both names", "SwitchName=s0 BlockName=b0 Nodes=n1\n", "not both"},
		{"repeated key", "SwitchName=s0 Nodes=n1 nodes=n2\n", "key nodes given twice"},
		{"empty value", "SwitchName=s0 Nodes=\n", "key Nodes has no value"},
		{"bad link speed", "SwitchName=s0 Nodes=n1 LinkSpeed=fast\n", `switch "s0": LinkSpeed=fast is not a number`},
		{"malformed hostlist", "# c\nSwitchName=s0 Nodes=n[01-04\n", `line 2: switch "s0": Nodes: hostlist "n[01-04": '[' without ']'`},
		{"malformed switches", "SwitchName=s2 Switches=s[1-0]\n", `switch "s2": Switches: hostlist "s[1-0]"`},
		{"continuation keeps first line number", "\nSwitchName=s0 \\\n Nodes=n1 \\\n Bogus=1\n", "line 2: unknown key"},
		{"block without nodes", "BlockName=b1\n", `block "b1" has no Nodes=`},
		{"block with switch keys", "BlockName=b1 Nodes=n1 Switches=s1\n", `block "b1": only Nodes= may follow BlockName=`},
		{"empty file", "# nothing here\n\n", "no SwitchName or BlockName lines"},
		{"duplicate switch", "SwitchName=s0 Nodes=n1\nSwitchName=s0 Nodes=n2\n", `duplicate switch "s0"`},
		{"unknown child", "SwitchName=s2 Switches=s[0-1]\nSwitchName=s0 Nodes=n1\n", `switch "s2": unknown child switch "s1"`},
		{"node under two leaves", "SwitchName=s0 Nodes=n[1-3]\nSwitchName=s1 Nodes=n3\n", `node "n3" is under two leaf switches`},
		{"cycle", "SwitchName=a Switches=b\nSwitchName=b Switches=a\n", "switch cycle"},
		{"node in two blocks", "BlockName=b1 Nodes=n[1-2]\nBlockName=b2 Nodes=n2\n", `node "n2" is in two blocks`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := LoadSlurm(strings.NewReader(tc.conf))
			wantInvalid(t, err, tc.want)
		})
	}
}
