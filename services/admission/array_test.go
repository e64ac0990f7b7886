package admission_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/lockstep-dev/lockstep/services/admission"
	"github.com/lockstep-dev/lockstep/shared/contract/domain"
	"github.com/lockstep-dev/lockstep/shared/contract/events"
	"github.com/lockstep-dev/lockstep/shared/contract/jobspec"
	"github.com/lockstep-dev/lockstep/shared/contract/subjects"
	"github.com/lockstep-dev/lockstep/shared/plumbing/store"
	"github.com/lockstep-dev/lockstep/shared/plumbing/testenv"
)

const arraySpec = `{"id":"sweep","gang":{"nodes":1,"gpusPerNode":1},"command":["true"],"array":{"indexes":"0-3,7","maxConcurrent":2}}`

// An array is expanded into one pending record per index, each with its
// task's place in the array, and one admitted event per task; the
// array's own ID has no record.
func TestArrayIsExpandedIntoTasks(t *testing.T) {
	env, js := start(t)
	publish(t, env, "sweep", []byte(arraySpec))
	want := []int{0, 1, 2, 3, 7}
	for _, idx := range want {
		id := jobspec.TaskID("sweep", idx)
		waitEvent(t, env, id, events.Admitted)
		j, _, err := js.Get(context.Background(), id)
		if err != nil {
			t.Fatal(err)
		}
		wantTask := domain.ArrayTask{JobID: "sweep", Index: idx, Count: 5, Min: 0, Max: 7, MaxConcurrent: 2}
		if j.State != domain.StatePending || j.Array == nil || *j.Array != wantTask || j.Spec.ID != id || j.Spec.Name != "sweep" || j.MsgID != "sweep" {
			t.Errorf("task %s: %+v array %+v", id, j, j.Array)
		}
	}
	if _, _, err := js.Get(context.Background(), "sweep"); err == nil {
		t.Error("the array's own ID has a record")
	}
	all, err := js.List(context.Background())
	if err != nil || len(all) != len(want) {
		t.Errorf("%d records (%v), want %d", len(all), err, len(want))
	}
}

// A submission redelivered after admission crashed half-way through an
// array finds the tasks it made, keeps them as they are, creates the rest
// and announces each task once. It does so even where the checks would
// now refuse the array: here the owner's pending limit is the array's
// size, and the tasks already written count against it.
func TestArrayRedeliveryFinishesTheExpansion(t *testing.T) {
	t.Run("no limit", func(t *testing.T) { arrayRedeliveryFinishes(t, func(*admission.Config) {}) })
	t.Run("pending limit of the array's size", func(t *testing.T) {
		arrayRedeliveryFinishes(t, func(c *admission.Config) { c.Queues.DefaultUser.MaxPendingJobs = 5 })
	})
}

func arrayRedeliveryFinishes(t *testing.T, configure func(*admission.Config)) {
	env := testenv.Start(t)
	for _, n := range []string{"n1", "n2"} {
		if _, err := env.Etcd.Put(context.Background(), store.InventoryKey(n), store.MustJSON(domain.Node{Name: n, Addr: "127.0.0.1", GPUs: 8})); err != nil {
			t.Fatal(err)
		}
	}
	ctx := context.Background()
	publish(t, env, "sweep", []byte(arraySpec))
	// What the crashed delivery wrote: tasks 0 and 2, from this message
	// (its ID and stream time), marked so we see they are kept.
	raw, err := env.Bus.JS.Stream(ctx, subjects.StreamJobs)
	if err != nil {
		t.Fatal(err)
	}
	m, err := raw.GetLastMsgForSubject(ctx, subjects.Submit)
	if err != nil {
		t.Fatal(err)
	}
	js := env.Jobs(t)
	spec, err := jobspec.Parse([]byte(arraySpec))
	if err != nil {
		t.Fatal(err)
	}
	marked := time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC)
	tasks := domain.ArrayTasks("sweep", []int{0, 1, 2, 3, 7}, 2)
	for _, i := range []int{0, 2} {
		s := spec
		s.ID = tasks[i].ID()
		if err := js.Create(ctx, domain.Job{ID: s.ID, Spec: s, State: domain.StatePending, Attempt: 1, MsgID: "sweep",
			SubmittedAt: m.Time, PendingSince: marked, Array: &tasks[i]}); err != nil {
			t.Fatal(err)
		}
	}
	cfg := admission.Config{Base: env.Base(t)}
	configure(&cfg)
	testenv.Serve(t, func(ctx context.Context) error { return admission.Run(ctx, cfg) })
	for _, task := range tasks {
		waitEvent(t, env, task.ID(), events.Admitted)
	}
	for _, i := range []int{0, 2} {
		j, _, err := js.Get(ctx, tasks[i].ID())
		if err != nil || !j.PendingSince.Equal(marked) {
			t.Errorf("task %s rewritten: %+v %v", tasks[i].ID(), j, err)
		}
	}
	all, err := js.List(ctx)
	if err != nil || len(all) != len(tasks) {
		t.Errorf("%d records (%v), want %d", len(all), err, len(tasks))
	}
	for _, task := range tasks {
		evs := allEvents(t, env, task.ID())
		if len(evs) != 1 || evs[0].Type != events.Admitted {
			t.Errorf("task %s events: %+v", task.ID(), evs)
		}
	}
}

// A second submission under an array's ID (or under a plain job's) makes
// no task and is refused; a plain job's ID cannot be an array's.
func TestArrayIDAlreadyUsedIsRefused(t *testing.T) {
	env, js := start(t)
	ctx := context.Background()
	publish(t, env, "sweep", []byte(arraySpec))
	waitEvent(t, env, "sweep_7", events.Admitted)
	// The same array ID again, with more indexes: nothing of it is made.
	publish(t, env, "sweep-again", []byte(strings.Replace(arraySpec, "0-3,7", "0-9", 1)))
	ev := waitEvent(t, env, "sweep_0", events.Refused)
	if !strings.Contains(ev.Reason, "array sweep: task sweep_0 already exists") {
		t.Errorf("refused: %q", ev.Reason)
	}
	if _, _, err := js.Get(ctx, "sweep_9"); err == nil {
		t.Error("a refused array made a task")
	}
	// A plain job first, then an array of its ID.
	publish(t, env, "plain", []byte(`{"id":"plain","gang":{"nodes":1,"gpusPerNode":1},"command":["true"]}`))
	waitEvent(t, env, "plain", events.Admitted)
	publish(t, env, "plain-array", []byte(strings.Replace(arraySpec, `"sweep"`, `"plain"`, 1)))
	if ev := waitEvent(t, env, "plain", events.Refused); !strings.Contains(ev.Reason, "already exists") {
		t.Errorf("refused: %q", ev.Reason)
	}
	if _, _, err := js.Get(ctx, "plain_0"); err == nil {
		t.Error("an array under a job's ID made a task")
	}
	// An array too large for the cluster's bound is rejected, naming the
	// field, under its own ID.
	publish(t, env, "huge", []byte(fmt.Sprintf(`{"id":"huge","gang":{"nodes":1,"gpusPerNode":1},"command":["true"],"array":{"indexes":"0-%d"}}`, jobspec.MaxArrayTasks)))
	if ev := waitEvent(t, env, "huge", events.Rejected); !strings.Contains(ev.Reason, "array.indexes") {
		t.Errorf("rejected: %q", ev.Reason)
	}
}
