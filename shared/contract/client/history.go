package client

import (
	"context"
	"time"

	"github.com/cockroachdb/errors"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/lockstep-dev/lockstep/shared/contract/events"
	"github.com/lockstep-dev/lockstep/shared/contract/subjects"
	"github.com/lockstep-dev/lockstep/shared/plumbing/bus"
)

// HistoryRead is what History read: the events, in stream order, and how
// many messages it skipped because they were not a well-formed event of
// the subject they came on.
type HistoryRead struct {
	Events    []events.Event
	Malformed int
}

// History reads the accounting history (subjects.StreamHistory) stored
// from since until until, of owner's jobs, or of every owner's with
// subjects.AnyOwner (which a user's permissions refuse: a user reads
// their own). Every message is decoded as the hostile input it is: one
// that fails events.DecodeFrom is skipped and counted.
func (c *Client) History(ctx context.Context, owner string, since, until time.Time) (HistoryRead, error) {
	var out HistoryRead
	filter := subjects.JobEventsAll
	if owner != subjects.AnyOwner {
		filter = subjects.UserJobEvents(owner)
	}
	stream, err := c.bus.JS.Stream(ctx, subjects.StreamHistory)
	if err != nil {
		return out, errors.WithHint(errors.Wrap(err, "read the accounting history"),
			"the services create "+subjects.StreamHistory+" when they start: are they this version?")
	}
	last := stream.CachedInfo().State.LastSeq
	if stream.CachedInfo().State.Msgs == 0 {
		return out, nil
	}
	cons, err := c.bus.Snapshot(ctx, subjects.StreamHistory, jetstream.ConsumerConfig{
		FilterSubject: filter, DeliverPolicy: jetstream.DeliverByStartTimePolicy, OptStartTime: &since,
	})
	if err != nil {
		if c.User != "" && owner != c.User {
			return out, errors.Wrapf(errors.Mark(err, ErrNotYours),
				"read the accounting history of %s: a user may read only their own jobs'", historyOf(owner))
		}
		return out, errors.Wrap(err, "read the accounting history")
	}
	defer cons.Close()
	for {
		batch, err := cons.FetchNoWait(256)
		if err != nil {
			return out, errors.Wrap(err, "read the accounting history")
		}
		n := 0
		for msg := range batch.Messages() {
			n++
			md, err := msg.Metadata()
			if err != nil {
				out.Malformed++
				continue
			}
			if (!until.IsZero() && md.Timestamp.After(until)) || md.Sequence.Stream > last {
				return out, nil
			}
			ev, err := events.DecodeFrom(msg.Subject(), msg.Data())
			if err != nil || bus.Replayed(msg.Headers()) { // a direct get's answer stored there: see deliver
				out.Malformed++
			} else {
				out.Events = append(out.Events, ev)
			}
			if md.Sequence.Stream == last || md.NumPending == 0 {
				return out, nil
			}
		}
		if err := batch.Error(); err != nil && !errors.Is(err, jetstream.ErrNoMessages) {
			return out, errors.Wrap(err, "read the accounting history")
		}
		if n == 0 {
			return out, nil
		}
	}
}

// historyOf names whose history a read was for.
func historyOf(owner string) string {
	if owner == subjects.AnyOwner {
		return "every user"
	}
	return ownerName(owner)
}
