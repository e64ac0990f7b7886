package agent

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/errors"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/lockstep-dev/lockstep/services/agent/containers"
	"github.com/lockstep-dev/lockstep/shared/contract/domain"
	"github.com/lockstep-dev/lockstep/shared/contract/jobspec"
	"github.com/lockstep-dev/lockstep/shared/contract/subjects"
	"github.com/lockstep-dev/lockstep/shared/plumbing/store"
	"github.com/lockstep-dev/lockstep/shared/plumbing/testenv"
)

// inProcessAgent runs an agent for node on env in this process, with the
// container runtime given, and returns its registration's epoch.
func inProcessAgent(t *testing.T, env *testenv.Env, node, runtime string) (epoch int64, dataDir string) {
	t.Helper()
	dataDir = t.TempDir()
	cfg := Config{Base: env.Base(t), Node: domain.Node{Name: node, Addr: "127.0.0.1", GPUs: 1},
		DataDir: dataDir, LeaseTTL: 5 * time.Second, ContainerRuntime: runtime}
	testenv.Serve(t, func(ctx context.Context) error { return Run(ctx, cfg) })
	testenv.Eventually(t, 20*time.Second, func() error {
		var n domain.Node
		found, _, err := store.GetJSON(context.Background(), env.Etcd, store.NodeKey(node), &n)
		if err != nil || !found {
			return fmt.Errorf("node %s not registered (%v)", node, err)
		}
		epoch = n.Epoch
		return nil
	})
	return epoch, dataDir
}

// reportsOf follows the reports node publishes (no gang consumes them
// here).
func reportsOf(t *testing.T, env *testenv.Env, node string) func() []domain.Report {
	t.Helper()
	cons, err := env.Bus.JS.CreateConsumer(context.Background(), subjects.StreamWork, jetstream.ConsumerConfig{
		FilterSubject: subjects.ReportFrom(node), AckPolicy: jetstream.AckExplicitPolicy})
	if err != nil {
		t.Fatal(err)
	}
	var seen []domain.Report
	return func() []domain.Report {
		batch, err := cons.FetchNoWait(100)
		if err != nil {
			t.Fatal(err)
		}
		for msg := range batch.Messages() {
			_ = msg.Ack()
			r, err := domain.DecodeReport(msg.Data())
			if err != nil {
				t.Fatalf("the agent sent a report gang refuses: %v", err)
			}
			seen = append(seen, r)
		}
		return seen
	}
}

// waitReport waits for a report of kind and returns it.
func waitReport(t *testing.T, reports func() []domain.Report, kind domain.ReportKind) domain.Report {
	t.Helper()
	var got domain.Report
	testenv.Eventually(t, 60*time.Second, func() error {
		for _, r := range reports() {
			if r.Kind == kind {
				got = r
				return nil
			}
		}
		return fmt.Errorf("no %s report yet: %+v", kind, reports())
	})
	return got
}

func containerAssignment(node string, epoch int64, image, policy string) domain.Assignment {
	as := shAssignment("ctr", "true")
	as.Node, as.Epoch, as.Command = node, epoch, []string{"/probe"}
	as.Container = &jobspec.Container{Image: image, PullPolicy: policy, PullTimeout: jobspec.DurationOf(time.Minute)}
	as.PullOnly = true
	return as
}

func putAssignment(t *testing.T, env *testenv.Env, as domain.Assignment) {
	t.Helper()
	if _, err := env.Etcd.Put(context.Background(), store.AssignKey(as.Node, as.JobID), store.MustJSON(as)); err != nil {
		t.Fatal(err)
	}
}

// A node whose agent runs no container engine cannot pull: its pull phase
// fails at once with a reason that says why, and nothing starts.
func TestPullOnANodeWithoutEngineFails(t *testing.T) {
	env := testenv.Start(t)
	epoch, _ := inProcessAgent(t, env, "bare", RuntimeNone)
	reports := reportsOf(t, env, "bare")
	putAssignment(t, env, containerAssignment("bare", epoch, "probe:v1", jobspec.PullNever))
	r := waitReport(t, reports, domain.ReportPullFailed)
	if !strings.Contains(r.Reason, "node bare runs no container jobs") || r.Attempt != 1 || r.Node != "bare" {
		t.Errorf("pull-failed report %+v", r)
	}
	for _, r := range reports() {
		if r.Kind != domain.ReportPullFailed {
			t.Errorf("unexpected %s report during the pull phase", r.Kind)
		}
	}
}

// engineOrSkip is the local engine with the probe image built as tag, or
// skips the test when no engine answers.
func engineOrSkip(t *testing.T, tag string) *containers.Docker {
	t.Helper()
	d, err := containers.ProbeEngine(t.Context(), tag)
	if errors.Is(err, containers.ErrNoEngine) {
		t.Skipf("%v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = d.Close() })
	return d
}

// On a PullOnly assignment the agent makes the image present, reports
// pulled with its time and size, and starts nothing; when gang clears
// PullOnly the ranks start (and the image is only verified, not pulled
// again). A missing image with pullPolicy Never reports pull-failed with
// the engine's message.
func TestPullPhaseOnTheAgent(t *testing.T) {
	const tag = "lockstep-probe:agent-pull"
	d := engineOrSkip(t, tag)
	env := testenv.Start(t)
	epoch, dataDir := inProcessAgent(t, env, "ctr-node", RuntimeDocker)
	reports := reportsOf(t, env, "ctr-node")
	// The registration says the node runs container jobs (placement sends
	// them only to such nodes).
	resp, err := env.Etcd.Get(context.Background(), store.NodeKey("ctr-node"))
	if err != nil || len(resp.Kvs) != 1 {
		t.Fatalf("node record: %v (%d)", err, len(resp.Kvs))
	}
	if n, err := domain.DecodeNode(resp.Kvs[0].Value); err != nil || n.ContainerRuntime != domain.ContainerRuntimeDocker {
		t.Errorf("registration's containerRuntime %q (%v), want %q", n.ContainerRuntime, err, domain.ContainerRuntimeDocker)
	}

	as := containerAssignment("ctr-node", epoch, tag, jobspec.PullIfNotPresent)
	putAssignment(t, env, as)
	r := waitReport(t, reports, domain.ReportPulled)
	if r.ImageBytes <= 0 || r.Pulled || r.PullMillis < 0 {
		t.Errorf("pulled report %+v: want the image's size, present already (not pulled)", r)
	}
	owned, err := d.Owned(context.Background(), "ctr-node", dataDir)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range reports() {
		if r.Kind != domain.ReportPulled {
			t.Errorf("%s report during the pull phase", r.Kind)
		}
	}
	if len(owned) > 0 {
		t.Fatalf("%d containers made during the pull phase", len(owned))
	}

	as.PullOnly = false
	putAssignment(t, env, as)
	waitReport(t, reports, domain.ReportStarted)
	waitReport(t, reports, domain.ReportExited)

	never := containerAssignment("ctr-node", epoch, "lockstep-no-such-image:agent-pull", jobspec.PullNever)
	never.JobID = "ctr-never"
	putAssignment(t, env, never)
	testenv.Eventually(t, 60*time.Second, func() error {
		for _, r := range reports() {
			if r.JobID == "ctr-never" && r.Kind == domain.ReportPullFailed {
				if !strings.Contains(r.Reason, "image lockstep-no-such-image:agent-pull is not on this node and container.pullPolicy is Never") {
					t.Errorf("pull-failed reason %q", r.Reason)
				}
				return nil
			}
		}
		return fmt.Errorf("no pull-failed report for ctr-never yet")
	})
}

// An assignment that breaks the contract (pull-only without a container:
// nothing to pull) is refused, not dereferenced: the agent keeps running
// and starts the next, valid one.
func TestMalformedAssignmentIsRefusedNotRun(t *testing.T) {
	env := testenv.Start(t)
	epoch, _ := inProcessAgent(t, env, "n1", RuntimeNone)
	reports := reportsOf(t, env, "n1")
	bad := shAssignment("bad", "true")
	bad.Node, bad.Epoch, bad.PullOnly = "n1", epoch, true
	putAssignment(t, env, bad)
	good := shAssignment("good", "true")
	good.Node, good.Epoch = "n1", epoch
	putAssignment(t, env, good)
	if r := waitReport(t, reports, domain.ReportStarted); r.JobID != "good" {
		t.Errorf("started report for %s, want good", r.JobID)
	}
	for _, r := range reports() {
		if r.JobID == "bad" {
			t.Errorf("the malformed assignment was acted on: %+v", r)
		}
	}
}
