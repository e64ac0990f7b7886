package place_test

import (
	"strings"
	"testing"
	"time"

	"github.com/lockstep-dev/lockstep/shared/core/place"
	"github.com/lockstep-dev/lockstep/shared/core/place/placetest"
)

func TestGPUTypeMatches(t *testing.T) {
	for _, tc := range []struct {
		model, want string
		ok          bool
	}{
		{"NVIDIA H100 80GB HBM3", "H100", true},
		{"NVIDIA H100 80GB HBM3", "h100", true},
		{"NVIDIA H100 80GB HBM3", "H100 80GB", true},
		{"NVIDIA H100 80GB HBM3", "H10", false},
		{"NVIDIA H100 80GB HBM3", "80GB H100", false},
		{"NVIDIA H100 80GB HBM3", "H100 NVL", false},
		{"NVIDIA A100-SXM4-80GB", "A100", true},
		{"NVIDIA A100-SXM4-80GB", "a100-sxm4", true},
		{"NVIDIA L40S", "L40", false},
		{"", "H100", false},
		{"NVIDIA H100 80GB HBM3", "-", false},
	} {
		if got := place.GPUTypeMatches(tc.model, tc.want); got != tc.ok {
			t.Errorf("GPUTypeMatches(%q, %q) = %v", tc.model, tc.want, got)
		}
	}
}

// A gang asking for a GPU model or memory lands only where both hold, and
// is Unschedulable (never Wait) where no node has them.
func TestPlaceGPUModel(t *testing.T) {
	snap := placetest.MakeCluster().Add(
		placetest.MakeNode("h100").GPUModel("NVIDIA H100 80GB HBM3", 81559),
		placetest.MakeNode("l40s").GPUModel("NVIDIA L40S", 46068),
		placetest.MakeNode("sim"), // simulated: no model, no memory
	).Obj()
	for _, tc := range []struct {
		gpuType string
		minMiB  int64
		node    string // "" unschedulable
	}{
		{"H100", 0, "h100"},
		{"l40s", 0, "l40s"},
		{"", 80000, "h100"},
		{"L40S", 80000, ""},
		{"A100", 0, ""},
	} {
		r := placetest.MakeGang(1, 8).GPUType(tc.gpuType, tc.minMiB).Obj()
		res := place.Place(snap.Clone(), r, time.Unix(0, 0), 1)
		if tc.node == "" {
			if res.Code != place.Unschedulable || !strings.Contains(res.Detail+res.Reason, "without") {
				t.Errorf("%q %d: %s %s / %s", tc.gpuType, tc.minMiB, res.Code, res.Reason, res.Detail)
			}
			continue
		}
		if res.Code != place.Placed || res.Placement.Nodes[0].Node != tc.node {
			t.Errorf("%q %d: %s %s, want on %s", tc.gpuType, tc.minMiB, res.Code, res.Reason, tc.node)
		}
	}
}
