package gang_test

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lockstep-dev/lockstep/services/gang"
	"github.com/lockstep-dev/lockstep/shared/contract/domain"
	"github.com/lockstep-dev/lockstep/shared/contract/jobspec"
	"github.com/lockstep-dev/lockstep/shared/contract/subjects"
	"github.com/lockstep-dev/lockstep/shared/plumbing/jobs"
	"github.com/lockstep-dev/lockstep/shared/plumbing/store"
	"github.com/lockstep-dev/lockstep/shared/plumbing/testenv"
)

// proposeContainerGang registers the two nodes of job id (2 GPUs each),
// records the job pending with a container section, proposes it as
// placement would, and waits until gang reserved it. It returns the
// placement.
func proposeContainerGang(t *testing.T, env *testenv.Env, js *jobs.Store, id string, port int, pullTimeout time.Duration) domain.Placement {
	t.Helper()
	ctx := context.Background()
	nodes := testenv.GangNodes(id, 2)
	env.RegisterNodes(t, env.Lease(t, 10*time.Minute), 2, nodes...)
	spec := testenv.GangSpec(id, 2, 2, "/probe")
	spec.Container = &jobspec.Container{Image: "probe:v1", PullPolicy: jobspec.PullNever, PullTimeout: jobspec.DurationOf(pullTimeout)}
	if err := js.Create(ctx, domain.Job{ID: id, Spec: spec, State: domain.StatePending, Attempt: 1, PendingSince: time.Now().UTC()}); err != nil {
		t.Fatal(err)
	}
	p := testenv.GangPlacement(nodes, 2, port)
	if err := env.Bus.PublishJSON(ctx, subjects.Reserve, "", domain.Proposal{JobID: id, Attempt: 1, Placement: p, ProposedAt: time.Now()}); err != nil {
		t.Fatal(err)
	}
	waitState(t, js, id, domain.StateReserved)
	return p
}

// sendReport publishes r on its node's own subject.
func sendReport(t *testing.T, env *testenv.Env, r domain.Report) {
	t.Helper()
	r.Attempt, r.Time = 1, time.Now().UTC()
	if err := env.Bus.PublishJSON(context.Background(), subjects.ReportFrom(r.Node), r.MsgID(), r); err != nil {
		t.Fatal(err)
	}
}

// storedAssignments reads the gang's assignments.
func storedAssignments(t *testing.T, env *testenv.Env, id string, p domain.Placement) []domain.Assignment {
	t.Helper()
	var out []domain.Assignment
	for _, np := range p.Nodes {
		var as domain.Assignment
		if found, _, err := store.GetJSON(context.Background(), env.Etcd, store.AssignKey(np.Node, id), &as); err != nil || !found {
			t.Fatalf("assignment of %s on %s: found=%v err=%v", id, np.Node, found, err)
		}
		out = append(out, as)
	}
	return out
}

func allocationOf(t *testing.T, env *testenv.Env, id string) domain.Allocation {
	t.Helper()
	a, _, found, err := store.GetAllocation(context.Background(), env.Etcd, id)
	if err != nil || !found {
		t.Fatalf("allocation of %s: found=%v err=%v", id, found, err)
	}
	return a
}

// A container gang is reserved in its pull phase: every assignment says
// PullOnly, and no start report is believed until every node reported
// pulled. The last pulled clears PullOnly on every assignment at once and
// starts the launch timeout; then the ranks' starts pass the barrier, and
// the job's record keeps the pull phase (slowest node, size) apart from
// scheduling latency.
func TestContainerGangStartsOnlyOnceEveryNodePulled(t *testing.T) {
	env, js := startGangEnv(t, 1, gang.Config{Workers: 2, LaunchTimeout: 30 * time.Second})
	const id = "ctr"
	p := proposeContainerGang(t, env, js, id, 29800, 10*time.Minute)
	n0, n1 := p.Nodes[0].Node, p.Nodes[1].Node

	for _, as := range storedAssignments(t, env, id, p) {
		if !as.PullOnly || as.Container == nil || as.Container.PullTimeout.Duration() != 10*time.Minute {
			t.Fatalf("assignment on %s at reservation: pullOnly=%v container=%+v", as.Node, as.PullOnly, as.Container)
		}
	}
	a := allocationOf(t, env, id)
	if !a.Pull.Pending() || a.Pull.Image != "probe:v1" || !a.LaunchDeadline.After(a.Pull.Deadline) {
		t.Fatalf("allocation at reservation: pull %+v, launch deadline %s", a.Pull, a.LaunchDeadline)
	}

	// A start before the gang pulled is not believed; one node's pulled is
	// recorded but starts nothing.
	early := domain.Report{JobID: id, Attempt: 1, Node: n0, Kind: domain.ReportStarted, Time: time.Now().UTC()}
	if err := env.Bus.PublishJSON(context.Background(), subjects.ReportFrom(n0), "early-start", early); err != nil {
		t.Fatal(err)
	}
	sendReport(t, env, domain.Report{JobID: id, Node: n0, Kind: domain.ReportPulled, PullMillis: 40, ImageBytes: 12 << 20})
	waitConsumed(t, env, subjects.DurableReports, 2)
	a = allocationOf(t, env, id)
	if len(a.Started) > 0 || len(a.Pull.Nodes) != 1 || a.Pull.Nodes[n0].Bytes != 12<<20 || !a.Pull.Pending() {
		t.Fatalf("after n0 pulled: started %v, pull %+v", a.Started, a.Pull)
	}
	for _, as := range storedAssignments(t, env, id, p) {
		if !as.PullOnly {
			t.Fatalf("assignment on %s cleared before every node pulled", as.Node)
		}
	}

	sendReport(t, env, domain.Report{JobID: id, Node: n1, Kind: domain.ReportPulled, PullMillis: 1200, ImageBytes: 12 << 20, Pulled: true})
	testenv.Eventually(t, 30*time.Second, func() error {
		for _, as := range storedAssignments(t, env, id, p) {
			if as.PullOnly {
				return fmt.Errorf("assignment on %s still pull-only", as.Node)
			}
		}
		return nil
	})
	a = allocationOf(t, env, id)
	if a.Pull.DoneAt.IsZero() || !a.LaunchDeadline.After(a.Pull.DoneAt) || a.LaunchDeadline.After(a.Pull.DoneAt.Add(31*time.Second)) {
		t.Fatalf("after every node pulled: pull %+v, launch deadline %s (want the launch timeout after the pull)", a.Pull, a.LaunchDeadline)
	}

	sendReport(t, env, domain.Report{JobID: id, Node: n0, Kind: domain.ReportStarted})
	sendReport(t, env, domain.Report{JobID: id, Node: n1, Kind: domain.ReportStarted})
	waitState(t, js, id, domain.StateRunning)
	j, _, err := js.Get(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	if j.Pull == nil || j.Pull.Slowest != n1 || j.Pull.SlowestTook != 1200*time.Millisecond || j.Pull.Bytes != 12<<20 ||
		j.Timing.Pull != j.Pull.Took || j.Timing.Pull <= 0 {
		t.Fatalf("job after running: pull %+v, timing %+v", j.Pull, j.Timing)
	}
}

// A node that cannot pull fails the attempt with the engine's message —
// once, not retried — and the gang's GPUs are released at once.
func TestPullFailureFailsTheAttemptAndReleasesTheGang(t *testing.T) {
	env, js := startGangEnv(t, 1, gang.Config{Workers: 2})
	const id = "ctr-fail"
	p := proposeContainerGang(t, env, js, id, 29810, 10*time.Minute)
	a := allocationOf(t, env, id)
	keys := allocationKeys(a)

	const msg = "image probe:v1 is not on this node and container.pullPolicy is Never"
	sendReport(t, env, domain.Report{JobID: id, Node: p.Nodes[0].Node, Kind: domain.ReportPulled, PullMillis: 1, ImageBytes: 1})
	sendReport(t, env, domain.Report{JobID: id, Node: p.Nodes[1].Node, Kind: domain.ReportPullFailed, Reason: msg})
	waitState(t, js, id, domain.StateFailed)
	j, _, err := js.Get(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	if want := "ImagePullFailed: image probe:v1 on node " + p.Nodes[1].Node + ": " + msg; j.Reason != want || j.Attempt != 1 {
		t.Errorf("job failed on attempt %d with %q, want %q", j.Attempt, j.Reason, want)
	}
	testenv.Eventually(t, 30*time.Second, func() error {
		if left := values(t, env.Etcd, keys); len(left) > 0 {
			return fmt.Errorf("%d keys of the gang left after its pull failed", len(left))
		}
		return nil
	})
}

// A gang still pulling past its pullTimeout fails, naming the node that
// did not report, and is released by the reconciler (the pull deadline,
// not the launch timeout, applies while it pulls: lifecycle's table).
func TestPullTimeoutFailsTheAttempt(t *testing.T) {
	var skew atomic.Int64
	now := func() time.Time { return time.Now().Add(time.Duration(skew.Load())) }
	cfg := gang.Config{Workers: 2, LaunchTimeout: time.Second, ReconcileInterval: 100 * time.Millisecond}
	cfg.Now = now
	env, js := startGangEnv(t, 1, cfg)
	const id = "ctr-slow"
	p := proposeContainerGang(t, env, js, id, 29820, 5*time.Minute)
	keys := allocationKeys(allocationOf(t, env, id))
	sendReport(t, env, domain.Report{JobID: id, Node: p.Nodes[0].Node, Kind: domain.ReportPulled, PullMillis: 1, ImageBytes: 1})
	waitConsumed(t, env, subjects.DurableReports, 1)

	// Past both deadlines (the launch one is the pull's plus 1s): the pull
	// timeout is what fails it, not a launch timeout's requeue.
	skew.Store(int64(6 * time.Minute))
	waitState(t, js, id, domain.StateFailed)
	j, _, err := js.Get(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(j.Reason, "PullTimeout: image probe:v1 was not on 1 of 2 nodes ("+p.Nodes[1].Node+") within pullTimeout 5m0s") {
		t.Errorf("reason %q", j.Reason)
	}
	testenv.Eventually(t, 30*time.Second, func() error {
		if left := values(t, env.Etcd, keys); len(left) > 0 {
			return fmt.Errorf("%d keys of the gang left after its pull timed out", len(left))
		}
		return nil
	})
}
