package agent

import (
	"strings"
	"testing"
	"time"

	"github.com/lockstep-dev/lockstep/services/agent/health"
)

// A failed check withdraws the GPU once; a later healthy poll does not
// return it; a node-level reason withdraws every GPU; only a resume after
// the withdrawal clears it.
func TestWithdrawIsStickyUntilResume(t *testing.T) {
	t0 := time.Date(2026, 12, 3, 6, 0, 0, 0, time.UTC)
	gpu := func(i int, reasons ...string) health.GPUState {
		return health.GPUState{Index: i, UUID: "GPU-" + string(rune('a'+i)), Reasons: reasons}
	}
	bad := health.Report{At: t0, GPUs: []health.GPUState{gpu(0), gpu(1, "2 uncorrectable ECC errors"), gpu(9, "fell off the bus")}}
	faults, added, notes := withdraw(nil, bad, 4)
	if len(faults) != 1 || len(added) != 1 || faults[0].GPU != 1 || !faults[0].Since.Equal(t0) || !strings.Contains(faults[0].Reason, "gpu 1 (GPU-b): 2 uncorrectable ECC") {
		t.Fatalf("first poll: %+v %+v", faults, added)
	}
	if len(notes) != 1 || !strings.Contains(notes[0], "not one of the node's 4") {
		t.Errorf("GPU 9 not noted: %q", notes)
	}
	again, added, _ := withdraw(faults, health.Report{At: t0.Add(time.Minute), GPUs: []health.GPUState{gpu(0), gpu(1, "other")}}, 4)
	if len(added) != 0 || len(again) != 1 || !again[0].Since.Equal(t0) {
		t.Errorf("still failing: re-added %+v", added)
	}
	healed, added, _ := withdraw(faults, health.Report{At: t0.Add(2 * time.Minute), GPUs: []health.GPUState{gpu(0), gpu(1)}}, 4)
	if len(added) != 0 || len(healed) != 1 {
		t.Errorf("a passing check returned the GPU: %+v", healed)
	}
	node, added, _ := withdraw(faults, health.Report{At: t0.Add(3 * time.Minute), Node: []string{"health-check program: exit 1"}}, 4)
	if len(node) != 4 || len(added) != 3 || !strings.HasPrefix(added[0].Reason, "node: health-check program") {
		t.Errorf("node reason: %+v", node)
	}
	if _, _, notes := withdraw(nil, health.Report{At: t0, Node: []string{"x"}}, 0); len(notes) != 1 {
		t.Errorf("a GPU-less node's failure is not noted: %q", notes)
	}
	long, _, _ := withdraw(nil, health.Report{At: t0, GPUs: []health.GPUState{gpu(0, strings.Repeat("é", 5000))}}, 1)
	if len(long[0].Reason) > maxFaultReason {
		t.Errorf("reason of %d bytes", len(long[0].Reason))
	}

	kept, cleared := resumed(node, time.Time{})
	if len(kept) != 4 || len(cleared) != 0 {
		t.Errorf("no resume cleared something")
	}
	kept, cleared = resumed(node, t0.Add(time.Minute))
	if len(kept) != 3 || len(cleared) != 1 || cleared[0].GPU != 1 {
		t.Errorf("resume between the withdrawals: kept %+v cleared %+v", kept, cleared)
	}
}
