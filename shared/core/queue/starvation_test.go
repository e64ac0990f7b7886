package queue_test

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/lockstep-dev/lockstep/shared/core/place"
	"github.com/lockstep-dev/lockstep/shared/core/queue"
)

// sim replays a policy minute by minute: running jobs end exactly at
// their time limit, new jobs arrive, the policy plans, its starts are
// taken. It checks that no start uses a GPU that is not free.
type sim struct {
	t        *testing.T
	snap     *place.Snapshot
	running  []queue.RunningJob
	pending  []queue.PendingJob
	now      time.Time
	started  map[string]time.Time
	policy   queue.Policy
	cfg      queue.Config
	reserved map[string]bool // jobs ever shown as Reserved
}

func (s *sim) step() {
	s.running = slices.DeleteFunc(s.running, func(r queue.RunningJob) bool {
		end, ok := r.ExpectedEnd()
		if ok && !end.After(s.now) {
			s.snap.Release(r.Placement)
			return true
		}
		return false
	})
	plan := s.policy(queue.Input{Snapshot: s.snap, Pending: s.pending, Running: s.running, Config: s.cfg, Now: s.now, Seed: 1})
	for _, d := range plan.Decisions {
		if d.ReasonCode == queue.ReasonReserved {
			s.reserved[d.JobID] = true
		}
		if d.Action != queue.Start {
			continue
		}
		for _, np := range d.Placement.Nodes {
			for _, g := range np.GPUs {
				i := slices.IndexFunc(s.snap.Nodes, func(n place.NodeView) bool { return n.Node.Name == np.Node })
				if !slices.Contains(s.snap.Nodes[i].Free, g) {
					s.t.Fatalf("%s: %s starts on busy GPU %d of %s", s.now.Format("15:04"), d.JobID, g, np.Node)
				}
			}
		}
		s.snap.Take(*d.Placement)
		k := slices.IndexFunc(s.pending, func(j queue.PendingJob) bool { return j.ID == d.JobID })
		j := s.pending[k]
		s.pending = slices.Delete(s.pending, k, k+1)
		s.running = append(s.running, queue.RunningJob{ID: j.ID, Queue: j.Queue, Placement: *d.Placement, StartedAt: s.now, TimeLimit: j.TimeLimit})
		s.started[j.ID] = s.now
	}
}

// TestBigGangDoesNotStarve is the backfill test. Eight 8-GPU nodes
// run eight one-node jobs ending 7.5 minutes apart; a 64-GPU gang (8 × 8,
// 2 h limit) is at the head of the queue, and a new one-node job (1 h
// limit) arrives every 5 minutes, faster than nodes free up. Under
// priority FIFO with skipping, every freed node goes to the next small
// job and the gang never starts in a day; under PlanBackfill it gets a
// reservation at once and starts when the last of the original jobs ends,
// an hour in.
func TestBigGangDoesNotStarve(t *testing.T) {
	run := func(policy queue.Policy) *sim {
		var running []queue.RunningJob
		for i := range 8 {
			r := hold(fmt.Sprintf("s-init-%d", i), time.Hour, "n"+string(rune('1'+i)))
			r.StartedAt = now.Add(time.Duration(i+1)*7*time.Minute + time.Duration(i+1)*30*time.Second - time.Hour)
			running = append(running, r)
		}
		s := &sim{
			t: t, snap: cluster(8, running...), running: running, now: now, policy: policy,
			started: map[string]time.Time{}, reserved: map[string]bool{},
			pending: []queue.PendingJob{job("big", 8, 2*time.Hour, 0)},
		}
		for m := range 24 * 60 {
			s.now = now.Add(time.Duration(m) * time.Minute)
			if m%5 == 0 {
				id := fmt.Sprintf("small-%04d", m)
				s.pending = append(s.pending, job(id, 1, time.Hour, time.Duration(m)*time.Minute))
			}
			s.step()
		}
		return s
	}

	fifo := run(queue.PlanFIFOSkip)
	if at, ok := fifo.started["big"]; ok {
		t.Fatalf("FIFO-skip started the big gang at %s; the test no longer shows starvation", at.Format("15:04"))
	}
	if len(fifo.started) < 100 {
		t.Fatalf("FIFO-skip started only %d small jobs", len(fifo.started))
	}

	easy := run(queue.PlanBackfill)
	at, ok := easy.started["big"]
	if !ok {
		t.Fatal("PlanBackfill never started the big gang")
	}
	if want := now.Add(time.Hour); at.After(want) {
		t.Fatalf("big gang started at %s, want by %s (when the original jobs have ended)", at.Format("15:04"), want.Format("15:04"))
	}
	if !easy.reserved["big"] {
		t.Fatal("the big gang was never shown as Reserved")
	}
	t.Logf("big gang: FIFO-skip never (in 24h, %d small jobs started); PlanBackfill at %s", len(fifo.started), at.Format("15:04"))
}
