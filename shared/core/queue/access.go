package queue

import (
	"fmt"
	"slices"
	"strings"
)

// UserConfig is one user's limits (Config.Users, Config.DefaultUser).
// In a user's block, 0 takes DefaultUser's value and -1 means no limit;
// in DefaultUser, 0 and -1 both mean no limit.
type UserConfig struct {
	// MaxPendingJobs caps the user's jobs waiting to start: a submission
	// beyond it is rejected (Slurm's MaxSubmitJobs, counting pending jobs
	// only: running ones are bounded by MaxRunningGPUs).
	MaxPendingJobs int `json:"maxPendingJobs,omitempty"`
	// MaxRunningGPUs caps the GPUs the user's jobs hold at once, over all
	// queues (Slurm's GrpTRES=gres/gpu): a job that would exceed it waits
	// with UserGPULimit; one larger than it is rejected.
	MaxRunningGPUs int `json:"maxRunningGPUs,omitempty"`
	// Queues are per-queue overrides; a queue's fields left unset take
	// DefaultUser's for that queue.
	Queues map[string]UserQueueConfig `json:"queues,omitempty"`
}

// UserQueueConfig is a user's policy in one queue.
type UserQueueConfig struct {
	// MaxPriority replaces the queue's MaxPriority for this user (higher
	// or lower); nil: the queue's.
	MaxPriority *int `json:"maxPriority,omitempty"`
	// MaxRunningGPUs caps the user's GPUs in this queue, on top of their
	// overall MaxRunningGPUs (0: DefaultUser's for the queue; -1: none).
	MaxRunningGPUs int `json:"maxRunningGPUs,omitempty"`
}

// Limits are the limits in force for one owner in one queue.
type Limits struct {
	MaxPendingJobs int  // 0: none
	MaxRunningGPUs int  // over all queues; 0: none
	MaxQueueGPUs   int  // in this queue; 0: none
	MaxPriority    *int // nil: none
}

// Limits resolves the limits of owner's jobs in queue: the user's block,
// then DefaultUser, then the queue's MaxPriority. The owner "" (jobs from
// before ownership) gets DefaultUser's only.
func (c Config) Limits(owner, queue string) Limits {
	var u UserConfig
	if owner != "" {
		u = c.Users[owner]
	}
	d := c.DefaultUser
	uq, dq := u.Queues[queue], d.Queues[queue]
	l := Limits{
		MaxPendingJobs: limit(u.MaxPendingJobs, d.MaxPendingJobs),
		MaxRunningGPUs: limit(u.MaxRunningGPUs, d.MaxRunningGPUs),
		MaxQueueGPUs:   limit(uq.MaxRunningGPUs, dq.MaxRunningGPUs),
		MaxPriority:    c.Queue(queue).MaxPriority,
	}
	for _, p := range []*int{dq.MaxPriority, uq.MaxPriority} {
		if p != nil {
			l.MaxPriority = p
		}
	}
	return l
}

// limit is a user's value over the default's: 0 inherits, negative is
// none (returned as 0).
func limit(user, def int) int {
	v := user
	if v == 0 {
		v = def
	}
	return max(v, 0)
}

// Rejection codes of Admit, besides ReasonUserGPULimit.
const (
	// RejectQueueAccess: the owner is not on the queue's allow lists.
	RejectQueueAccess = "QueueAccess"
	// RejectPriority: the requested priority is above the owner's maximum
	// in the queue.
	RejectPriority = "PriorityAboveMax"
	// RejectPendingLimit: the owner already has MaxPendingJobs pending.
	RejectPendingLimit = "UserPendingLimit"
	// RejectRootContainer: a container job would run as root in a queue
	// without AllowRoot.
	RejectRootContainer = "RootContainer"
)

// Submission is what Admit judges: who submits what, and what the owner
// already has waiting. The owner's running GPUs do not decide admission:
// over MaxRunningGPUs a job waits (UserGPULimit), unless it alone is over
// it and so could never start.
type Submission struct {
	Owner  string
	Groups []string // the owner's groups
	Queue  string
	// Priority is the priority the job asks for.
	Priority int
	GPUs     int
	// PendingJobs is how many jobs of the owner already wait to start,
	// not counting this one.
	PendingJobs int
	// Jobs is how many pending jobs the submission makes: an array's
	// tasks (0 counts as 1).
	Jobs int
	// Container says the job runs in containers; ContainerUser is its
	// container.user ("": the owner).
	Container     bool
	ContainerUser string
}

// Rejection is why admission must refuse a submission.
type Rejection struct {
	// Code is one of the Reject* codes or ReasonUserGPULimit.
	Code string
	// Reason says why with the names and numbers, for the submitter.
	Reason string
}

func (r Rejection) String() string { return r.Code + ": " + r.Reason }

// Admit reports whether the queue policy lets s in; if not, the
// Rejection says why. It checks, in order: the queue's allow lists, a
// container asking for root where the queue does not allow it, the
// priority cap, the owner's pending jobs, and whether the job alone is
// larger than the owner's GPU limits (it could never start). Queue quotas
// stay with ExceedsQuota.
func Admit(cfg Config, s Submission) (Rejection, bool) {
	q := cfg.Queue(s.Queue)
	who := userName(s.Owner)
	if !mayUse(q, s.Owner, s.Groups) {
		return Rejection{RejectQueueAccess, fmt.Sprintf("queue %q: user %s may not submit (allowed: %s)",
			s.Queue, who, allowed(q))}, false
	}
	if s.Container && !q.AllowRoot && rootUser(s.ContainerUser, s.Owner) {
		return Rejection{RejectRootContainer, fmt.Sprintf("queue %q: the container would run as root (container.user %q, owner %s), which the queue does not allow (allowRoot)",
			s.Queue, s.ContainerUser, who)}, false
	}
	l := cfg.Limits(s.Owner, s.Queue)
	if l.MaxPriority != nil && s.Priority > *l.MaxPriority {
		return Rejection{RejectPriority, fmt.Sprintf("priority %d is above queue %q's maximum of %d for %s",
			s.Priority, s.Queue, *l.MaxPriority, who)}, false
	}
	if jobs := max(s.Jobs, 1); l.MaxPendingJobs > 0 && s.PendingJobs+jobs > l.MaxPendingJobs {
		if jobs == 1 {
			return Rejection{RejectPendingLimit, fmt.Sprintf("%s already has %d pending jobs (limit %d)",
				who, s.PendingJobs, l.MaxPendingJobs)}, false
		}
		return Rejection{RejectPendingLimit, fmt.Sprintf("%s has %d pending jobs, and this array's %d tasks would make %d (limit %d)",
			who, s.PendingJobs, jobs, s.PendingJobs+jobs, l.MaxPendingJobs)}, false
	}
	if reason, never := exceedsUserLimit(l, who, s.Queue, s.GPUs); never {
		return Rejection{ReasonUserGPULimit, reason}, false
	}
	return Rejection{}, true
}

// exceedsUserLimit reports whether a job of gpus GPUs alone is over its
// owner's GPU limits, with the reason.
func exceedsUserLimit(l Limits, who, queue string, gpus int) (string, bool) {
	if l.MaxRunningGPUs > 0 && gpus > l.MaxRunningGPUs {
		return fmt.Sprintf("the job needs %d GPUs, more than %s's limit of %d running", gpus, who, l.MaxRunningGPUs), true
	}
	if l.MaxQueueGPUs > 0 && gpus > l.MaxQueueGPUs {
		return fmt.Sprintf("the job needs %d GPUs, more than %s's limit of %d running in queue %q",
			gpus, who, l.MaxQueueGPUs, queue), true
	}
	return "", false
}

// rootUser says whether a container's user names root: container.user
// "root", uid 0 (with any gid), or no user given and the owner is root.
// Who else a name maps to on a node is for its agent to find (it runs a
// container only as the job's own account, and root only with
// --allow-root-ranks).
func rootUser(user, owner string) bool {
	if user == "" {
		user = owner
	}
	uid, _, _ := strings.Cut(user, ":")
	return user == "root" || (uid != "" && strings.Trim(uid, "0") == "")
}

// mayUse: empty allow lists admit everyone, otherwise the owner or one
// of their groups must be listed.
func mayUse(q QueueConfig, owner string, groups []string) bool {
	if len(q.AllowUsers) == 0 && len(q.AllowGroups) == 0 {
		return true
	}
	if owner != "" && slices.Contains(q.AllowUsers, owner) {
		return true
	}
	for _, g := range groups {
		if g != "" && slices.Contains(q.AllowGroups, g) {
			return true
		}
	}
	return false
}

func allowed(q QueueConfig) string {
	var parts []string
	parts = append(parts, q.AllowUsers...)
	for _, g := range q.AllowGroups {
		parts = append(parts, "group "+g)
	}
	return strings.Join(parts, ", ")
}

// userName is how an owner appears in reasons; "" (no owner) is shown
// quoted so the sentence still reads.
func userName(owner string) string {
	if owner == "" {
		return `""`
	}
	return owner
}
