package place_test

import (
	"strings"
	"testing"
	"time"

	"github.com/lockstep-dev/lockstep/shared/contract/domain"
	"github.com/lockstep-dev/lockstep/shared/core/place"
	pt "github.com/lockstep-dev/lockstep/shared/core/place/placetest"
)

// TestCapacityCacheIgnoresNodeCount: the "could it ever fit" evaluation is
// cached per node shape, and a later request of the same shape but another
// node count must not inherit the first one's count. Leaves of two nodes,
// one node of each busy: a 5-node gang can never fit one leaf; a 2-node
// gang can, so within its wait it must wait for one, not be told its
// maxSwitches "can never be met" and be spread at once.
func TestCapacityCacheIgnoresNodeCount(t *testing.T) {
	snap := pt.MakeCluster().Add(
		pt.MakeNode("a1").Leaf("la").Spine("s1"), pt.MakeNode("a2").Leaf("la").Spine("s1"),
		pt.MakeNode("b1").Leaf("lb").Spine("s1"), pt.MakeNode("b2").Leaf("lb").Spine("s1"),
		pt.MakeNode("c1").Leaf("lc").Spine("s1"),
	).Obj()
	for _, n := range []string{"a1", "b1"} {
		snap.Take(domain.Placement{Nodes: []domain.NodePlacement{{Node: n, GPUs: []int{0, 1, 2, 3, 4, 5, 6, 7}}}})
	}
	now := time.Date(2026, 12, 3, 8, 0, 0, 0, time.UTC)
	big := place.Place(snap, pt.MakeGang(5, 8).ID("big").MaxSwitches(1, time.Hour).WaitSince(now).Obj(), now, 1)
	if big.Code == place.Placed {
		t.Fatalf("big placed on 3 free nodes: %+v", big)
	}
	small := place.Place(snap, pt.MakeGang(2, 8).ID("small").MaxSwitches(1, time.Hour).WaitSince(now).Obj(), now, 1)
	if small.Code != place.Wait || small.ReasonCode != place.ReasonWaitingForSwitches {
		t.Fatalf("2-node gang after a 5-node one: %s %s %q, want to wait for one leaf", small.Code, small.ReasonCode, small.Detail)
	}
	if strings.Contains(small.Detail, "5 nodes") {
		t.Errorf("the 2-node gang's explanation speaks of 5 nodes: %q", small.Detail)
	}
}
