package place_test

import (
	"reflect"
	"testing"
	"time"

	"github.com/lockstep-dev/lockstep/shared/core/place"
	"github.com/lockstep-dev/lockstep/shared/core/place/placetest"
)

// Results cached by shape answer every request of that shape, so the
// shape must hold every Request field a node filter reads. The fields
// left out are what the search, not the filters, reads.
func TestShapeHoldsWhatFiltersRead(t *testing.T) {
	notFiltered := map[string]bool{"JobID": true, "Nodes": true, "Topology": true, "WaitSince": true}
	shape := reflect.TypeFor[place.Shape]()
	for f := range reflect.TypeFor[place.Request]().Fields() {
		if _, in := shape.FieldByName(f.Name); in == notFiltered[f.Name] {
			t.Errorf("Request.%s: in Shape %v, but listed as read by no filter %v", f.Name, in, notFiltered[f.Name])
		}
	}
}

// The "could it ever fit" view is cached on the index, which clones
// share (one snapshot here): a busy cluster's answer for a plain gang must not be given to a
// gang of the same size asking for a GPU model (or a container engine)
// that no node has, nor the other way round.
func TestCapacityViewIsPerShape(t *testing.T) {
	busy := func() *place.Snapshot {
		return placetest.MakeCluster().Add(
			placetest.MakeNode("a1").GPUModel("NVIDIA A100-SXM4-80GB", 81920).Used(8),
			placetest.MakeNode("a2").GPUModel("NVIDIA A100-SXM4-80GB", 81920).Used(8),
		).Obj()
	}
	at := time.Unix(0, 0)
	plain := placetest.MakeGang(1, 8).Obj()
	for _, asks := range []place.Request{
		placetest.MakeGang(1, 8).GPUType("H100", 0).Obj(),
		placetest.MakeGang(1, 8).Container().Obj(),
	} {
		for _, plainFirst := range []bool{true, false} {
			snap := busy()
			order := []place.Request{asks, plain}
			if plainFirst {
				order = []place.Request{plain, asks}
			}
			for _, r := range order {
				res := place.Place(snap, r, at, 1)
				if want := r.Shape() != plain.Shape(); (res.Code == place.Unschedulable) != want {
					t.Errorf("%+v (plain first %v): %s %s / %s, want Unschedulable %v", r, plainFirst, res.Code, res.Reason, res.Detail, want)
				}
			}
		}
	}
}
