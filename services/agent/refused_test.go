package agent

import (
	"context"
	"strings"
	"testing"

	"github.com/lockstep-dev/lockstep/shared/contract/domain"
	"github.com/lockstep-dev/lockstep/shared/plumbing/store"
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

// An assignment whose record names another job than its key says nothing
// trustworthy about that job: refused, and reported for neither. A
// refusal of this node's own afterwards is still reported (the agent is
// alive and reading).
func TestAssignmentNamingAnotherJobIsNotReported(t *testing.T) {
	env := testenv.Start(t)
	epoch, _ := inProcessAgent(t, env, "small", RuntimeNone)
	reports := reportsOf(t, env, "small")
	forged := shAssignment("someone-elses", "true")
	forged.Node, forged.Epoch = "small", epoch
	if _, err := env.Etcd.Put(context.Background(), store.AssignKey("small", "mine"), store.MustJSON(forged)); err != nil {
		t.Fatal(err)
	}
	own := shAssignment("greedy", "true")
	own.Node, own.Epoch, own.Ranks[0].GPUs = "small", epoch, []int{5}
	putAssignment(t, env, own)
	if r := waitReport(t, reports, domain.ReportFailed); r.JobID != "greedy" {
		t.Errorf("first failed report names %s, want greedy", r.JobID)
	}
	for _, r := range reports() {
		if r.JobID == "someone-elses" {
			t.Errorf("a report for the job another key's record named: %+v", r)
		}
	}
}
