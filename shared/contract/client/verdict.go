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
	// ID is the job's ID.
	ID string
	// Known is false when no verdict came before the wait ended (admission
	// is behind, or not running): the job is accepted, and the queue will
	// show what admission makes of it.
	Known bool
	// Rejected, with its Reason, is a rejection the job record says.
	Rejected bool
	Reason   string
}

// Submission is one published spec whose verdict can be awaited (Verdict).
// Until then it holds a subscription: call Verdict or Close.
type Submission struct {
	// ID is the job's ID.
	ID  string
	c   *Client
	sub *nats.Subscription
	// cue holds a value once the record may be there to read.
	cue chan struct{}
}

// SubmitOne publishes one spec, as Submit does, and returns it ready for
// its verdict to be awaited. An array's verdict is one record per task,
// under the tasks' IDs: it is refused here (NewRecords follows them).
//
// The verdict's cue is the job's admitted or rejected event, caught by a
// plain subscription made before the publish. That costs no round trip,
// where a watch of the job records costs two (binding the bucket, creating
// a consumer) and a consumer the server then tears down. An event is a
// claim, not the record (events.Decode), so it is not even decoded: its
// subject says admission may have answered, and the record, read then with
// a direct get, is the verdict.
func (c *Client) SubmitOne(ctx context.Context, raw []byte, o SubmitOptions) (*Submission, error) {
	msg, spec, err := c.submission(ctx, raw, o)
	if err != nil {
		return nil, err
	}
	if spec.Array != nil {
		return nil, errors.Newf("job %s is an array: its verdict is one record per task (use Submit, then NewRecords)", spec.ID)
	}
	s := &Submission{ID: spec.ID, c: c, cue: make(chan struct{}, 1)}
	admitted := subjects.JobEvent(c.User, spec.ID, string(events.Admitted))
	rejected := subjects.JobEvent(c.User, spec.ID, string(events.Rejected))
	// Cues coalesce: whoever can put messages on the subject (a direct
	// get's answer can be sent there) cannot crowd the real one out.
	s.sub, err = c.bus.NC.Subscribe(subjects.JobEvents(c.User, spec.ID), func(m *nats.Msg) {
		if m.Subject == admitted || m.Subject == rejected {
			select {
			case s.cue <- struct{}{}:
			default:
			}
		}
	})
	if err != nil {
		return nil, errors.Wrap(err, "subscribe to the job's events")
	}
	ack, err := c.bus.JS.PublishMsg(ctx, msg)
	if err != nil {
		s.Close()
		return nil, publishErr(err)
	}
	if ack.Duplicate {
		// The stream kept an earlier message under this ID, and admission
		// answered that one: its record, whose owner must be this user, is
		// the answer, there to read now.
		if err := c.checkDuplicate(ctx, spec.ID); err != nil {
			s.Close()
			return nil, err
		}
		s.cue <- struct{}{}
	}
	return s, nil
}

// Close drops the subscription Verdict would wait on.
func (s *Submission) Close() { _ = s.sub.Unsubscribe() }

// Verdict waits up to wait for admission's verdict, then closes s.
//
// A cue can be missed, and a record read too early: in a cluster of NATS
// servers the subscription's interest reaches the server admission
// publishes on a moment after it is made, and a direct get may be answered
// by a replica a write behind. So after a cue the record is read again, at
// growing intervals, until it exists or the wait ends, and the record is
// read once more when the wait ends without a verdict.
func (s *Submission) Verdict(ctx context.Context, wait time.Duration) (Verdict, error) {
	defer s.Close()
	wctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	select {
	case <-s.cue:
	case <-wctx.Done():
		return s.lastRead(ctx)
	}
	for delay := 10 * time.Millisecond; ; delay = min(2*delay, 320*time.Millisecond) {
		v, err := s.c.verdictOfRecord(wctx, Verdict{ID: s.ID})
		switch {
		case errors.Is(err, ErrIDTaken) || errs.IsPermanent(err):
			return v, err
		case err == nil && v.Known:
			return v, nil
		}
		// Not there yet, or a read that failed: again, until the wait ends.
		select {
		case <-time.After(delay):
		case <-wctx.Done():
			return s.lastRead(ctx)
		}
	}
}

// lastReadWait bounds the read made when the wait for a verdict ended.
const lastReadWait = time.Second

// lastRead reads the record once more when the wait ended without a
// verdict (none yet: unknown).
func (s *Submission) lastRead(ctx context.Context) (Verdict, error) {
	if ctx.Err() != nil {
		return Verdict{ID: s.ID}, ctx.Err()
	}
	rctx, cancel := context.WithTimeout(ctx, lastReadWait)
	defer cancel()
	v, err := s.c.verdictOfRecord(rctx, Verdict{ID: s.ID})
	if err == nil && !v.Known && ctx.Err() != nil {
		return v, ctx.Err()
	}
	return v, err
}

// verdictOfRecord reads job v.ID's record: none yet, or no answer before
// ctx ends, leaves the verdict unknown.
func (c *Client) verdictOfRecord(ctx context.Context, v Verdict) (Verdict, error) {
	j, _, err := jobs.Lookup(ctx, c.bus.NC, v.ID)
	switch {
	case errs.IsNotFound(err):
		return v, nil
	case err != nil:
		if ctx.Err() != nil {
			return v, nil
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
