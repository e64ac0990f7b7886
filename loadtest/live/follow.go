package live

import (
	"context"
	"strings"
	"sync"
	"time"

	"github.com/cockroachdb/errors"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/lockstep-dev/lockstep/shared/contract/codec"
	"github.com/lockstep-dev/lockstep/shared/contract/events"
	"github.com/lockstep-dev/lockstep/shared/contract/subjects"
	"github.com/lockstep-dev/lockstep/shared/plumbing/bus"
)

// timeline is what the events said about one job.
type timeline struct {
	submitted, acked time.Time
	admitted         time.Time
	reserved         time.Time
	running          time.Time
	ended            time.Time
	final            events.Type // succeeded, failed, cancelled, rejected
	conflicts        int
	requeues         int
	requeueReason    string   // the first one's reason code
	nodes            []string // the last reservation's
	events           int
}

// follower records the events of the run's jobs (IDs starting with
// prefix) from one ordered consumer.
type follower struct {
	prefix string

	mu    sync.Mutex
	jobs  map[string]*timeline
	other int // events of jobs not ours
	// runningAt lists every running event's time, for throughput.
	runningAt []time.Time
	finished  int
	changed   chan struct{}
}

func newFollower(prefix string) *follower {
	return &follower{prefix: prefix, jobs: map[string]*timeline{}, changed: make(chan struct{}, 1)}
}

// start subscribes from now on; events published earlier are not ours.
func (f *follower) start(ctx context.Context, b *bus.Bus) (stop func(), err error) {
	cons, err := b.Follow(ctx, subjects.StreamEvents, jetstream.OrderedConsumerConfig{
		FilterSubjects: []string{subjects.JobEventsAll},
		DeliverPolicy:  jetstream.DeliverNewPolicy,
	})
	if err != nil {
		return nil, errors.Wrap(err, "follow job events")
	}
	cc, err := cons.Consume(func(msg jetstream.Msg) {
		var ev followedEvent
		if codec.Decode(msg.Data(), &ev) == nil {
			f.record(ev)
		}
	})
	if err != nil {
		cons.Close()
		return nil, errors.Wrap(err, "follow job events")
	}
	return func() { cc.Stop(); cons.Close() }, nil
}

func (f *follower) submitted(id string, at time.Time) {
	f.mu.Lock()
	tl := f.get(id)
	tl.submitted = at
	f.mu.Unlock()
}

func (f *follower) acked(id string, at time.Time) {
	f.mu.Lock()
	f.get(id).acked = at
	f.mu.Unlock()
}

func (f *follower) get(id string) *timeline {
	tl := f.jobs[id]
	if tl == nil {
		tl = &timeline{}
		f.jobs[id] = tl
	}
	return tl
}

// followedEvent is what the follower reads of an event: its fields of
// events.Event, and of a reservation's placement only the node names.
// Decoding the rest (a reservation's ranks and GPUs) cost the harness a
// share of the CPU it measures.
type followedEvent struct {
	Type      events.Type `json:"type"`
	JobID     string      `json:"jobId"`
	Time      time.Time   `json:"time"`
	Reason    string      `json:"reason"`
	Placement *struct {
		Nodes []struct {
			Node string `json:"node"`
		} `json:"nodes"`
	} `json:"placement"`
}

func (f *follower) record(ev followedEvent) {
	if !strings.HasPrefix(ev.JobID, f.prefix) {
		f.mu.Lock()
		f.other++
		f.mu.Unlock()
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	tl := f.get(ev.JobID)
	tl.events++
	first := func(t *time.Time) {
		if t.IsZero() {
			*t = ev.Time
		}
	}
	switch ev.Type {
	case events.Admitted:
		first(&tl.admitted)
	case events.Reserved:
		first(&tl.reserved)
		if ev.Placement != nil {
			tl.nodes = tl.nodes[:0]
			for _, np := range ev.Placement.Nodes {
				tl.nodes = append(tl.nodes, np.Node)
			}
		}
	case events.Running:
		if tl.running.IsZero() {
			f.runningAt = append(f.runningAt, ev.Time)
		}
		first(&tl.running)
	case events.Conflict:
		tl.conflicts++
	case events.Requeued:
		tl.requeues++
		if tl.requeueReason == "" {
			tl.requeueReason = reasonCode(ev.Reason)
		}
	case events.Succeeded, events.Failed, events.Cancelled, events.Rejected, events.Timeout:
		if tl.final == "" {
			tl.final, tl.ended = ev.Type, ev.Time
			f.finished++
			select {
			case f.changed <- struct{}{}:
			default:
			}
		}
	}
}

// done counts jobs with a final event.
func (f *follower) done() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.finished
}

// snapshot copies the timelines.
func (f *follower) snapshot() map[string]timeline {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := make(map[string]timeline, len(f.jobs))
	for id, tl := range f.jobs {
		out[id] = *tl
	}
	return out
}

// reasonCode is a reason's first word ("LaunchTimeout: ..." → "LaunchTimeout").
func reasonCode(reason string) string {
	if i := strings.IndexAny(reason, ": "); i > 0 {
		return reason[:i]
	}
	if reason == "" {
		return "(none)"
	}
	return reason
}
