package agent

import (
	"strings"
	"testing"

	"github.com/lockstep-dev/lockstep/shared/contract/domain"
	"github.com/lockstep-dev/lockstep/shared/plumbing/testenv"
)

// An assignment this node refuses (here a GPU it does not have) is
// reported failed at once, the field named, and nothing starts: gang
// ends or requeues the attempt now, where it used to wait out the launch
// deadline with no word of why.
func TestRefusedAssignmentIsReportedFailed(t *testing.T) {
	env := testenv.Start(t)
	epoch, _ := inProcessAgent(t, env, "small", RuntimeNone)
	reports := reportsOf(t, env, "small")
	as := shAssignment("greedy", "true")
	as.Node, as.Epoch, as.Ranks[0].GPUs = "small", epoch, []int{5}
	putAssignment(t, env, as)
	r := waitReport(t, reports, domain.ReportFailed)
	if r.JobID != "greedy" || r.Attempt != 1 || !strings.Contains(r.Reason, "node small refused its assignment") || !strings.Contains(r.Reason, "gpus") {
		t.Errorf("failed report %+v, want the refusal naming the field", r)
	}
	for _, r := range reports() {
		if r.Kind == domain.ReportStarted {
			t.Errorf("a refused assignment started: %+v", r)
		}
	}
}
