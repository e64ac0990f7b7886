package drain

import (
	"sync"

	"github.com/lockstep-dev/lockstep/shared/contract/domain"
	"github.com/lockstep-dev/lockstep/shared/plumbing/jobs"
)

// runningJobs mirrors the active jobs from the jobs KV watch, and adds up
// the η terms of finished ones (for the cluster η gauge). Its records hold
// only what jobView decodes: startDrain reads the whole record again.
type runningJobs struct {
	mu   sync.Mutex
	jobs map[string]domain.Job
	// ended holds the IDs of finished jobs whose timing is in endedTiming.
	ended       map[string]bool
	endedTiming domain.Timing
}

func newRunningJobs() *runningJobs {
	return &runningJobs{jobs: map[string]domain.Job{}, ended: map[string]bool{}}
}

func (r *runningJobs) snapshot() []domain.Job {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]domain.Job, 0, len(r.jobs))
	for _, j := range r.jobs {
		out = append(out, j)
	}
	return out
}

// apply mirrors one job record (jobs.Store.Follow hands it every record,
// replayed and live): an active job is kept, and a finished one's timing
// is added up once (a watch that starts again replays every record). A
// record that retention deletes is forgotten, its timing kept: no replay
// brings it back, so remembering its ID would only grow with every job
// the cluster ever ran.
func (r *runningJobs) apply(e jobs.Entry) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if e.Deleted {
		delete(r.jobs, e.Key)
		delete(r.ended, e.Key)
		return
	}
	j, err := decodeJobView(e.Key, e.Value)
	if err != nil {
		delete(r.jobs, e.Key) // lockstep check names a record that does not decode
		return
	}
	if j.State.Active() {
		r.jobs[e.Key] = j
	} else {
		delete(r.jobs, e.Key)
	}
	if j.State.Terminal() && !r.ended[e.Key] {
		r.ended[e.Key] = true
		r.endedTiming = r.endedTiming.Plus(j.Timing)
	}
}
