package depend

import (
	"testing"

	"github.com/lockstep-dev/lockstep/shared/contract/domain"
	"github.com/lockstep-dev/lockstep/shared/contract/jobspec"
)

// A dependency on an array's ID is on all its tasks (Slurm).
func TestDependencyOnAnArray(t *testing.T) {
	task := func(st domain.State) Job { return Job{ID: "t", Owner: "alice", State: st} }
	for _, tc := range []struct {
		name  string
		tasks []domain.State
		state domain.State
		// verdicts for after, afterany, afterok, afternotok
		want [4]Verdict
	}{
		{"all succeeded", []domain.State{domain.StateSucceeded, domain.StateSucceeded}, domain.StateSucceeded, [4]Verdict{Ready, Ready, Ready, Never}},
		{"one failed", []domain.State{domain.StateSucceeded, domain.StateFailed, domain.StateCancelled}, domain.StateFailed, [4]Verdict{Ready, Ready, Never, Ready}},
		{"one still running", []domain.State{domain.StateSucceeded, domain.StateRunning}, domain.StateRunning, [4]Verdict{Ready, Wait, Wait, Wait}},
		{"one still pending", []domain.State{domain.StateRunning, domain.StatePending}, domain.StatePending, [4]Verdict{Wait, Wait, Wait, Wait}},
		// A failed task does not decide afterok while another has not
		// ended: Slurm waits for every task.
		{"failed but not ended", []domain.State{domain.StateFailed, domain.StateReserved}, domain.StatePending, [4]Verdict{Wait, Wait, Wait, Wait}},
	} {
		var ts []Job
		for _, st := range tc.tasks {
			ts = append(ts, task(st))
		}
		arr := ArrayJob("sweep", ts)
		if arr.State != tc.state || arr.ID != "sweep" || arr.Owner != "alice" {
			t.Errorf("%s: %+v, want state %s", tc.name, arr, tc.state)
		}
		for i, typ := range []string{jobspec.DependAfter, jobspec.DependAfterAny, jobspec.DependAfterOK, jobspec.DependAfterNotOK} {
			d := Decide(Input{Job: Job{ID: "next", Owner: "alice"}, Dependencies: []jobspec.Dependency{{Type: typ, Jobs: []string{"sweep"}}},
				Known: map[string]Job{"sweep": arr}})
			if d.Verdict != tc.want[i] {
				t.Errorf("%s: %s on the array: %v (%s), want %v", tc.name, typ, d.Verdict, d.Detail, tc.want[i])
			}
		}
	}
}
