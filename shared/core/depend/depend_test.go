package depend

import (
	"strings"
	"testing"
	"time"

	"github.com/lockstep-dev/lockstep/shared/contract/domain"
	"github.com/lockstep-dev/lockstep/shared/contract/jobspec"
)

func TestDecide(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	self := Job{ID: "c", Owner: "alice", State: domain.StatePending, SubmittedAt: t0.Add(time.Minute)}
	job := func(id string, s domain.State) Job { return Job{ID: id, Owner: "alice", State: s, SubmittedAt: t0} }
	on := func(kind string, ids ...string) []jobspec.Dependency {
		return []jobspec.Dependency{{Type: kind, Jobs: ids}}
	}
	known := func(js ...Job) map[string]Job {
		m := map[string]Job{}
		for _, j := range js {
			m[j.ID] = j
		}
		return m
	}
	for _, tc := range []struct {
		name   string
		in     Input
		want   Verdict
		detail string
	}{
		{"no dependencies", Input{Job: self}, Ready, ""},

		{"afterok on succeeded", Input{Job: self, Dependencies: on("afterok", "a"), Known: known(job("a", domain.StateSucceeded))}, Ready, ""},
		{"afterok on running", Input{Job: self, Dependencies: on("afterok", "a"), Known: known(job("a", domain.StateRunning))}, Wait, "afterok:a"},
		{"afterok on pending", Input{Job: self, Dependencies: on("afterok", "a"), Known: known(job("a", domain.StatePending))}, Wait, "afterok:a"},
		{"afterok on failed", Input{Job: self, Dependencies: on("afterok", "a"), Known: known(job("a", domain.StateFailed))}, Never, "afterok on a, which ended failed"},
		{"afterok on cancelled", Input{Job: self, Dependencies: on("afterok", "a"), Known: known(job("a", domain.StateCancelled))}, Never, "ended cancelled"},
		{"afterok on timeout", Input{Job: self, Dependencies: on("afterok", "a"), Known: known(job("a", domain.StateTimeout))}, Never, "ended timeout"},
		{"afterok on rejected", Input{Job: self, Dependencies: on("afterok", "a"), Known: known(job("a", domain.StateRejected))}, Never, "ended rejected"},
		{"afterok all of several", Input{Job: self, Dependencies: on("afterok", "a", "b"),
			Known: known(job("a", domain.StateSucceeded), job("b", domain.StateReserved))}, Wait, "waiting for afterok:b"},

		{"afternotok on failed", Input{Job: self, Dependencies: on("afternotok", "a"), Known: known(job("a", domain.StateFailed))}, Ready, ""},
		{"afternotok on cancelled", Input{Job: self, Dependencies: on("afternotok", "a"), Known: known(job("a", domain.StateCancelled))}, Ready, ""},
		{"afternotok on timeout", Input{Job: self, Dependencies: on("afternotok", "a"), Known: known(job("a", domain.StateTimeout))}, Ready, ""},
		{"afternotok on running", Input{Job: self, Dependencies: on("afternotok", "a"), Known: known(job("a", domain.StateRunning))}, Wait, "afternotok:a"},
		{"afternotok on succeeded", Input{Job: self, Dependencies: on("afternotok", "a"), Known: known(job("a", domain.StateSucceeded))}, Never, "afternotok on a, which ended succeeded"},

		{"afterany on succeeded", Input{Job: self, Dependencies: on("afterany", "a"), Known: known(job("a", domain.StateSucceeded))}, Ready, ""},
		{"afterany on failed", Input{Job: self, Dependencies: on("afterany", "a"), Known: known(job("a", domain.StateFailed))}, Ready, ""},
		{"afterany on running", Input{Job: self, Dependencies: on("afterany", "a"), Known: known(job("a", domain.StateRunning))}, Wait, "afterany:a"},

		{"after on running", Input{Job: self, Dependencies: on("after", "a"), Known: known(job("a", domain.StateRunning))}, Ready, ""},
		{"after on ended", Input{Job: self, Dependencies: on("after", "a"), Known: known(job("a", domain.StateFailed))}, Ready, ""},
		{"after on reserved", Input{Job: self, Dependencies: on("after", "a"), Known: known(job("a", domain.StateReserved))}, Wait, "after:a"},
		{"after on pending", Input{Job: self, Dependencies: on("after", "a"), Known: known(job("a", domain.StatePending))}, Wait, "after:a"},

		{"unknown job", Input{Job: self, Dependencies: on("afterany", "ghost")}, Never, "afterany on ghost: no such job of alice"},
		{"unknown job within the grace", Input{Job: self, Dependencies: on("afterany", "ghost"),
			Now: self.SubmittedAt.Add(29 * time.Second), UnknownGrace: 30 * time.Second}, Wait, "waiting for afterany:ghost (not known yet)"},
		{"unknown job after the grace", Input{Job: self, Dependencies: on("afterany", "ghost"),
			Now: self.SubmittedAt.Add(30 * time.Second), UnknownGrace: 30 * time.Second}, Never, "afterany on ghost: no such job of alice"},
		{"another owner's job within the grace", Input{Job: self, Dependencies: on("afterok", "b"),
			Known: known(Job{ID: "b", Owner: "bob", State: domain.StateFailed}),
			Now:   self.SubmittedAt, UnknownGrace: time.Minute}, Wait, "afterok:b (not known yet)"},
		{"another owner's job reads as none", Input{Job: self, Dependencies: on("afterok", "b"),
			Known: known(Job{ID: "b", Owner: "bob", State: domain.StateSucceeded})}, Never, "afterok on b: no such job of alice"},
		{"no owner may name anyone's", Input{Job: Job{ID: "c"}, Dependencies: on("afterok", "b"),
			Known: known(Job{ID: "b", Owner: "bob", State: domain.StateSucceeded})}, Ready, ""},
		{"on itself", Input{Job: self, Dependencies: on("after", "c"), Known: known(self)}, Never, "after on itself"},
		{"unknown kind", Input{Job: self, Dependencies: on("before", "a"), Known: known(job("a", domain.StateRunning))}, Never, "before on a"},
		{"never wins over wait", Input{Job: self,
			Dependencies: append(on("afterok", "a"), on("afterok", "b")...),
			Known:        known(job("a", domain.StateRunning), job("b", domain.StateFailed))}, Never, "afterok on b"},
		{"detail names five", Input{Job: self, Dependencies: on("afterany", "a1", "a2", "a3", "a4", "a5", "a6", "a7"),
			Known: known(job("a1", domain.StatePending), job("a2", domain.StatePending), job("a3", domain.StatePending),
				job("a4", domain.StatePending), job("a5", domain.StatePending), job("a6", domain.StatePending), job("a7", domain.StatePending))},
			Wait, "afterany:a5 and 2 more"},

		{"singleton alone", Input{Job: self, Singleton: true}, Ready, ""},
		{"singleton behind a running namesake", Input{Job: self, Singleton: true,
			Namesakes: []Job{job("n1", domain.StateRunning)}}, Wait, "singleton: job n1 of the same name is running"},
		{"singleton behind an earlier pending namesake", Input{Job: self, Singleton: true,
			Namesakes: []Job{job("n1", domain.StatePending)}}, Wait, "job n1 of the same name is pending"},
		{"singleton ahead of a later namesake", Input{Job: self, Singleton: true,
			Namesakes: []Job{{ID: "n2", Owner: "alice", State: domain.StatePending, SubmittedAt: t0.Add(time.Hour)}}}, Ready, ""},
		{"singleton tie broken by ID", Input{Job: self, Singleton: true,
			Namesakes: []Job{{ID: "b", Owner: "alice", State: domain.StatePending, SubmittedAt: self.SubmittedAt}}}, Wait, "job b"},
		{"singleton ignores itself and other owners", Input{Job: self, Singleton: true,
			Namesakes: []Job{self, {ID: "n1", Owner: "bob", State: domain.StateRunning}}}, Ready, ""},
		{"without singleton namesakes do not matter", Input{Job: self,
			Namesakes: []Job{job("n1", domain.StateRunning)}}, Ready, ""},
		{"dependencies before singleton", Input{Job: self, Singleton: true, Dependencies: on("afterok", "a"),
			Known: known(job("a", domain.StateRunning)), Namesakes: []Job{job("n1", domain.StateRunning)}}, Wait, "afterok:a"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := Decide(tc.in)
			if got.Verdict != tc.want || !strings.Contains(got.Detail, tc.detail) {
				t.Errorf("Decide = %v %q, want %v containing %q", got.Verdict, got.Detail, tc.want, tc.detail)
			}
			if (got.Verdict == Ready) != (got.Detail == "") {
				t.Errorf("a detail is given exactly when not ready: %v %q", got.Verdict, got.Detail)
			}
		})
	}
}
