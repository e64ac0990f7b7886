package topology_test

import (
	"fmt"
	"os"
	"strings"

	"github.com/lockstep-dev/lockstep/shared/core/topology"
)

// The YAML example from the package documentation.
func ExampleLoadYAML() {
	topo, err := topology.LoadYAML(strings.NewReader(`
switches:
  - name: core
    children: [spine-1, spine-2]
  - name: spine-1
    children: ["leaf-[1-2]"]
  - name: spine-2
    children: [leaf-3]
  - name: leaf-1
    nodes: ["node-[01-04]"]
  - name: leaf-2
    nodes: ["node-[05-08]"]
  - name: leaf-3
    nodes: [node-09, node-10]
blocks:                 # optional
  - name: nvl-1
    nodes: ["node-[01-08]"]
`))
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(topo.Path("node-05"))
	fmt.Println(topo.LowestCommonLevel([]string{"node-01", "node-04"}))
	fmt.Println(topo.LowestCommonLevel([]string{"node-01", "node-05"}))
	fmt.Println(topo.LowestCommonLevel([]string{"node-01", "node-09"}))
	fmt.Println(topo.LowestCommonLevel([]string{"node-01", "not-in-file"}))
	_ = topo.Render(os.Stdout, func(string) (free, total int) { return 8, 8 })
	// Output:
	// [leaf-2 spine-1 core]
	// 0
	// 1
	// 2
	// 3
	// SWITCH      LEVEL  NODES  FREE/TOTAL GPUS
	// core        2      10     80/80
	//   spine-1   1      8      64/64
	//     leaf-1  0      4      32/32
	//     leaf-2  0      4      32/32
	//   spine-2   1      2      16/16
	//     leaf-3  0      2      16/16
	//
	// BLOCK  NODES  FREE/TOTAL GPUS
	// nvl-1  8      64/64
}

// The Slurm topology.conf examples from the package documentation.
func ExampleLoadSlurm() {
	topo, err := topology.LoadSlurm(strings.NewReader(`
# two leaf switches and a spine
SwitchName=s0 Nodes=dgx[01-16] LinkSpeed=100
SwitchName=s1 Nodes=dgx[17-32]
SwitchName=s2 Switches=s[0-1]
BlockName=b1 Nodes=dgx[01-04]
BlockName=b2 Nodes=dgx[05-08]
BlockSizes=4,8          # accepted and ignored
`))
	if err != nil {
		fmt.Println(err)
		return
	}
	leaf, _ := topo.Leaf("dgx17")
	block, _ := topo.Block("dgx06")
	fmt.Println(leaf, block, topo.Roots(), len(topo.Nodes("s2")))
	// Output: s1 b2 [s2] 32
}
