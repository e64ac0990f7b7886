package queue

import "fmt"

// userGPUs tracks the GPUs each owner holds during a plan, overall and per
// queue, to hold back jobs over their owner's MaxRunningGPUs.
type userGPUs struct {
	cfg     Config
	total   map[string]int
	inQueue map[ownerQueue]int
}

type ownerQueue struct{ owner, queue string }

func newUserGPUs(cfg Config, running []RunningJob) *userGPUs {
	u := &userGPUs{cfg: cfg, total: map[string]int{}, inQueue: map[ownerQueue]int{}}
	for _, r := range running {
		u.total[r.Owner] += r.GPUCount()
		u.inQueue[ownerQueue{r.Owner, r.Queue}] += r.GPUCount()
	}
	return u
}

// check returns a UserGPULimit decision when starting j would put its
// owner over their GPU limit, overall or in j's queue.
func (u *userGPUs) check(j PendingJob) (Decision, bool) {
	if len(u.cfg.Users) == 0 && u.cfg.DefaultUser.MaxRunningGPUs <= 0 && len(u.cfg.DefaultUser.Queues) == 0 {
		return Decision{}, false // no user limits: the common case costs nothing
	}
	l := u.cfg.Limits(j.Owner, j.Queue)
	who, gpus := userName(j.Owner), j.GPUs()
	held, limit, where := u.total[j.Owner], l.MaxRunningGPUs, ""
	if limit <= 0 || held+gpus <= limit {
		held, limit, where = u.inQueue[ownerQueue{j.Owner, j.Queue}], l.MaxQueueGPUs, fmt.Sprintf(" in queue %q", j.Queue)
		if limit <= 0 || held+gpus <= limit {
			return Decision{}, false
		}
	}
	d := pending(j, ReasonUserGPULimit, fmt.Sprintf("%s (%d/%d GPUs%s)", ReasonUserGPULimit, held, limit, where), "")
	if reason, never := exceedsUserLimit(l, who, j.Queue, gpus); never {
		d.Detail = reason + "; it can never start and should have been rejected"
	} else {
		d.Detail = fmt.Sprintf("user %s holds %d of their %d GPUs%s; this job needs %d more", who, held, limit, where, gpus)
	}
	return d, true
}

func (u *userGPUs) add(j PendingJob) {
	u.total[j.Owner] += j.GPUs()
	u.inQueue[ownerQueue{j.Owner, j.Queue}] += j.GPUs()
}
