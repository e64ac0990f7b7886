package gang_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/lockstep-dev/lockstep/services/gang"
	"github.com/lockstep-dev/lockstep/shared/contract/domain"
	"github.com/lockstep-dev/lockstep/shared/contract/subjects"
	"github.com/lockstep-dev/lockstep/shared/plumbing/store"
)

// The finding: a forged "exited" report ended a victim's gang as
// succeeded. A node reports now on its own subject (with auth, the server
// lets only that node publish there), and gang refuses a report that names
// another node than the subject it came on, or a node that holds no part
// of the attempt: neither changes the allocation or the job, and both are
// terminated, not redelivered. The victim's own node still reports.
func TestReportsAreRefusedForAnotherNode(t *testing.T) {
	env, js := startGangEnv(t, 1, gang.Config{Workers: 2})
	ctx := context.Background()
	a, _ := reservedGang(t, env, js, "victim", 1, 29500, domain.StateReserved)
	own := a.Placement.Nodes[0].Node

	forged := []struct {
		subject string
		r       domain.Report
	}{
		// evil's agent claims to speak for the victim's node.
		{subjects.ReportFrom("evil"), domain.Report{JobID: "victim", Attempt: 1, Node: own, Kind: domain.ReportFailed, ExitCode: 1}},
		// evil reports for itself on a gang it holds no part of.
		{subjects.ReportFrom("evil"), domain.Report{JobID: "victim", Attempt: 1, Node: "evil", Kind: domain.ReportFailed, ExitCode: 1}},
		// The subject of old, which no node has any more.
		{subjects.Report, domain.Report{JobID: "victim", Attempt: 1, Node: own, Kind: domain.ReportFailed, ExitCode: 1}},
	}
	for i, f := range forged {
		if err := env.Bus.PublishJSON(ctx, f.subject, fmt.Sprintf("forged.%d", i), f.r); err != nil {
			t.Fatal(err)
		}
	}
	waitConsumed(t, env, subjects.DurableReports, 2) // the bare subject is not gang's to consume
	got, _, found, err := store.GetAllocation(ctx, env.Etcd, "victim")
	if err != nil || !found || got.State != domain.AllocReserved || len(got.Started) > 0 || len(got.Exited) > 0 {
		t.Fatalf("allocation after forged reports: %+v found=%v err=%v", got, found, err)
	}
	if j, _, err := js.Get(ctx, "victim"); err != nil || j.State != domain.StateReserved {
		t.Fatalf("job after forged reports: %s (%s) %v", j.State, j.Reason, err)
	}

	r := domain.Report{JobID: "victim", Attempt: 1, Node: own, Kind: domain.ReportStarted}
	if err := env.Bus.PublishJSON(ctx, subjects.ReportFrom(own), "own.started", r); err != nil {
		t.Fatal(err)
	}
	waitState(t, js, "victim", domain.StateRunning)
}
