package devcluster_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/lockstep-dev/lockstep/deploy/devcluster"
	"github.com/lockstep-dev/lockstep/shared/contract/domain"
	"github.com/lockstep-dev/lockstep/shared/contract/events"
	"github.com/lockstep-dev/lockstep/shared/plumbing/testenv"
)

// trainerScript is docs/examples/trainer.sh, by absolute path.
func trainerScript(t *testing.T) string {
	_, file, _, _ := runtime.Caller(0)
	p := filepath.Join(filepath.Dir(file), "..", "..", "docs", "examples", "trainer.sh")
	if _, err := os.Stat(p); err != nil {
		t.Fatalf("demo trainer: %v", err)
	}
	return p
}

// trainerSpec is the demo trainer as a 2-node × 2-GPU gang (4 ranks).
func trainerSpec(t *testing.T, id, ckptDir string, steps int, extra string) string {
	return fmt.Sprintf(`{"id":%q,"gang":{"nodes":2,"gpusPerNode":2},"command":["sh",%q],
		"env":{"TOTAL_STEPS":"%d","STEP_SECONDS":"0.02"},
		"checkpoint":{"gracePeriod":"60s","dir":%q}%s}`, id, trainerScript(t), steps, ckptDir, extra)
}

// waitTraining waits until every rank has logged a step: its checkpoint
// handler is installed by then (a signal before it would kill the rank).
func waitTraining(t *testing.T, dir string, ranks int) {
	t.Helper()
	testenv.Eventually(t, 30*time.Second, func() error {
		for r := range ranks {
			raw, err := os.ReadFile(filepath.Join(dir, fmt.Sprintf("steps-rank-%d.log", r)))
			if err != nil || len(raw) == 0 {
				return fmt.Errorf("rank %d has not trained yet", r)
			}
		}
		return nil
	})
}

// stubborn is a gang whose ranks ignore the checkpoint signal; it writes a
// marker once the signal is ignored, so the test drains only after that.
func stubborn(id, out, extra string) string {
	return fmt.Sprintf(`{"id":%q,"gang":{"nodes":1,"gpusPerNode":2},
		"command":["sh","-c","trap '' USR1; touch %s/ready-$RANK; sleep 300"]%s}`, id, out, extra)
}

func waitReady(t *testing.T, out string, ranks int) {
	t.Helper()
	testenv.Eventually(t, 30*time.Second, func() error {
		for r := range ranks {
			if _, err := os.Stat(filepath.Join(out, fmt.Sprintf("ready-%d", r))); err != nil {
				return err
			}
		}
		return nil
	})
}

// stepsOnce checks each rank logged steps 1..total exactly once in order.
func stepsOnce(t *testing.T, dir string, ranks, total int) {
	t.Helper()
	for r := range ranks {
		raw, err := os.ReadFile(filepath.Join(dir, fmt.Sprintf("steps-rank-%d.log", r)))
		if err != nil {
			t.Fatalf("rank %d: %v", r, err)
		}
		lines := strings.Fields(strings.ReplaceAll(string(raw), "\n", " \n"))
		var steps []int
		for i := 0; i+1 < len(lines); i += 2 {
			n, _ := strconv.Atoi(lines[i])
			steps = append(steps, n)
		}
		if len(steps) != total {
			t.Errorf("rank %d logged %d steps, want %d (a step lost or repeated)", r, len(steps), total)
		}
		for i, s := range steps {
			if s != i+1 {
				t.Errorf("rank %d: step #%d is %d, want %d (lost or repeated around here)", r, i, s, i+1)
				break
			}
		}
	}
}

// conflictReasons lists what each conflict event says held the placement.
func conflictReasons(evs []events.Event) string {
	var out []string
	for _, ev := range evs {
		if ev.Type == events.Conflict {
			out = append(out, fmt.Sprintf("%s %v", ev.Reason, ev.Conflicts))
		}
	}
	if len(out) == 0 {
		return ""
	}
	return "; conflicts: " + strings.Join(out, "; ")
}

func typesOf(evs []events.Event) string {
	var out []string
	for _, ev := range evs {
		out = append(out, string(ev.Type))
	}
	return strings.Join(out, ",")
}

// lifecycleOf is typesOf without the conflicts of a next attempt waiting
// for the last one's ranks to exit: releasing on the last ack may beat
// the ranks' exit by a few milliseconds, and gang then says so (fencing,
// not a failure) and reserves again once they are gone.
func lifecycleOf(evs []events.Event) string {
	var kept []events.Event
	for _, ev := range evs {
		if ev.Type == events.Conflict && onlyWaitingForRanks(ev.Conflicts) {
			continue
		}
		kept = append(kept, ev)
	}
	return typesOf(kept)
}

func onlyWaitingForRanks(conflicts []string) bool {
	for _, c := range conflicts {
		if !strings.Contains(c, " still runs ranks of attempt ") {
			return false
		}
	}
	return len(conflicts) > 0
}

func TestCheckpointReleasesOnAckAndResumes(t *testing.T) {
	h := newHarness(t, devcluster.Config{Nodes: 2, GPUsPerNode: 2})
	dir := t.TempDir()
	const total = 150
	id := h.submit(trainerSpec(t, "trainer", dir, total, ""))
	h.waitFor(id, 30*time.Second, func(j domain.Job) bool { return j.State == domain.StateRunning })
	waitTraining(t, dir, 4)

	if err := h.cl.Drain(context.Background(), id, domain.DrainCheckpoint, domain.ThenRequeue, "test checkpoint"); err != nil {
		t.Fatal(err)
	}
	j := h.waitFor(id, 30*time.Second, func(j domain.Job) bool { return j.Attempt == 2 })
	if j.LastCheckpoint == nil || j.LastCheckpoint.Step <= 0 || j.LastCheckpoint.Path != dir {
		t.Fatalf("last checkpoint = %+v, want a step > 0 at %s", j.LastCheckpoint, dir)
	}
	drain := j.Timing.LastDrain
	t.Logf("drain with acknowledgement took %s (grace 60s)", drain.Round(time.Millisecond))
	if drain <= 0 || drain > 10*time.Second {
		t.Errorf("drain took %s: the GPUs should be released as soon as every rank acks, well under the 60s grace", drain)
	}
	if j.Restarts != 0 {
		t.Errorf("a checkpoint requeue must not charge the restart budget, restarts = %d", j.Restarts)
	}
	j = h.waitFor(id, 60*time.Second, func(j domain.Job) bool { return j.State.Terminal() })
	if j.State != domain.StateSucceeded {
		t.Fatalf("ended %s: %s", j.State, j.Reason)
	}
	stepsOnce(t, dir, 4, total)
	h.waitEvent(id, events.Succeeded)
	evs := h.events(id)
	if got := lifecycleOf(evs); !strings.Contains(got, "running,draining,checkpointed,requeued,reserved,running,succeeded") {
		t.Errorf("events = %s%s", got, conflictReasons(evs))
	}
	if eta := j.Timing.Efficiency(); eta <= 0 || eta >= 1 {
		t.Errorf("η = %v, want in (0,1): %+v", eta, j.Timing)
	} else {
		t.Logf("η = %.3f (compute %s, scheduling %s, drain %s)", eta, j.Timing.Compute.Round(time.Millisecond),
			j.Timing.SchedLatency.Round(time.Millisecond), j.Timing.Drain.Round(time.Millisecond))
	}
	h.checkInvariants()
}

func TestIgnoredSignalIsKilledAtGrace(t *testing.T) {
	h := newHarness(t, devcluster.Config{Nodes: 1, GPUsPerNode: 2})
	out := t.TempDir()
	id := h.submit(stubborn("stubborn", out, `,"checkpoint":{"gracePeriod":"2s"}`))
	h.waitFor(id, 30*time.Second, func(j domain.Job) bool { return j.State == domain.StateRunning })
	waitReady(t, out, 2)
	if err := h.cl.Drain(context.Background(), id, domain.DrainCheckpoint, domain.ThenRequeue, "test"); err != nil {
		t.Fatal(err)
	}
	j := h.waitFor(id, 30*time.Second, func(j domain.Job) bool { return j.Attempt == 2 })
	t.Logf("drain of a job ignoring the signal took %s (grace 2s)", j.Timing.LastDrain.Round(time.Millisecond))
	if j.Timing.LastDrain < 2*time.Second || j.Timing.LastDrain > 6*time.Second {
		t.Errorf("drain took %s, want the 2s grace period (plus a little)", j.Timing.LastDrain)
	}
	if j.LastCheckpoint != nil {
		t.Errorf("no checkpoint was acknowledged, yet LastCheckpoint = %+v", j.LastCheckpoint)
	}
	requeued := h.waitEvent(id, events.Requeued)
	if !strings.Contains(requeued.Reason, "grace period") {
		t.Errorf("requeued reason %q should say the grace period expired", requeued.Reason)
	}
	h.checkInvariants()
}

func TestTimeLimitDrainsToTimeout(t *testing.T) {
	h := newHarness(t, devcluster.Config{Nodes: 2, GPUsPerNode: 2})
	dir := t.TempDir()
	id := h.submit(trainerSpec(t, "limited", dir, 100000, `,"timeLimit":"2s"`))
	j := h.waitFor(id, 30*time.Second, func(j domain.Job) bool { return j.State.Terminal() })
	if j.State != domain.StateTimeout {
		t.Fatalf("ended %s (%s), want timeout", j.State, j.Reason)
	}
	if j.LastCheckpoint == nil {
		t.Error("a job reaching its time limit should have been checkpointed")
	}
	h.waitEvent(id, events.Timeout)
	evs := h.events(id)
	if got := typesOf(evs); !strings.HasSuffix(got, "draining,checkpointed,timeout") {
		t.Errorf("events = %s", got)
	}
}

func TestAcksAreCheckedAndDrainsDeduplicated(t *testing.T) {
	h := newHarness(t, devcluster.Config{Nodes: 1, GPUsPerNode: 2})
	ctx := context.Background()
	out := t.TempDir()
	id := h.submit(stubborn("acky", out, `,"checkpoint":{"gracePeriod":"30s","ack":"rank0"}`))
	h.waitFor(id, 30*time.Second, func(j domain.Job) bool { return j.State == domain.StateRunning })
	waitReady(t, out, 2)

	reply, err := h.cl.Ack(ctx, "node-01", domain.CheckpointAck{JobID: id, Attempt: 1, Rank: 0, Step: 5})
	if err != nil || reply.OK || !strings.Contains(reply.Error, "not draining") {
		t.Errorf("ack while not draining: %+v %v", reply, err)
	}
	for range 2 { // two requests, one drain
		if err := h.cl.Drain(ctx, id, domain.DrainCheckpoint, domain.ThenRequeue, "twice"); err != nil {
			t.Fatal(err)
		}
	}
	h.waitFor(id, 30*time.Second, func(j domain.Job) bool { return j.Drain != nil })
	for _, bad := range []struct {
		node string
		ack  domain.CheckpointAck
	}{
		{"node-01", domain.CheckpointAck{JobID: id, Attempt: 7, Rank: 0, Step: 5}},             // another attempt
		{"node-01", domain.CheckpointAck{JobID: id, Attempt: 1, Rank: 1, Step: 5}},             // not asked: ack is rank0
		{"node-01", domain.CheckpointAck{JobID: "someone-else", Attempt: 1, Rank: 0, Step: 5}}, // another job
		{"node-02", domain.CheckpointAck{JobID: id, Attempt: 1, Rank: 0, Step: 5, Path: "/x"}}, // a node not running it
	} {
		reply, err := h.cl.Ack(ctx, bad.node, bad.ack)
		if err != nil || reply.OK {
			t.Errorf("ack %+v from %s accepted: %+v %v", bad.ack, bad.node, reply, err)
		}
	}
	if j := h.job(id); j.Drain == nil || j.State != domain.StateRunning {
		t.Fatalf("a refused ack changed the job: %s %+v", j.State, j.Drain)
	}
	reply, err = h.cl.Ack(ctx, "node-01", domain.CheckpointAck{JobID: id, Attempt: 1, Rank: 0, Step: 42, Path: "/ckpt/42"})
	if err != nil || !reply.OK || !reply.Complete {
		t.Fatalf("valid ack: %+v %v", reply, err)
	}
	j := h.waitFor(id, 30*time.Second, func(j domain.Job) bool { return j.Attempt == 2 })
	if j.LastCheckpoint == nil || j.LastCheckpoint.Step != 42 {
		t.Errorf("resume point = %+v, want step 42", j.LastCheckpoint)
	}
	draining := 0
	for _, ev := range h.events(id) {
		if ev.Type == events.Draining {
			draining++
		}
	}
	if draining != 1 {
		t.Errorf("%d draining events for two requests, want 1", draining)
	}
}

func TestDrainFinishedByAnotherReplica(t *testing.T) {
	h := newHarness(t, devcluster.Config{Nodes: 1, GPUsPerNode: 2, Replicas: 2})
	ctx := context.Background()
	out := t.TempDir()
	id := h.submit(stubborn("handover", out, `,"checkpoint":{"gracePeriod":"30s","ack":"rank0"}`))
	h.waitFor(id, 30*time.Second, func(j domain.Job) bool { return j.State == domain.StateRunning })
	waitReady(t, out, 2)
	if err := h.cl.Drain(ctx, id, domain.DrainCheckpoint, domain.ThenCancel, "handover"); err != nil {
		t.Fatal(err)
	}
	h.waitFor(id, 30*time.Second, func(j domain.Job) bool { return j.Drain != nil })
	h.c.Kill("drain-1") // whichever started it, one replica is gone now
	testenv.Eventually(t, 30*time.Second, func() error {
		reply, err := h.cl.Ack(ctx, "node-01", domain.CheckpointAck{JobID: id, Attempt: 1, Rank: 0, Step: 9})
		if err != nil {
			return err
		}
		if !reply.OK {
			return fmt.Errorf("%s", reply.Error)
		}
		return nil
	})
	j := h.waitFor(id, 30*time.Second, func(j domain.Job) bool { return j.State.Terminal() })
	if j.State != domain.StateCancelled || j.LastCheckpoint == nil || j.LastCheckpoint.Step != 9 {
		t.Errorf("want cancelled after checkpoint 9, got %s %+v", j.State, j.LastCheckpoint)
	}
	h.checkInvariants()
}

// TestDemoTrainerSurvivesPreemptionsAndANodeDrain is the end-to-end
// story: the demo trainer is preempted twice by higher-priority gangs and
// moved once by a node drain, and still counts every step exactly once.
func TestDemoTrainerSurvivesPreemptionsAndANodeDrain(t *testing.T) {
	h := newHarness(t, devcluster.Config{Nodes: 3, GPUsPerNode: 2})
	ctx := context.Background()
	dir := t.TempDir()
	const total = 200
	id := h.submit(trainerSpec(t, "trainer", dir, total, ""))
	h.waitFor(id, 30*time.Second, func(j domain.Job) bool { return j.State == domain.StateRunning })
	waitTraining(t, dir, 4)

	for round := 1; round <= 2; round++ {
		time.Sleep(700 * time.Millisecond) // let it train a little
		hi := h.submit(fmt.Sprintf(`{"id":"urgent-%d","priority":10,"gang":{"nodes":2,"gpusPerNode":2},"command":["sleep","0.5"]}`, round))
		h.waitFor(hi, 60*time.Second, func(j domain.Job) bool { return j.State == domain.StateSucceeded })
		h.waitFor(id, 60*time.Second, func(j domain.Job) bool { return j.State == domain.StateRunning && j.Attempt == round+1 })
	}
	j := h.job(id)
	victimNode := j.Placement.Nodes[0].Node
	time.Sleep(700 * time.Millisecond)
	if err := h.cl.DrainNode(ctx, victimNode, "maintenance"); err != nil {
		t.Fatal(err)
	}
	j = h.waitFor(id, 60*time.Second, func(j domain.Job) bool { return j.State == domain.StateRunning && j.Attempt == 4 })
	for _, np := range j.Placement.Nodes {
		if np.Node == victimNode {
			t.Errorf("rescheduled onto the drained node %s", victimNode)
		}
	}
	nodes, err := h.cl.Nodes(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range nodes {
		if n.Node.Name == victimNode && (!n.State.Drained || n.State.Reason != "maintenance") {
			t.Errorf("node list shows %s as %+v", victimNode, n.State)
		}
	}
	if err := h.cl.ResumeNode(ctx, victimNode); err != nil {
		t.Fatal(err)
	}

	j = h.waitFor(id, 120*time.Second, func(j domain.Job) bool { return j.State.Terminal() })
	if j.State != domain.StateSucceeded {
		t.Fatalf("trainer ended %s: %s", j.State, j.Reason)
	}
	stepsOnce(t, dir, 4, total)
	var reasons []string
	for _, ev := range h.events(id) {
		if ev.Type == events.Requeued {
			reasons = append(reasons, ev.Reason)
		}
	}
	if len(reasons) != 3 || !strings.Contains(reasons[0], "preempted by urgent-1") ||
		!strings.Contains(reasons[1], "preempted by urgent-2") || !strings.Contains(reasons[2], "drained") {
		t.Errorf("requeue reasons %q, want two preemptions then a node drain", reasons)
	}
	if j.Restarts != 0 {
		t.Errorf("preemption and drains must not spend the restart budget: restarts %d", j.Restarts)
	}
	t.Logf("η = %.3f over %d attempts: compute %s, scheduling %s, drains %s", j.Timing.Efficiency(), j.Attempt,
		j.Timing.Compute.Round(time.Millisecond), j.Timing.SchedLatency.Round(time.Millisecond), j.Timing.Drain.Round(time.Millisecond))
	h.checkInvariants()
}
