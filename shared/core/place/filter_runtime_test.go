package place_test

import (
	"strings"
	"testing"
	"time"

	"github.com/lockstep-dev/lockstep/shared/contract/domain"
	"github.com/lockstep-dev/lockstep/shared/core/place"
	"github.com/lockstep-dev/lockstep/shared/core/place/placetest"
)

// A container job lands only on nodes whose agent runs an engine, and is
// Unschedulable (never Wait) on a cluster without one; a bare job goes
// anywhere.
func TestPlaceContainerRuntime(t *testing.T) {
	mixed := placetest.MakeCluster().Add(
		placetest.MakeNode("bare-1"),
		placetest.MakeNode("engine-1").Runtime(domain.ContainerRuntimeDocker),
		placetest.MakeNode("bare-2"),
	).Obj()
	res := place.Place(mixed.Clone(), placetest.MakeGang(1, 8).Container().Obj(), time.Unix(0, 0), 1)
	if res.Code != place.Placed || res.Placement.Nodes[0].Node != "engine-1" {
		t.Errorf("container job: %s %s, want on engine-1", res.Code, res.Reason)
	}
	res = place.Place(mixed.Clone(), placetest.MakeGang(2, 8).Container().Obj(), time.Unix(0, 0), 1)
	if res.Code != place.Unschedulable || !strings.Contains(res.Detail+res.Reason, "without a container runtime") {
		t.Errorf("2-node container job on 1 engine node: %s %s / %s, want unschedulable naming the runtime", res.Code, res.Reason, res.Detail)
	}
	res = place.Place(mixed.Clone(), placetest.MakeGang(3, 8).Obj(), time.Unix(0, 0), 1)
	if res.Code != place.Placed {
		t.Errorf("bare job: %s %s, want placed on all three", res.Code, res.Reason)
	}
	bare := placetest.MakeCluster().Add(placetest.MakeNode("bare-1"), placetest.MakeNode("bare-2")).Obj()
	res = place.Place(bare.Clone(), placetest.MakeGang(1, 1).Container().Obj(), time.Unix(0, 0), 1)
	if res.Code != place.Unschedulable {
		t.Errorf("container job on a cluster without engines: %s %s, want unschedulable", res.Code, res.Reason)
	}
}
