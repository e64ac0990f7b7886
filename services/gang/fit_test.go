package gang

import (
	"slices"
	"strings"
	"testing"

	"github.com/lockstep-dev/lockstep/shared/contract/domain"
	"github.com/lockstep-dev/lockstep/shared/contract/jobspec"
)

// fitSpec is 2 nodes × 4 GPUs in 2 ranks per node.
var fitSpec = jobspec.Spec{ID: "j", Gang: jobspec.Gang{Nodes: 2, GPUsPerNode: 4, TasksPerNode: 2}}

// fitPlacement is what placement proposes for fitSpec on n0 and n1.
func fitPlacement() domain.Placement {
	return domain.Placement{MasterAddr: "10.0.0.0", MasterPort: 29500, Nodes: []domain.NodePlacement{
		{Node: "n0", NodeRank: 0, GPUs: []int{0, 1, 2, 3}, Ranks: []domain.Rank{
			{Rank: 0, LocalRank: 0, GPUs: []int{0, 1}}, {Rank: 1, LocalRank: 1, GPUs: []int{2, 3}}}},
		{Node: "n1", NodeRank: 1, GPUs: []int{4, 5, 6, 7}, Ranks: []domain.Rank{
			{Rank: 2, LocalRank: 0, GPUs: []int{4, 5}}, {Rank: 3, LocalRank: 1, GPUs: []int{6, 7}}}},
	}}
}

func fitNodes() map[string]nodeView {
	return map[string]nodeView{
		"n0": {Reg: domain.Node{Name: "n0", Addr: "10.0.0.0", GPUs: 8, CPUs: 16}, Up: true},
		"n1": {Reg: domain.Node{Name: "n1", Addr: "10.0.0.1", GPUs: 8, CPUs: 16}, Up: true},
		"n2": {Reg: domain.Node{Name: "n2", Addr: "10.0.0.2", GPUs: 8}, Up: true},
	}
}

// oneCore asks for one core per rank.
func oneCore(s *jobspec.Spec) { s.Gang.CPUsPerTask = 1 }

// coresByLocalRank gives each rank the core of its local rank: distinct on
// each node, the same on every node.
func coresByLocalRank(p *domain.Placement) {
	for n := range p.Nodes {
		for r := range p.Nodes[n].Ranks {
			p.Nodes[n].Ranks[r].CPUs = []int{p.Nodes[n].Ranks[r].LocalRank}
		}
	}
}

// checkFit is the whole decision of whether a proposal's placement is one
// the job asks for; each case changes one thing of a fitting proposal.
func TestCheckFit(t *testing.T) {
	cases := []struct {
		name   string
		spec   func(*jobspec.Spec)
		place  func(*domain.Placement)
		nodes  func(map[string]nodeView)
		want   fitCode
		reason string // a substring of the reason
	}{
		{name: "fits", want: fits},
		{name: "one node too few", place: func(p *domain.Placement) { p.Nodes = p.Nodes[:1] },
			want: unfit, reason: "placement.nodes: 1 nodes, the job asks for 2"},
		{name: "node twice", place: func(p *domain.Placement) { p.Nodes[1].Node = "n0" },
			want: unfit, reason: "placement.nodes[1].node"},
		{name: "unregistered node", place: func(p *domain.Placement) { p.Nodes[1].Node = "ghost" },
			want: unfit, reason: `"ghost" is not a registered node`},
		{name: "node rank repeated", place: func(p *domain.Placement) { p.Nodes[1].NodeRank = 0 },
			want: unfit, reason: "placement.nodes[1].nodeRank"},
		{name: "more GPUs than asked", place: func(p *domain.Placement) { p.Nodes[0].GPUs = append(p.Nodes[0].GPUs, 4) },
			want: unfit, reason: "placement.nodes[0].gpus: 5 GPUs, the job asks for 4"},
		{name: "GPU index the node does not have", place: func(p *domain.Placement) {
			p.Nodes[1].GPUs[3], p.Nodes[1].Ranks[1].GPUs[1] = 8, 8
		}, want: unfit, reason: "GPU 8 is repeated or not one of node n1's 8"},
		{name: "negative GPU", place: func(p *domain.Placement) { p.Nodes[0].GPUs[0], p.Nodes[0].Ranks[0].GPUs[0] = -1, -1 },
			want: unfit, reason: "GPU -1"},
		{name: "extra rank", place: func(p *domain.Placement) {
			p.Nodes[0].Ranks = append(p.Nodes[0].Ranks, domain.Rank{Rank: 4, LocalRank: 2, GPUs: []int{0, 1}})
		}, want: unfit, reason: "placement.nodes[0].ranks: 3 ranks, the job asks for 2"},
		{name: "rank repeated across nodes", place: func(p *domain.Placement) { p.Nodes[1].Ranks[0].Rank = 0 },
			want: unfit, reason: "placement.nodes[1].ranks[0].rank: 0"},
		{name: "rank beyond the world", place: func(p *domain.Placement) { p.Nodes[1].Ranks[1].Rank = 4 },
			want: unfit, reason: "rank: 4 is out of range"},
		{name: "ranks share a GPU", place: func(p *domain.Placement) { p.Nodes[0].Ranks[1].GPUs = []int{1, 2} },
			want: unfit, reason: "GPU 1 is not the node's part of the gang or is shared"},
		{name: "rank GPU outside the node's part", place: func(p *domain.Placement) { p.Nodes[0].Ranks[1].GPUs = []int{2, 6} },
			want: unfit, reason: "GPU 6"},
		{name: "cores nobody asked for", place: func(p *domain.Placement) { p.Nodes[0].Ranks[0].CPUs = []int{0} },
			want: unfit, reason: "cores given, the job asks for none"},
		{name: "cores asked for, one out of range", spec: oneCore, place: func(p *domain.Placement) {
			coresByLocalRank(p)
			p.Nodes[1].Ranks[1].CPUs = []int{16}
		}, want: unfit, reason: "core 16 is not one of node n1's 16"},
		{name: "cores asked for, each rank its own", spec: oneCore, place: coresByLocalRank, want: fits},
		// The agent refuses, silently, an assignment whose ranks share a
		// core or name one that is not the node's (checkAssignment): the
		// gang would time out at launch.
		{name: "two ranks of a node share a core", spec: oneCore, place: func(p *domain.Placement) {
			coresByLocalRank(p)
			p.Nodes[0].Ranks[1].CPUs = []int{0}
		}, want: unfit, reason: "placement.nodes[0].ranks[1].cpus: core 0 is given to two ranks"},
		{name: "cores on a node that registers none", spec: oneCore, place: coresByLocalRank, nodes: func(m map[string]nodeView) {
			v := m["n1"]
			v.Reg.CPUs = 0
			m["n1"] = v
		}, want: unfit, reason: "placement.nodes[1].ranks[0].cpus: core 0 is not one of node n1's 0"},
		{name: "a core in a gap of the node's NUMA layout", spec: oneCore, place: coresByLocalRank, nodes: func(m map[string]nodeView) {
			v := m["n1"]
			v.Reg.NUMA = []domain.NUMANode{{ID: 0, CPUs: []int{0, 2, 3}}}
			m["n1"] = v
		}, want: unfit, reason: "placement.nodes[1].ranks[1].cpus: core 1 is not one of node n1's 3"},
		{name: "master elsewhere", place: func(p *domain.Placement) { p.MasterAddr = "evil.example" },
			want: unfit, reason: "placement.masterAddr"},
		{name: "master port outside the range", place: func(p *domain.Placement) { p.MasterPort = 22 },
			want: unfit, reason: "placement.masterPort: 22"},
		{name: "spec with no shape", spec: func(s *jobspec.Spec) { s.Gang.TasksPerNode = 0 }, want: unfit, reason: "no valid shape"},
		{name: "node down", nodes: func(m map[string]nodeView) { v := m["n1"]; v.Up = false; m["n1"] = v },
			want: unavailable, reason: "node n1 is down"},
		{name: "node drained", nodes: func(m map[string]nodeView) { v := m["n0"]; v.Drained = true; m["n0"] = v },
			want: unavailable, reason: "node n0 is drained"},
		{name: "GPU withdrawn", nodes: func(m map[string]nodeView) {
			v := m["n1"]
			v.Reg.Unhealthy = []domain.GPUFault{{GPU: 6, Reason: "gpu 6: fell off the bus"}}
			m["n1"] = v
		}, want: unavailable, reason: "GPU 6 of node n1 is withdrawn"},
		{name: "another GPU withdrawn", nodes: func(m map[string]nodeView) {
			v := m["n1"]
			v.Reg.Unhealthy = []domain.GPUFault{{GPU: 0, Reason: "gpu 0: fell off the bus"}}
			m["n1"] = v
		}, want: fits},
		{name: "unfit wins over down", place: func(p *domain.Placement) { p.MasterPort = 1 },
			nodes: func(m map[string]nodeView) { v := m["n1"]; v.Up = false; m["n1"] = v }, want: unfit},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			spec, p, nodes := fitSpec, fitPlacement(), fitNodes()
			if c.spec != nil {
				c.spec(&spec)
			}
			if c.place != nil {
				c.place(&p)
			}
			if c.nodes != nil {
				c.nodes(nodes)
			}
			got := checkFit(spec, p, nodes)
			if got.code != c.want || !strings.Contains(got.reason, c.reason) {
				t.Errorf("checkFit = %d %q, want %d containing %q", got.code, got.reason, c.want, c.reason)
			}
		})
	}
}

// Only a placement of every GPU a node registered, each once, is claimed
// as the whole node.
func TestWholeNodesAreThoseWithEveryGPU(t *testing.T) {
	nodes := map[string]nodeView{
		"a": {Reg: domain.Node{Name: "a", GPUs: 4}}, "b": {Reg: domain.Node{Name: "b", GPUs: 4}},
		"c": {Reg: domain.Node{Name: "c", GPUs: 4}}, "d": {Reg: domain.Node{Name: "d", GPUs: 4}},
	}
	p := domain.Placement{Nodes: []domain.NodePlacement{
		{Node: "a", GPUs: []int{3, 1, 0, 2}}, // every GPU, in any order
		{Node: "b", GPUs: []int{0, 1, 2}},    // three of four
		{Node: "c", GPUs: []int{0, 1, 1, 2}}, // four entries, one repeated
		{Node: "d", GPUs: []int{0, 1, 2, 4}}, // a GPU the node does not have
		{Node: "e", GPUs: []int{0}},          // a node with no view
	}}
	if got := wholeNodes(p, nodes); !slices.Equal(got, []string{"a"}) {
		t.Fatalf("wholeNodes = %v, want [a]", got)
	}
}
