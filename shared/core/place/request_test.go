package place_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/lockstep-dev/lockstep/shared/contract/jobspec"
	"github.com/lockstep-dev/lockstep/shared/core/place"
	pt "github.com/lockstep-dev/lockstep/shared/core/place/placetest"
)

// RequestFor reads a spec's filled fields, and a job record written
// before Parse filled waitForSwitches reads as it did: Slurm's 5m.
func TestRequestFor(t *testing.T) {
	parsed, err := jobspec.Parse([]byte(`{"gang":{"nodes":2,"gpusPerNode":8,"gpuBind":"closest","cpusPerTask":4},"command":["x"],
		"topology":{"maxSwitches":1,"preferred":"spine","preferredWait":"90s"}}`))
	if err != nil {
		t.Fatal(err)
	}
	var old jobspec.Spec
	if err := json.Unmarshal([]byte(`{"queue":"default","gang":{"nodes":2,"gpusPerNode":8,"tasksPerNode":8,"gpuBind":"closest","cpusPerTask":4},
		"command":["x"],"topology":{"maxSwitches":1,"preferred":"spine","preferredWait":"90s"}}`), &old); err != nil {
		t.Fatal(err)
	}
	want := place.Request{JobID: "j", Nodes: 2, GPUsPerNode: 8, TasksPerNode: 8, CPUsPerTask: 4, GPUBind: place.BindClosest,
		Topology: place.Constraints{MaxSwitches: 1, WaitForSwitches: 5 * time.Minute, Preferred: place.LevelSpine, PreferredWait: 90 * time.Second}}
	for name, s := range map[string]jobspec.Spec{"parsed": parsed, "old record": old} {
		if got := place.RequestFor("j", s); got != want {
			t.Errorf("%s:\n got  %+v\n want %+v", name, got, want)
		}
	}
}

// The request takes filled fields: no rank count is guessed.
func TestRequestWithoutRanksIsUnschedulable(t *testing.T) {
	snap := pt.MakeCluster().Add(pt.MakeNode("n").Leaf("l")).Obj()
	res := place.Place(snap, pt.MakeGang(1, 8).Tasks(0).Obj(), time.Time{}, 1)
	if res.Code != place.Unschedulable || !strings.Contains(res.Reason+res.Detail, "at least one rank per node") {
		t.Errorf("got %v: %s / %s", res.Code, res.Reason, res.Detail)
	}
}
