package place_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/lockstep-dev/lockstep/shared/contract/domain"
	"github.com/lockstep-dev/lockstep/shared/core/place"
	pt "github.com/lockstep-dev/lockstep/shared/core/place/placetest"
)

// A GPU withdrawn by health checks is never chosen, whatever the seed, the
// binding or the gang's size, and a release does not make it free.
func TestWithdrawnGPUsAreNeverChosen(t *testing.T) {
	gangs := map[string]*pt.GangBuilder{
		"1 GPU":             pt.MakeGang(1, 1),
		"4 GPUs, 2 ranks":   pt.MakeGang(1, 4).Tasks(2),
		"4 GPUs closest":    pt.MakeGang(1, 4).Tasks(1).Closest(),
		"2 nodes of 7 GPUs": pt.MakeGang(2, 7),
	}
	for name, g := range gangs {
		for seed := range uint64(20) {
			snap := pt.MakeCluster().Add(server("a").Withdrawn(3)).Add(server("b").Withdrawn(0, 6)).Obj()
			for range 8 { // fill the cluster
				res := place.Place(snap, g.Obj(), now, seed)
				if res.Code != place.Placed {
					break
				}
				for _, np := range res.Placement.Nodes {
					bad := map[string][]int{"a": {3}, "b": {0, 6}}[np.Node]
					for _, gpu := range np.GPUs {
						if slices.Contains(bad, gpu) {
							t.Fatalf("%s, seed %d: withdrawn GPU %d of %s chosen", name, seed, gpu, np.Node)
						}
					}
				}
				snap.Take(*res.Placement)
			}
		}
	}
	// Released GPUs come back free, the withdrawn one does not.
	snap := pt.MakeCluster().Add(server("a").Withdrawn(3)).Obj()
	snap.Release(domain.Placement{Nodes: []domain.NodePlacement{{Node: "a", GPUs: []int{2, 3}}}})
	if got := snap.Nodes[0].Free; slices.Contains(got, 3) {
		t.Errorf("release freed the withdrawn GPU: %v", got)
	}
}

// A node short of GPUs because some are withdrawn says so; the gang waits
// (an operator's resume returns them) rather than being unresolvable, and
// a node with every GPU withdrawn simply has none free.
func TestWithdrawnGPUsExplained(t *testing.T) {
	snap := pt.MakeCluster().Add(server("a").Withdrawn(3)).Add(server("b").Withdrawn(0, 1, 2, 3, 4, 5, 6, 7)).Obj()
	if len(snap.Nodes[1].Free) != 0 {
		t.Fatalf("all withdrawn, yet free: %v", snap.Nodes[1].Free)
	}
	res := place.Place(snap, pt.MakeGang(1, 8).Obj(), now, 0)
	if res.Code != place.Wait {
		t.Fatalf("%s: %s", res.Code, res.Detail)
	}
	if !strings.Contains(res.Detail, "withdrawn by health checks") {
		t.Errorf("detail does not name the withdrawal: %s", res.Detail)
	}
	if res := place.Place(snap, pt.MakeGang(1, 7).Obj(), now, 0); res.Code != place.Placed || res.Placement.Nodes[0].Node != "a" {
		t.Errorf("7 GPUs: %s %s", res.Code, res.Detail)
	}
}
