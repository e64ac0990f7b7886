package client

import (
	"context"
	"time"

	"github.com/cockroachdb/errors"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/lockstep-dev/lockstep/shared/contract/domain"
	"github.com/lockstep-dev/lockstep/shared/contract/errs"
	"github.com/lockstep-dev/lockstep/shared/contract/events"
	"github.com/lockstep-dev/lockstep/shared/contract/subjects"
	"github.com/lockstep-dev/lockstep/shared/plumbing/jobs"
)

// Verdict is admission's answer to one submission.
type Verdict struct {
	// ID is the job's ID, known once the submission is published.
	ID string
	// Known is false when no verdict came before the wait ended (admission
	// is behind, or not running): the job is accepted, and the queue will
	// show what admission makes of it.
	Known bool
	// Rejected, with its Reason, is a rejection the job record confirms.
	Rejected bool
	Reason   string
}

// SubmitForVerdict submits one spec, as Submit does, and then waits up to
// wait for admission's verdict. An array, whose verdict is one record per
// task, waits through NewRecords instead.
//
// The verdict's cue is the job's admitted or rejected event, caught by a
// plain subscription made before the publish, so the server holds it
// before admission can answer. That costs no round trip, where a watch of
// the job records costs two (binding the bucket, creating a consumer) and
// a consumer the server then tears down. An event is a claim, not the
// record (events.Decode), so the event is not even decoded: its subject
// says admission answered, the record, read then with one direct get, is
// the verdict.
func (c *Client) SubmitForVerdict(ctx context.Context, raw []byte, o SubmitOptions, wait time.Duration) (Verdict, error) {
	msg, id, err := c.submission(ctx, raw, o)
	if err != nil {
		return Verdict{}, err
	}
	v := Verdict{ID: id}
	// Buffered for the few events that can precede the wait's end; more
	// are dropped by the client (a slow consumer), never blocking it.
	cues := make(chan *nats.Msg, 16)
	admitted := subjects.JobEvent(c.User, id, string(events.Admitted))
	rejected := subjects.JobEvent(c.User, id, string(events.Rejected))
	sub, err := c.bus.NC.ChanSubscribe(subjects.JobEvents(c.User, id), cues)
	if err != nil {
		return Verdict{}, errors.Wrap(err, "subscribe to the job's events")
	}
	defer func() { _ = sub.Unsubscribe() }()
	ack, err := c.bus.JS.PublishMsg(ctx, msg)
	if err != nil {
		return Verdict{}, publishErr(err)
	}
	if ack.Duplicate {
		// The stream kept an earlier message under this ID, and admission
		// answered that one: its record is the answer.
		if err := c.checkDuplicate(ctx, id); err != nil {
			return Verdict{}, err
		}
		return c.verdictOfRecord(ctx, v)
	}
	wctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	for {
		select {
		case m := <-cues:
			// The subject is all the cue says: the record is then read.
			if m.Subject != admitted && m.Subject != rejected {
				continue
			}
			if v, err := c.verdictOfRecord(wctx, v); err != nil || v.Known {
				return v, err
			}
			// An event the record does not back: keep waiting for admission.
		case <-wctx.Done():
			return v, ctx.Err()
		}
	}
}

// verdictOfRecord reads job v.ID's record: none yet leaves the verdict
// unknown.
func (c *Client) verdictOfRecord(ctx context.Context, v Verdict) (Verdict, error) {
	j, _, err := jobs.Lookup(ctx, c.bus.NC, v.ID)
	switch {
	case errs.IsNotFound(err):
		return v, nil
	case err != nil:
		if ctx.Err() != nil {
			return v, nil // the wait ended: unknown, as without a cue
		}
		return v, err
	}
	if j.Owner != c.User {
		// Another user's job holds the ID: this submission made no job.
		return v, errors.Wrapf(ErrIDTaken, "job %s", v.ID)
	}
	v.Known = true
	if j.State == domain.StateRejected {
		v.Rejected, v.Reason = true, j.Reason
	}
	return v, nil
}

// publishErr explains a failed submission's publish: no stream on the
// subject means no services have created them.
func publishErr(err error) error {
	err = errors.Wrap(err, "publish submission")
	if errors.Is(err, nats.ErrNoResponders) || errors.Is(err, jetstream.ErrNoStreamResponse) {
		return errors.WithHint(err, noServicesHint)
	}
	return err
}
