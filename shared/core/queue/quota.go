package queue

import "fmt"

// ExceedsQuota reports whether a job of gpus GPUs is larger than its
// queue's quota, so that it could never start: admission rejects it with
// the returned reason.
func ExceedsQuota(cfg Config, queue string, gpus int) (string, bool) {
	q := cfg.Queue(queue)
	if q.GPUQuota > 0 && gpus > q.GPUQuota {
		return fmt.Sprintf("%s: the job needs %d GPUs, more than queue %q's quota of %d",
			ReasonQuotaExceeded, gpus, queue, q.GPUQuota), true
	}
	return "", false
}

// quotas tracks the GPUs each queue holds during a plan.
type quotas struct {
	cfg  Config
	used map[string]int
}

func newQuotas(cfg Config, running []RunningJob) *quotas {
	q := &quotas{cfg: cfg, used: map[string]int{}}
	for _, r := range running {
		q.used[r.Queue] += r.GPUCount()
	}
	return q
}

// check returns a QuotaExceeded decision when starting j would put its
// queue over quota.
func (q *quotas) check(j PendingJob) (Decision, bool) {
	quota := q.cfg.Queue(j.Queue).GPUQuota
	if quota <= 0 || q.used[j.Queue]+j.GPUs() <= quota {
		return Decision{}, false
	}
	d := pending(j, ReasonQuotaExceeded, fmt.Sprintf("%s (%d/%d GPUs)", ReasonQuotaExceeded, q.used[j.Queue], quota), "")
	if reason, never := ExceedsQuota(q.cfg, j.Queue, j.GPUs()); never {
		d.Detail = reason + "; it can never start and should have been rejected"
	} else {
		d.Detail = fmt.Sprintf("queue %q holds %d of its %d GPUs; this job needs %d more",
			j.Queue, q.used[j.Queue], quota, j.GPUs())
	}
	return d, true
}

func (q *quotas) add(j PendingJob) { q.used[j.Queue] += j.GPUs() }
