package sim

import (
	"cmp"
	"slices"
	"time"

	"github.com/lockstep-dev/lockstep/shared/core/queue"
)

// The running list is kept sorted by expected end, then ID: the order in
// which the queue policy's reservation search releases running jobs. The
// policy sorts its copy itself, so the order changes no decision; it only
// makes that sort, run on every pass, cheap (nearly sorted input).

func runKey(r queue.RunningJob) (time.Time, string) {
	end, ok := r.ExpectedEnd()
	if !ok {
		end = time.Unix(1<<40, 0) // no limit: last
	}
	return end, r.ID
}

func compareRunning(a queue.RunningJob, end time.Time, id string) int {
	ae, aid := runKey(a)
	return cmp.Or(ae.Compare(end), cmp.Compare(aid, id))
}

func (e *engine) addRunning(i int, r queue.RunningJob) {
	end, id := runKey(r)
	pos, _ := slices.BinarySearchFunc(e.running, r, func(a, _ queue.RunningJob) int { return compareRunning(a, end, id) })
	e.running = slices.Insert(e.running, pos, r)
	e.runJob = slices.Insert(e.runJob, pos, int32(i))
}

func (e *engine) removeRunning(i int) {
	j := &e.jobs[i]
	end, id := runKey(queue.RunningJob{ID: j.ID, StartedAt: e.at(j.start), TimeLimit: j.pj.TimeLimit})
	pos, found := slices.BinarySearchFunc(e.running, id, func(a queue.RunningJob, _ string) int { return compareRunning(a, end, id) })
	if !found {
		panic("sim: finished job not in the running list") // an engine bug
	}
	e.running = slices.Delete(e.running, pos, pos+1)
	e.runJob = slices.Delete(e.runJob, pos, pos+1)
}
