package place_test

import (
	"slices"
	"testing"

	"github.com/lockstep-dev/lockstep/shared/contract/domain"
	"github.com/lockstep-dev/lockstep/shared/core/place"
	pt "github.com/lockstep-dev/lockstep/shared/core/place/placetest"
)

// The simulated 8-GPU server: GPUs 0-3 and cores 0-31 on NUMA 0, GPUs 4-7
// and cores 32-63 on NUMA 1.
func server(name string) *pt.NodeBuilder { return pt.MakeNode(name).Leaf("l").Sockets(2) }

type bindCase struct {
	name  string
	node  *pt.NodeBuilder
	gang  *pt.GangBuilder
	ranks []domain.Rank // GPUs and CPUs per local rank
}

var bindCases = []bindCase{
	{
		name: "closest: 2 ranks of 4 GPUs, 4 cores each, one per socket",
		node: server("n"), gang: pt.MakeGang(1, 8).Tasks(2).CPUs(4).Closest(),
		ranks: []domain.Rank{
			{GPUs: []int{0, 1, 2, 3}, CPUs: []int{0, 1, 2, 3}},
			{GPUs: []int{4, 5, 6, 7}, CPUs: []int{32, 33, 34, 35}},
		},
	},
	{
		name: "closest: a small gang goes to the fuller socket, keeping socket 0 whole",
		node: server("n").UsedGPUs(4, 5), gang: pt.MakeGang(1, 2).Tasks(2).CPUs(2).Closest(),
		ranks: []domain.Rank{
			{GPUs: []int{6}, CPUs: []int{32, 33}},
			{GPUs: []int{7}, CPUs: []int{34, 35}},
		},
	},
	{
		name: "closest: cores follow the free list",
		node: server("n").UsedGPUs(0, 1, 2, 3).FreeCPUs(1, 40, 41, 50, 51, 52),
		gang: pt.MakeGang(1, 2).Tasks(2).CPUs(2).Closest(),
		ranks: []domain.Rank{
			{GPUs: []int{4}, CPUs: []int{40, 41}},
			{GPUs: []int{5}, CPUs: []int{50, 51}},
		},
	},
	{
		name: "closest without cores: GPUs only",
		node: server("n").UsedGPUs(0), gang: pt.MakeGang(1, 4).Tasks(1).Closest(),
		ranks: []domain.Rank{{GPUs: []int{4, 5, 6, 7}}},
	},
	{
		name: "no binding: lowest GPUs, no cores",
		node: server("n").UsedGPUs(1), gang: pt.MakeGang(1, 4).Tasks(2),
		ranks: []domain.Rank{{GPUs: []int{0, 2}}, {GPUs: []int{3, 4}}},
	},
	{
		name: "no binding with cores: lowest free cores anywhere",
		node: server("n").FreeCPUs(3, 5, 33, 40), gang: pt.MakeGang(1, 2).Tasks(2).CPUs(2),
		ranks: []domain.Rank{{GPUs: []int{0}, CPUs: []int{3, 5}}, {GPUs: []int{1}, CPUs: []int{33, 40}}},
	},
	{
		name: "linked GPUs: a 2-GPU rank takes a bridged pair, not the lowest two",
		node: server("n").PairedGPUs().UsedGPUs(0), gang: pt.MakeGang(1, 2).Tasks(1),
		ranks: []domain.Rank{{GPUs: []int{2, 3}}},
	},
	{
		name: "linked GPUs, closest binding: the pair on the chosen socket",
		node: server("n").PairedGPUs().UsedGPUs(0, 5), gang: pt.MakeGang(1, 2).Tasks(2).CPUs(2).Closest(),
		ranks: []domain.Rank{{GPUs: []int{2}, CPUs: []int{0, 1}}, {GPUs: []int{3}, CPUs: []int{2, 3}}},
	},
	{
		name: "links all alike: the lowest GPUs, as without links",
		node: server("n").UsedGPUs(0), gang: pt.MakeGang(1, 2).Tasks(1),
		ranks: []domain.Rank{{GPUs: []int{1, 2}}},
	},
	{
		name: "a node without NUMA information is one NUMA node",
		node: pt.MakeNode("n").CPUs(8), gang: pt.MakeGang(1, 8).Tasks(2).CPUs(4).Closest(),
		ranks: []domain.Rank{{GPUs: []int{0, 1, 2, 3}, CPUs: []int{0, 1, 2, 3}}, {GPUs: []int{4, 5, 6, 7}, CPUs: []int{4, 5, 6, 7}}},
	},
}

func TestBinding(t *testing.T) {
	for _, bc := range bindCases {
		t.Run(bc.name, func(t *testing.T) {
			snap := pt.MakeCluster().Add(bc.node).Obj()
			res := place.Place(snap, bc.gang.Obj(), now, 0)
			if res.Code != place.Placed {
				t.Fatalf("%s: %s", res.Code, res.Detail)
			}
			got := res.Placement.Nodes[0].Ranks
			if len(got) != len(bc.ranks) {
				t.Fatalf("%d ranks, want %d", len(got), len(bc.ranks))
			}
			for i, rk := range got {
				if rk.LocalRank != i || !slices.Equal(rk.GPUs, bc.ranks[i].GPUs) || !slices.Equal(rk.CPUs, bc.ranks[i].CPUs) {
					t.Errorf("rank %d: GPUs %v cores %v, want GPUs %v cores %v", i, rk.GPUs, rk.CPUs, bc.ranks[i].GPUs, bc.ranks[i].CPUs)
				}
			}
		})
	}
}

// TestClosestFillsTheNode: four gangs of one rank each (1 GPU, 16 cores,
// closest) use every core of a 2-socket server; a fifth waits although 4
// GPUs are free; every rank's GPUs and cores share a socket and nothing is
// handed out twice.
func TestClosestFillsTheNode(t *testing.T) {
	snap := pt.MakeCluster().Add(server("n")).Obj()
	gang := pt.MakeGang(1, 1).Tasks(1).CPUs(16).Closest().Obj()
	gpus, cpus := map[int]bool{}, map[int]bool{}
	numa := snap.Nodes[0].Node.NUMA
	for i := range 4 {
		res := place.Place(snap, gang, now, uint64(i))
		if res.Code != place.Placed {
			t.Fatalf("gang %d: %s %s", i, res.Code, res.Detail)
		}
		rk := res.Placement.Nodes[0].Ranks[0]
		socket := -1
		for _, d := range numa {
			if slices.Contains(d.GPUs, rk.GPUs[0]) {
				socket = d.ID
			}
		}
		for _, g := range rk.GPUs {
			if gpus[g] || !slices.Contains(numa[socket].GPUs, g) {
				t.Fatalf("gang %d: GPU %d reused or off socket %d", i, g, socket)
			}
			gpus[g] = true
		}
		for _, c := range rk.CPUs {
			if cpus[c] || !slices.Contains(numa[socket].CPUs, c) {
				t.Fatalf("gang %d: core %d reused or off socket %d", i, c, socket)
			}
			cpus[c] = true
		}
		snap.Take(*res.Placement)
	}
	if res := place.Place(snap, gang, now, 9); res.Code != place.Wait {
		t.Fatalf("fifth gang: %s, want Wait (4 GPUs left but no cores)", res.Code)
	}
	if free := snap.Nodes[0].FreeCPUs; len(free) != 0 || free == nil {
		t.Fatalf("free cores after filling the node: %v (want empty, not nil)", free)
	}
}
