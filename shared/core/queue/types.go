package queue

import (
	"time"

	"github.com/lockstep-dev/lockstep/shared/contract/domain"
	"github.com/lockstep-dev/lockstep/shared/core/place"
)

// PendingJob is a job waiting to start.
type PendingJob struct {
	ID    string `json:"id"`
	Queue string `json:"queue"`
	// Owner is the user the job runs for; "" (records from before
	// ownership) is a user of that name, limited by Config.DefaultUser.
	Owner       string    `json:"owner,omitempty"`
	Priority    int       `json:"priority"`
	SubmittedAt time.Time `json:"submittedAt"`
	// TimeLimit bounds the run; 0 means none, and planning then treats
	// the job as never ending.
	TimeLimit time.Duration `json:"timeLimit,omitempty"`
	// Request is the gang; its WaitSince is when its bounded topology
	// wait started (zero: not yet), kept by the caller with
	// NextWaitSince.
	Request place.Request `json:"request"`
}

// GPUs is the job's GPU count.
func (j PendingJob) GPUs() int { return j.Request.GPUs() }

// RunningJob is a job holding GPUs (reserved or running).
type RunningJob struct {
	ID    string `json:"id"`
	Queue string `json:"queue"`
	// Owner: as PendingJob.Owner; its GPUs count against the owner's
	// MaxRunningGPUs.
	Owner     string           `json:"owner,omitempty"`
	Placement domain.Placement `json:"placement"`
	// GPUs counts against the queue's quota; 0 means Placement.GPUCount().
	GPUs      int           `json:"gpus,omitempty"`
	StartedAt time.Time     `json:"startedAt"`
	TimeLimit time.Duration `json:"timeLimit,omitempty"` // 0: no limit
}

// GPUCount is the job's GPUs for quota purposes.
func (j RunningJob) GPUCount() int {
	if j.GPUs > 0 {
		return j.GPUs
	}
	return j.Placement.GPUCount()
}

// ExpectedEnd is StartedAt+TimeLimit; false when the job has no limit.
func (j RunningJob) ExpectedEnd() (time.Time, bool) {
	if j.TimeLimit <= 0 {
		return time.Time{}, false
	}
	return j.StartedAt.Add(j.TimeLimit), true
}

// QueueConfig is one queue's policy.
type QueueConfig struct {
	// GPUQuota caps the GPUs the queue's jobs hold at once; 0: no cap.
	GPUQuota int `json:"gpuQuota,omitempty"`
	// Weight is the queue's fair-share weight; 0 means 1.
	Weight float64 `json:"weight,omitempty"`
	// AllowUsers and AllowGroups say who may submit to the queue (Admit);
	// both empty: everyone.
	AllowUsers  []string `json:"allowUsers,omitempty"`
	AllowGroups []string `json:"allowGroups,omitempty"`
	// MaxPriority is the highest priority a job may ask for in the queue
	// (Admit); nil: no cap, as before the field existed. A user's
	// UserQueueConfig.MaxPriority replaces it for that user.
	MaxPriority *int `json:"maxPriority,omitempty"`
	// AllowRoot says whether the queue's ranks may run as root. Admit
	// refuses a container job asking for root (container.user root or
	// uid 0, or an owner named root) in a queue without it; bare ranks run
	// as root only where the agent allows it (--allow-root-ranks).
	AllowRoot bool `json:"allowRoot,omitempty"`
}

func (q QueueConfig) weight() float64 {
	if q.Weight <= 0 {
		return 1
	}
	return q.Weight
}

// Config is the queue policy's configuration.
type Config struct {
	Queues map[string]QueueConfig `json:"queues,omitempty"`
	// Default applies to queues not listed.
	Default QueueConfig `json:"default,omitzero"`
	// SizeHandicap is the job-size factor of the queue order (Order): a
	// job is ordered as if submitted SizeHandicap later for each GPU
	// beyond its first, so small jobs, which fill the gaps gangs leave,
	// need not wait behind big ones submitted shortly before them. 0 means
	// DefaultSizeHandicap; negative: off (plain FIFO within a priority and
	// fair-share level). See size.go for why it is on by default.
	SizeHandicap Duration `json:"sizeHandicap,omitzero"`
	// MaxSizeHandicap caps the handicap, and so bounds how long a big job
	// yields to smaller ones: it is never ordered behind a job submitted
	// more than MaxSizeHandicap after it. 0 means DefaultMaxSizeHandicap.
	MaxSizeHandicap Duration `json:"maxSizeHandicap,omitzero"`
	// SizeHandicapBacklog also caps the handicap at this many times the
	// small-job backlog (Input.SmallBacklog), so that it scales with the
	// load: hours on a cluster whose queue is hours. 0 means
	// DefaultSizeHandicapBacklog; negative: no such cap.
	SizeHandicapBacklog float64 `json:"sizeHandicapBacklog,omitempty"`
	// Stretch is the expected slowdown of a gang per extra leaf and spine
	// it spans (stretch.go): a job whose topology wait ran out still
	// waits for a compact placement when that would finish it sooner.
	// The zero value is the default model; negative fields turn it off.
	Stretch Stretch `json:"stretch,omitzero"`
	// Users are per-user limits (access.go); fields a user leaves 0 take
	// DefaultUser's. The owner "" is never looked up here: it has
	// DefaultUser's limits only.
	Users       map[string]UserConfig `json:"users,omitempty"`
	DefaultUser UserConfig            `json:"defaultUser,omitzero"`
	// Admins and Operators may cancel, drain and checkpoint any user's
	// job (Privileged); everyone else acts on their own jobs only.
	Admins    []string `json:"admins,omitempty"`
	Operators []string `json:"operators,omitempty"`
	// Groups lists each group's members, for AllowGroups (GroupsOf): the
	// services look up no local accounts, whose groups are the nodes'.
	Groups map[string][]string `json:"groups,omitempty"`
}

// Queue returns the configuration of a queue.
func (c Config) Queue(name string) QueueConfig {
	if q, ok := c.Queues[name]; ok {
		return q
	}
	return c.Default
}

// Input is everything one plan depends on. It round-trips through JSON,
// so a plan can be replayed (see Input.Marshal).
type Input struct {
	Snapshot *place.Snapshot `json:"snapshot"`
	Pending  []PendingJob    `json:"pending"`
	Running  []RunningJob    `json:"running"`
	Config   Config          `json:"config"`
	// Usage is each queue's recent use in decayed GPU-hours (DecayedUsage).
	Usage map[string]float64 `json:"usage,omitempty"`
	Now   time.Time          `json:"now"`
	Seed  uint64             `json:"seed"`
	// SmallWork is the sum of JobWork over every pending 1-GPU job, for a
	// caller that passes only some pending jobs (the simulator's window);
	// 0 means the sum over Pending, right for the placement service, which
	// passes them all.
	SmallWork int64 `json:"smallWork,omitempty"`
}

// Action is what a plan says to do with a pending job.
type Action string

const (
	// Start: propose Decision.Placement now.
	Start Action = "Start"
	// Pending: keep waiting, for Decision.Reason.
	Pending Action = "Pending"
)

// Reason codes of pending decisions, besides placement's
// (WaitingForSwitches, WaitingForTopology, RequiredTopology, NoNodes,
// InvalidRequest, TopologyError).
const (
	// ReasonPriority: the job could start now but would delay the
	// reserved job ahead of it.
	ReasonPriority = domain.ReasonPriority
	// ReasonResources: the job does not fit the free resources.
	ReasonResources = domain.ReasonResources
	// ReasonQuotaExceeded: starting it would put its queue over quota.
	ReasonQuotaExceeded = "QuotaExceeded"
	// ReasonReserved: the job holds the plan's reservation.
	ReasonReserved = "Reserved"
	// ReasonUserGPULimit: starting it would put its owner over their
	// MaxRunningGPUs (overall or in its queue); Slurm's AssocGrpGRES.
	ReasonUserGPULimit = "UserGPULimit"
)

// Decision is the plan for one pending job.
type Decision struct {
	JobID  string `json:"jobId"`
	Queue  string `json:"queue"`
	Action Action `json:"action"`
	// Placement is set for Start.
	Placement *domain.Placement `json:"placement,omitempty"`
	// ReasonCode is one of the Reason* codes (or placement's) for Pending,
	// "" for Start.
	ReasonCode string `json:"reasonCode,omitempty"`
	// Reason is short, for `lockstep queue`: "Reserved (starts ≈ 14:02)".
	Reason string `json:"reason,omitempty"`
	// Detail says why in numbers, for `lockstep describe`.
	Detail string `json:"detail,omitempty"`
	// Relaxed: the placement dropped a soft topology constraint.
	Relaxed bool `json:"relaxed,omitempty"`
	// Backfilled: the job starts ahead of the reserved job.
	Backfilled bool `json:"backfilled,omitempty"`
}

// Reservation is the earliest start the plan holds for its top blocked
// job.
type Reservation struct {
	JobID string `json:"jobId"`
	// Start is when the job is expected to start; zero when unknown
	// (running jobs without time limits must end first).
	Start     time.Time        `json:"start,omitzero"`
	Placement domain.Placement `json:"placement"`
	// Waits lists the running jobs that must end first, by expected end.
	Waits []string `json:"waits,omitempty"`
	// relaxed: the placement drops a soft topology constraint; leaves:
	// the leaf switches it spans.
	relaxed bool
	leaves  int
}

// Known reports whether the start time is known.
func (r Reservation) Known() bool { return !r.Start.IsZero() }

// Plan is a policy's answer for every pending job, in policy order.
type Plan struct {
	Decisions   []Decision   `json:"decisions"`
	Reservation *Reservation `json:"reservation,omitempty"`
	// Holds are the reservations of gangs behind Reservation that wait by
	// choice for few switches (holds.go), in the order given.
	Holds []Reservation `json:"holds,omitempty"`
}

// Starts returns the Start decisions, in order.
func (p Plan) Starts() []Decision {
	var out []Decision
	for _, d := range p.Decisions {
		if d.Action == Start {
			out = append(out, d)
		}
	}
	return out
}

// Find returns the decision for a job.
func (p Plan) Find(jobID string) (Decision, bool) {
	for _, d := range p.Decisions {
		if d.JobID == jobID {
			return d, true
		}
	}
	return Decision{}, false
}

// Policy is a planning function; PlanBackfill and PlanFIFOSkip are two.
type Policy func(Input) Plan
