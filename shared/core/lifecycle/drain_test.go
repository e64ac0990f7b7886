package lifecycle_test

import (
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/lockstep-dev/lockstep/shared/contract/domain"
	"github.com/lockstep-dev/lockstep/shared/contract/events"
	"github.com/lockstep-dev/lockstep/shared/contract/jobspec"
	"github.com/lockstep-dev/lockstep/shared/core/lifecycle"
)

// draining is attempt 2 of job j, running for ten minutes, draining (then)
// for the last one; rec is its drain record, ranks 0 and 1 expected to ack.
func draining(then domain.DrainThen) (domain.Job, domain.DrainRecord) {
	d := domain.Drain{Kind: domain.DrainPreempt, Then: then, Reason: "preempted by k", RequestedAt: now.Add(-time.Minute),
		Deadline: now, Actor: "lockstep:placement"}
	j := domain.Job{ID: "j", Owner: "alice", Spec: jobspec.Spec{ID: "j", Queue: "default"}, State: domain.StateRunning,
		Attempt: 2, Restarts: 1, RunningAt: now.Add(-10 * time.Minute), Drain: &d}
	return j, domain.DrainRecord{JobID: "j", Attempt: 2, Drain: d, Expected: []int{0, 1}}
}

func acked(steps ...int64) map[int]domain.CheckpointRef {
	out := map[int]domain.CheckpointRef{}
	for rank, step := range steps {
		out[rank] = domain.CheckpointRef{Step: step, Rank: rank, Attempt: 2, At: now}
	}
	return out
}

func ckpt(step int64) *domain.CheckpointRef { return &domain.CheckpointRef{Step: step, Attempt: 1} }

// summary is what a case checks of an event; the rest is checked once for
// all in TestCompleteDrain.
func summary(e events.Event) string {
	ck := "none"
	if e.Checkpoint != nil {
		ck = fmt.Sprint(e.Checkpoint.Step)
	}
	return fmt.Sprintf("%s attempt=%d checkpoint=%s actor=%q reason=%q", e.Type, e.Attempt, ck, e.Actor, e.Reason)
}

// Each case is a drain record and the job record it ends, then the record
// afterwards and the events announcing it.
func TestCompleteDrain(t *testing.T) {
	const graceWhy = "grace period of 1m0s expired; ranks killed"
	cases := []struct {
		name string
		then domain.DrainThen
		acks map[int]domain.CheckpointRef
		why  string
		job  func(*domain.Job) // changes to the draining job, if any

		unchanged  bool
		state      domain.State
		reason     string
		resumeFrom int64 // the job's LastCheckpoint step afterwards; 0: none
		events     []string
	}{
		{name: "every rank acked: requeued from the lowest step", then: domain.ThenRequeue, acks: acked(120, 100),
			why: "checkpoint acknowledged at step 100", job: func(j *domain.Job) { j.LastCheckpoint = ckpt(80) },
			state: domain.StatePending, reason: "preempted by k: checkpoint acknowledged at step 100", resumeFrom: 100,
			events: []string{
				`checkpointed attempt=2 checkpoint=100 actor="" reason=""`,
				`requeued attempt=2 checkpoint=100 actor="lockstep:placement" reason="preempted by k: checkpoint acknowledged at step 100"`,
			}},
		{name: "a rank did not ack: requeued from the last good checkpoint", then: domain.ThenRequeue, acks: acked(120), why: graceWhy,
			job:   func(j *domain.Job) { j.LastCheckpoint = ckpt(80) },
			state: domain.StatePending, reason: "preempted by k: " + graceWhy + "; resuming from the last good checkpoint (step 80)", resumeFrom: 80,
			events: []string{`requeued attempt=2 checkpoint=80 actor="lockstep:placement" reason="preempted by k: ` + graceWhy +
				`; resuming from the last good checkpoint (step 80)"`}},
		{name: "no checkpoint ever: requeued from the start", then: domain.ThenRequeue, why: "ranks exited",
			state: domain.StatePending, reason: "preempted by k: ranks exited",
			events: []string{`requeued attempt=2 checkpoint=none actor="lockstep:placement" reason="preempted by k: ranks exited"`}},
		{name: "cancel: no resume note", then: domain.ThenCancel, why: "ranks exited", job: func(j *domain.Job) { j.LastCheckpoint = ckpt(80) },
			state: domain.StateCancelled, reason: "preempted by k: ranks exited", resumeFrom: 80,
			events: []string{`cancelled attempt=2 checkpoint=80 actor="lockstep:placement" reason="preempted by k: ranks exited"`}},
		{name: "acked cancel: checkpointed, then cancelled", then: domain.ThenCancel, acks: acked(7, 9), why: "checkpoint acknowledged at step 7",
			state: domain.StateCancelled, reason: "preempted by k: checkpoint acknowledged at step 7", resumeFrom: 7,
			events: []string{
				`checkpointed attempt=2 checkpoint=7 actor="" reason=""`,
				`cancelled attempt=2 checkpoint=7 actor="lockstep:placement" reason="preempted by k: checkpoint acknowledged at step 7"`,
			}},
		{name: "time limit: timeout", then: domain.ThenTimeout, why: graceWhy,
			state: domain.StateTimeout, reason: "preempted by k: " + graceWhy,
			events: []string{`timeout attempt=2 checkpoint=none actor="lockstep:placement" reason="preempted by k: ` + graceWhy + `"`}},
		{name: "drain recorded in etcd but not on the job: ended all the same", then: domain.ThenRequeue, why: "ranks exited",
			job:   func(j *domain.Job) { j.Drain = nil },
			state: domain.StatePending, reason: "preempted by k: ranks exited",
			events: []string{`requeued attempt=2 checkpoint=none actor="lockstep:placement" reason="preempted by k: ranks exited"`}},
		{name: "the attempt is over: unchanged", then: domain.ThenRequeue, why: "ranks exited",
			job: func(j *domain.Job) { j.Drain, j.State, j.Attempt = nil, domain.StatePending, 3 }, unchanged: true},
		{name: "the job finished meanwhile: unchanged", then: domain.ThenRequeue, why: "ranks exited",
			job: func(j *domain.Job) { j.Drain, j.State = nil, domain.StateCancelled }, unchanged: true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			job, rec := draining(c.then)
			rec.Acks = c.acks
			if c.job != nil {
				c.job(&job)
			}
			found := job
			done := lifecycle.CompleteDrain(rec, c.why, now)
			before, changed := done.End(&job)
			if c.unchanged {
				if changed || !reflect.DeepEqual(job, found) {
					t.Errorf("End changed the job: %v, %+v", changed, job)
				}
				return
			}
			if !changed {
				t.Fatal("End left the job unchanged")
			}
			if before.Drain == nil || before.Attempt != 2 {
				t.Errorf("before = attempt %d drain %+v, want the attempt drained", before.Attempt, before.Drain)
			}
			resumeFrom := int64(0)
			if job.LastCheckpoint != nil {
				resumeFrom = job.LastCheckpoint.Step
			}
			if job.State != c.state || job.Reason != c.reason || resumeFrom != c.resumeFrom || job.Drain != nil {
				t.Errorf("job after = %s %q resuming from %d (drain %+v),\nwant %s %q resuming from %d",
					job.State, job.Reason, resumeFrom, job.Drain, c.state, c.reason, c.resumeFrom)
			}
			if job.Timing.LastDrain != time.Minute {
				t.Errorf("last drain took %s, want the minute since the request", job.Timing.LastDrain)
			}
			evs := done.Events(before, job)
			var got []string
			for _, ev := range evs {
				got = append(got, summary(ev))
				if ev.JobID != "j" || ev.Owner != "alice" || ev.Queue != "default" || ev.Restarts != 1 || !ev.Time.Equal(now) {
					t.Errorf("%s event names the job wrongly: %+v", ev.Type, ev)
				}
			}
			if !slices.Equal(got, c.events) {
				t.Errorf("events:\n got %q\nwant %q", got, c.events)
			}
			if last := evs[len(evs)-1]; last.Timing == nil || *last.Timing != job.Timing {
				t.Errorf("%s event timing = %+v, want the job's %+v", last.Type, last.Timing, job.Timing)
			}
		})
	}
}

// A compare-and-set update calls End again on a fresh copy of the record
// when it loses a race: the outcome must not depend on the earlier call
// (the reason used to gain a second "resuming from" note).
func TestEndIsSafeToRetry(t *testing.T) {
	job, rec := draining(domain.ThenRequeue)
	job.LastCheckpoint = ckpt(80)
	done := lifecycle.CompleteDrain(rec, "ranks exited", now)
	first, second := job, job
	done.End(&first)
	before, _ := done.End(&second)
	if !reflect.DeepEqual(first, second) {
		t.Errorf("a retry ends differently:\n%+v\n%+v", first, second)
	}
	want := "preempted by k: ranks exited; resuming from the last good checkpoint (step 80)"
	if second.Reason != want || done.Reason(before) != want {
		t.Errorf("reason after a retry = %q (events: %q), want %q", second.Reason, done.Reason(before), want)
	}
}

// A cancel can upgrade a preemption's drain on the job record after the
// drain record was read: the drain then ends as the job record says, as a
// cancel announced by whoever cancelled, not as the requeue read before.
func TestCompletionFollowsACancelThatUpgradedTheJob(t *testing.T) {
	job, rec := draining(domain.ThenRequeue)
	job.StartDrain(rec.Attempt, domain.Drain{Then: domain.ThenCancel, Reason: "cancelled by alice", Actor: "alice"})
	done := lifecycle.CompleteDrain(rec, "ranks exited", now)
	before, changed := done.End(&job)
	if !changed || job.State != domain.StateCancelled {
		t.Fatalf("job after the drain: changed %v, state %s; want cancelled", changed, job.State)
	}
	evs := done.Events(before, job)
	last := evs[len(evs)-1]
	want := `cancelled attempt=2 checkpoint=none actor="alice" reason="preempted by k; then cancelled by alice: ranks exited"`
	if got := summary(last); got != want || job.Reason != last.Reason {
		t.Errorf("final event %s (job reason %q), want %s", got, job.Reason, want)
	}
}

// A drain whose reason is already at the bound (a node's long one, a
// cancel's joined to it) still ends with a reason its event may carry.
func TestDrainCompletionReasonStaysWithinTheBound(t *testing.T) {
	now := time.Date(2026, 12, 5, 12, 0, 0, 0, time.UTC)
	rec := domain.DrainRecord{JobID: "j", Attempt: 1, Drain: domain.Drain{Kind: domain.DrainNode, Then: domain.ThenRequeue,
		Reason: strings.Repeat("r", 2*domain.MaxReasonBytes)}}
	c := lifecycle.CompleteDrain(rec, "grace period ended", now)
	before := domain.Job{ID: "j", Attempt: 1, State: domain.StateRunning, LastCheckpoint: &domain.CheckpointRef{Step: 7}}
	if got := c.Reason(before); len(got) > domain.MaxReasonBytes {
		t.Errorf("reason of %d bytes, more than the %d an event carries", len(got), domain.MaxReasonBytes)
	}
}
