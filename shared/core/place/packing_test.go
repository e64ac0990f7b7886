package place_test

import (
	"testing"

	"github.com/lockstep-dev/lockstep/shared/core/place"
	pt "github.com/lockstep-dev/lockstep/shared/core/place/placetest"
)

// Fragmentation-aware packing: among placements on equally few leaves at
// the same level, the one that breaks the fewest whole domains (idle
// leaves, then idle spines, then idle nodes) wins, whatever the seed;
// ties between equally good answers are the seed's.
func TestPackingKeepsWholeDomains(t *testing.T) {
	partly := func(name, leaf, spine string, used int) *pt.NodeBuilder {
		return pt.MakeNode(name).Leaf(leaf).Spine(spine).Used(used)
	}
	for _, c := range []struct {
		name    string
		nodes   []*pt.NodeBuilder
		gang    *pt.GangBuilder
		perLeaf map[string]int
		nodeSet []string
	}{
		{
			// l1 has one idle node (and one full), l2 two half-used nodes:
			// a 1-GPU job fills a fragment rather than break the idle node
			// an 8-GPU job could use. Before: l1, the leaf with fewer
			// eligible nodes.
			name: "a fragment before an idle node",
			nodes: []*pt.NodeBuilder{
				partly("a1", "l1", "s", 0), partly("a2", "l1", "s", 8),
				partly("b1", "l2", "s", 4), partly("b2", "l2", "s", 4),
			},
			gang:    pt.MakeGang(1, 1),
			perLeaf: map[string]int{"l2": 1},
		},
		{
			// Spine s1 is idle; s2 has an idle leaf and a busy one: a
			// 2-node gang takes the idle leaf under the busy spine and keeps
			// s1 whole. Before: either, by seed.
			name:    "a whole spine kept for a bigger gang",
			nodes:   nodes(leaf("a", "s1", 2, 0), leaf("b", "s2", 2, 0), leaf("c", "s2", 2, 2)),
			gang:    pt.MakeGang(2, 8),
			perLeaf: map[string]int{"b": 2},
		},
		{
			// Two leaves of four eligible nodes: w idle, p with a fifth,
			// busy node. A 6-node gang takes q's two and four of p, keeping
			// w whole. Before: w or p, by seed.
			name:    "spread over partly used leaves, not a whole one",
			nodes:   nodes(leaf("w", "s", 4, 0), leaf("p", "s", 5, 1), leaf("q", "s", 4, 2)),
			gang:    pt.MakeGang(6, 8),
			perLeaf: map[string]int{"q": 2, "p": 4},
		},
		{
			// The same within a required spine (bestAmong).
			name:    "spread over partly used leaves within a required spine",
			nodes:   nodes(leaf("w", "s", 4, 0), leaf("p", "s", 5, 1), leaf("q", "s", 4, 2), leaf("z", "t", 8, 4)),
			gang:    pt.MakeGang(6, 8).Required(place.LevelSpine),
			perLeaf: map[string]int{"q": 2, "p": 4},
		},
	} {
		t.Run(c.name, func(t *testing.T) {
			snap := pt.MakeCluster().Add(c.nodes...).Obj()
			for seed := range uint64(32) {
				res := place.Place(snap, c.gang.Obj(), now, seed)
				if res.Code != place.Placed {
					t.Fatalf("seed %d: %s: %s", seed, res.Code, res.Reason)
				}
				checkExpect(t, snap, res, expect{code: place.Placed, perLeaf: c.perLeaf, nodes: c.nodeSet})
				if t.Failed() {
					t.Fatalf("seed %d: %s", seed, res.Detail)
				}
			}
		})
	}
}
