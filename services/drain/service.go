// Package drain stops running gangs that must stop for a reason other than
// finishing. In this version that is cancellation: it consumes cancel
// requests, ends the job as cancelled, releases its allocation (agents stop
// the ranks whose assignments vanish) and emits cancelled. Checkpoint
// draining builds on the same path.
package drain

import (
	"context"
	"encoding/json"
	"log/slog"
	"time"

	"github.com/cockroachdb/errors"
	"github.com/nats-io/nats.go/jetstream"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/lockstep-dev/lockstep/shared/bus"
	"github.com/lockstep-dev/lockstep/shared/config"
	"github.com/lockstep-dev/lockstep/shared/domain"
	"github.com/lockstep-dev/lockstep/shared/errs"
	"github.com/lockstep-dev/lockstep/shared/events"
	"github.com/lockstep-dev/lockstep/shared/jobs"
	"github.com/lockstep-dev/lockstep/shared/jobspec"
	"github.com/lockstep-dev/lockstep/shared/store"
	"github.com/lockstep-dev/lockstep/shared/subjects"
)

// Config configures a drain replica.
type Config struct {
	config.Base
	// Now is the clock; nil means time.Now.
	Now func() time.Time
}

type service struct {
	cfg  Config
	log  *slog.Logger
	bus  *bus.Bus
	etcd *clientv3.Client
	jobs *jobs.Store
}

// Run serves until ctx ends.
func Run(ctx context.Context, cfg Config) error {
	if err := cfg.Validate(); err != nil {
		return err
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	log := cfg.Logger().With("service", "drain")
	b, cli, err := cfg.Clients(ctx, "drain")
	if err != nil {
		return errors.Wrap(err, "drain")
	}
	defer b.Close()
	defer cli.Close()
	js, err := jobs.Open(ctx, b.JS)
	if err != nil {
		return errors.Wrap(err, "drain")
	}
	s := &service{cfg: cfg, log: log, bus: b, etcd: cli, jobs: js}
	done, err := b.Consume(ctx, bus.ConsumerSpec{
		Stream: subjects.StreamJobs, Durable: subjects.DurableDrain, Filter: subjects.Cancel,
	}, log, s.handleCancel)
	if err != nil {
		return errors.Wrap(err, "drain")
	}
	log.Info("drain running")
	<-done
	return nil
}

// unknownJobRetries bounds how long a cancel for a job not (yet) admitted
// is retried: a cancel published right after its submit may overtake it.
const unknownJobRetries = 20

// handleCancel cancels one job. Cancelling a finished job changes nothing.
func (s *service) handleCancel(ctx context.Context, msg jetstream.Msg) error {
	var req domain.CancelRequest
	if err := json.Unmarshal(msg.Data(), &req); err != nil || !jobspec.ValidID(req.JobID) {
		return errs.MarkPermanent(errors.Newf("malformed cancel request (want {\"jobId\": ...}): %v", err))
	}
	reason := req.Reason
	if reason == "" {
		reason = "cancelled by user"
	}
	now := s.cfg.Now().UTC()
	var attempt int
	job, changed, err := s.jobs.Update(ctx, req.JobID, func(j *domain.Job) (bool, error) {
		attempt = j.Attempt
		return j.Finish(-1, domain.StateCancelled, reason, nil, now), nil
	})
	if errs.IsNotFound(err) {
		if md, mdErr := msg.Metadata(); mdErr == nil && md.NumDelivered < unknownJobRetries {
			return err // not admitted yet, perhaps: retry with backoff
		}
		return errs.MarkPermanent(err)
	}
	if err != nil {
		return err
	}
	// Release whatever the job holds, whether or not this delivery made the
	// change (a previous one may have crashed before releasing).
	if job.State == domain.StateCancelled {
		if err := store.ReleaseJob(ctx, s.etcd, job.ID, attempt); err != nil {
			return err
		}
	}
	if !changed {
		return nil
	}
	s.log.Info("job cancelled", "job", job.ID, "reason", reason)
	ev := events.ForJob(events.Cancelled, job, now)
	ev.Reason = reason
	return s.bus.PublishEvent(ctx, ev)
}
