package agent

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/lockstep-dev/lockstep/shared/contract/domain"
	"github.com/lockstep-dev/lockstep/shared/contract/jobspec"
	"github.com/lockstep-dev/lockstep/shared/contract/subjects"
	"github.com/lockstep-dev/lockstep/shared/plumbing/store"
	"github.com/lockstep-dev/lockstep/shared/plumbing/testenv"
)

// A node runs tasks of a step only for a batch job assigned to it (in
// etcd) in the launch's attempt, launched by the job's first node, on
// the job's nodes; anything else is refused, back to whoever sent it.
func TestStepLaunchIsCheckedAgainstTheAssignment(t *testing.T) {
	env := testenv.Start(t)
	a := testAgent(t, env)
	e := a.exec
	ctx := t.Context()
	if err := a.subscribeSteps(ctx); err != nil {
		t.Fatal(err)
	}
	// n1 holds node rank 1 of batch job "batch" (n0 runs its script), and
	// runs "plain", a job that is not a batch job.
	batch := domain.Assignment{JobID: "batch", Attempt: 1, Node: "n1", NodeRank: 1, NNodes: 2, WorldSize: 2,
		MasterAddr: "10.0.0.1", MasterPort: 29500, Nodes: []string{"n0", "n1"}, Command: []string{"job.sh"},
		Ranks: []domain.Rank{{Rank: 1, GPUs: []int{0}}}, Batch: &jobspec.Batch{Script: "#!/bin/sh\n"}}
	plain := shAssignment("plain", "sleep 60")
	plain.Nodes, plain.NNodes, plain.Node, plain.NodeRank, plain.MasterAddr, plain.MasterPort = []string{"n0", "n1"}, 2, "n1", 1, "10.0.0.1", 29501
	for _, as := range []domain.Assignment{batch, plain} {
		if err := e.start(ctx, as, 0); err != nil {
			t.Fatal(err)
		}
		if _, err := env.Etcd.Put(ctx, store.AssignKey("n1", as.JobID), string(store.MustJSON(as))); err != nil {
			t.Fatal(err)
		}
	}
	if n := len(gangOf(t, e, "batch").procs); n != 0 {
		t.Fatalf("a held node of a batch job runs %d processes, want none", n)
	}

	outs := make(chan string, 100)
	sub, err := env.Bus.NC.Subscribe(subjects.StepTo(subjects.StepOutput, "n1", "*"), func(m *nats.Msg) {
		o, err := domain.DecodeStepOutput(m.Data)
		if err != nil {
			t.Errorf("undecodable step output: %v", err)
			return
		}
		outs <- subjects.StepSender(m.Subject) + "→" + m.Subject[strings.LastIndex(m.Subject, ".")+1:] + " " + o.Kind + " " + o.Line + o.Error
	})
	if err != nil {
		t.Fatal(err)
	}
	// The server must hold the subscription before anything is sent.
	if err := env.Bus.NC.Flush(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sub.Unsubscribe() })
	launch := func(from string, l domain.StepLaunch) {
		t.Helper()
		data, _ := json.Marshal(l)
		if err := env.Bus.NC.Publish(subjects.StepTo(subjects.StepLaunch, from, "n1"), data); err != nil {
			t.Fatal(err)
		}
	}
	next := func() string {
		t.Helper()
		select {
		case s := <-outs:
			return s
		case <-time.After(10 * time.Second):
			t.Fatal("no step output")
			return ""
		}
	}
	echo := []string{"sh", "-c", "echo hi $SLURM_PROCID $SLURM_STEP_ID $SLURM_NODEID"}
	for name, f := range map[string]struct {
		from string
		l    domain.StepLaunch
		why  string
	}{
		"from a node not the job's first": {"n9", domain.StepLaunch{JobID: "batch", Attempt: 1, Nodes: []string{"n1"}, Tasks: []int{1}, Argv: echo}, "not from the job's first node"},
		"from the held node itself":       {"n1", domain.StepLaunch{JobID: "batch", Attempt: 1, Nodes: []string{"n1"}, Tasks: []int{1}, Argv: echo}, "not from the job's first node"},
		"for a job that is not batch":     {"n0", domain.StepLaunch{JobID: "plain", Attempt: 1, Nodes: []string{"n1"}, Tasks: []int{1}, Argv: echo}, "not a batch job"},
		"for another attempt":             {"n0", domain.StepLaunch{JobID: "batch", Attempt: 2, Nodes: []string{"n1"}, Tasks: []int{1}, Argv: echo}, "does not run here"},
		"on a node not the job's":         {"n0", domain.StepLaunch{JobID: "batch", Attempt: 1, Nodes: []string{"n1", "n7"}, Tasks: []int{1, 1}, Argv: echo}, "n7 is not one of the job's"},
	} {
		launch(f.from, f.l)
		if got := next(); !strings.HasPrefix(got, "n1→"+f.from+" refused") || !strings.Contains(got, f.why) {
			t.Errorf("%s: got %q, want refused (%s)", name, got, f.why)
		}
	}
	// The assignment gone from etcd (memory lagging a release): refused.
	if _, err := env.Etcd.Delete(ctx, store.AssignKey("n1", "batch")); err != nil {
		t.Fatal(err)
	}
	launch("n0", domain.StepLaunch{JobID: "batch", Attempt: 1, Step: 3, Nodes: []string{"n0", "n1"}, Tasks: []int{2, 1}, Argv: echo})
	if got := next(); !strings.Contains(got, "refused") || !strings.Contains(got, "not assigned") {
		t.Errorf("launch without an assignment in etcd: got %q", got)
	}
	if _, err := env.Etcd.Put(ctx, store.AssignKey("n1", "batch"), string(store.MustJSON(batch))); err != nil {
		t.Fatal(err)
	}
	// The real thing: n0 launches step 3 with two tasks of its own and one
	// here, which is task 2, node 1 of the job.
	launch("n0", domain.StepLaunch{JobID: "batch", Attempt: 1, Step: 3, Nodes: []string{"n0", "n1"}, Tasks: []int{2, 1}, Argv: echo})
	if got := next(); got != "n1→n0 stdout hi 2 3 1" {
		t.Errorf("task output: got %q", got)
	}
	if got := next(); got != "n1→n0 exit " {
		t.Errorf("task exit: got %q", got)
	}
}
