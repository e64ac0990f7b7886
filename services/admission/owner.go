package admission

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/lockstep-dev/lockstep/shared/contract/domain"
	"github.com/lockstep-dev/lockstep/shared/contract/errs"
	"github.com/lockstep-dev/lockstep/shared/contract/events"
	"github.com/lockstep-dev/lockstep/shared/contract/jobspec"
	"github.com/lockstep-dev/lockstep/shared/contract/subjects"
	"github.com/lockstep-dev/lockstep/shared/core/queue"
	"github.com/lockstep-dev/lockstep/shared/plumbing/jobs"
)

// ownerOf reads a submission's owner from its subject, never from its
// body: on a cluster with auth the server lets only alice (or an admin)
// publish on SubmitAs("alice"). The shared subject has no owner ("");
// only services and admins may publish there once auth is on.
func ownerOf(subject string) (string, error) {
	user, ok := subjects.UserOf(subjects.Submit, subject)
	switch {
	case !ok:
		return "", fmt.Errorf("submission on %q, not a submission subject", subject)
	case user != "" && !domain.ValidUserName(user):
		return "", fmt.Errorf("submission subject %q names no valid user", subject)
	}
	return user, nil
}

// dependenciesAllowed refuses a dependency on another user's job: its
// outcome would tell alice how bob's job ended. A job with no owner (auth
// off, or an admin on the shared subject) may name any job. An ID with no
// record passes: placement cancels the job as DependencyNeverSatisfied
// (and, should bob later submit a job under that ID, still treats it as
// none of alice's). A job that names itself, which its ID may only now
// show, is refused too.
func (a *admitter) dependenciesAllowed(ctx context.Context, sub submission, spec jobspec.Spec) (string, bool, error) {
	for i, d := range spec.Dependencies {
		for k, id := range d.Jobs {
			field := fmt.Sprintf("dependencies.%d.jobs.%d", i, k)
			if id == sub.id {
				return fmt.Sprintf("invalid job spec: %s: job %s cannot depend on itself", field, id), false, nil
			}
			if sub.owner == "" {
				continue
			}
			dep, _, err := a.Jobs.Get(ctx, id)
			switch {
			case errs.IsNotFound(err):
			case err != nil:
				return "", false, err
			case dep.Owner != sub.owner:
				return fmt.Sprintf("invalid job spec: %s: job %s belongs to another user; a job may depend only on its owner's jobs", field, id), false, nil
			}
		}
	}
	return "", true, nil
}

// submission is what admission knows of one submitted message besides
// its spec.
type submission struct {
	id, msgID, owner string
	// submitted is when the stream stored the message: with msgID, what
	// tells a redelivery from a second submission under the same ID.
	submitted time.Time
}

// redeliveryOf reports whether existing is the record this very message
// created (a redelivery after a crash), rather than a job someone
// submitted earlier under the same ID.
func (s submission) redeliveryOf(existing domain.Job) bool {
	return existing.MsgID == s.msgID && existing.SubmittedAt.Equal(s.submitted)
}

// taken handles a submission whose ID has a record already: bob may not
// claim, block or pass for his own a job of alice's, and a second
// submission of one's own ID says so rather than replaying the first.
// It returns replay true only for a redelivery of the message that made
// the record, which the caller answers as before.
func (a *admitter) taken(ctx context.Context, sub submission, now time.Time) (replay bool, existing domain.Job, err error) {
	existing, _, err = a.Jobs.Get(ctx, sub.id)
	if err != nil {
		return false, existing, err
	}
	switch {
	case existing.Owner != sub.owner:
		return false, existing, a.refuse(ctx, existing, sub, "id already used by another user", now)
	case !sub.redeliveryOf(existing):
		return false, existing, a.refuse(ctx, existing, sub,
			fmt.Sprintf("job %s already exists (%s, submitted %s)", sub.id, existing.State, existing.SubmittedAt.UTC().Format(time.RFC3339)), now)
	}
	return true, existing, nil
}

// refuse records, on the existing job's subject, a submission that did not
// touch it: a refused event names the submitter (the actor) and changes no
// state, so the owner's watchers do not take it for their job's end.
func (a *admitter) refuse(ctx context.Context, existing domain.Job, sub submission, reason string, now time.Time) error {
	a.Log.WarnContext(ctx, "refused submission", "job", sub.id, "msgId", sub.msgID, "by", sub.owner, "owner", existing.Owner, "reason", reason)
	ev := events.ForJob(events.Refused, existing, now)
	// A submission on the shared subject has no actor: no user signed it.
	ev.Reason, ev.MsgID, ev.Actor = reason, sub.msgID, sub.owner
	return a.Bus.PublishEvent(ctx, ev)
}

// pending counts each owner's pending jobs for queue.Admit's
// maxPendingJobs. The jobs watch lags the bucket, so the jobs this
// replica admitted in the last few seconds are counted from memory, and
// the check and the count's increment happen under one lock: a burst of
// one user's submissions cannot all pass on the same count. Several
// admission replicas still each count only their own recent admissions;
// the watch catches up within a second or so.
type pending struct {
	active *jobs.Active // nil: the policy sets no pending limit
	mu     sync.Mutex
	recent map[string]recentJob
}

type recentJob struct {
	owner string
	at    time.Time
	jobs  int // pending jobs it makes: an array's tasks
}

// recentFor is how long a job admitted here is counted from memory; by
// then the watch has it.
const recentFor = 5 * time.Second

// needsPendingCount reports whether any user has a pending-job limit.
func needsPendingCount(cfg queue.Config) bool {
	if cfg.DefaultUser.MaxPendingJobs > 0 {
		return true
	}
	for _, u := range cfg.Users {
		if u.MaxPendingJobs > 0 {
			return true
		}
	}
	return false
}

// admit judges spec against the queue policy for its owner and, when it
// passes, counts the job as pending until release is called (on failure
// to record it) or the watch takes over.
func (a *admitter) admit(sub submission, spec jobspec.Spec, now time.Time) (release func(), rej queue.Rejection, ok bool) {
	p := &a.pending
	p.mu.Lock()
	defer p.mu.Unlock()
	s := queue.Submission{
		Owner: sub.owner, Groups: a.queues.GroupsOf(sub.owner), Queue: spec.Queue,
		Priority: spec.Priority, GPUs: spec.GPUs(),
	}
	if spec.Container != nil {
		s.Container, s.ContainerUser = true, spec.Container.User
	}
	s.Jobs = 1
	if isArray(spec) {
		// Each task is a pending job of its own: an array is held to the
		// pending limit by all of them.
		if indexes, err := spec.Array.Tasks(); err == nil {
			s.Jobs = len(indexes)
		}
	}
	if p.active != nil {
		s.PendingJobs = p.countLocked(sub.owner, now)
	}
	if rej, ok := queue.Admit(a.queues, s); !ok {
		return func() {}, rej, false
	}
	if p.active == nil {
		return func() {}, queue.Rejection{}, true
	}
	p.recent[sub.id] = recentJob{owner: sub.owner, at: now, jobs: s.Jobs}
	return func() {
		p.mu.Lock()
		delete(p.recent, sub.id)
		p.mu.Unlock()
	}, queue.Rejection{}, true
}

func (p *pending) countLocked(owner string, now time.Time) int {
	n := p.active.Count(func(b domain.JobBrief) bool { return b.Owner == owner && b.State == domain.StatePending })
	for id, r := range p.recent {
		switch _, seen := p.active.Get(id); {
		case seen || now.Sub(r.at) > recentFor:
			delete(p.recent, id) // the watch counts it now (or it is long gone)
		case r.owner == owner:
			n += max(r.jobs, 1)
		}
	}
	return n
}
