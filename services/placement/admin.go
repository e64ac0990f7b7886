package placement

import (
	"bytes"
	"context"
	"encoding/json"

	"github.com/nats-io/nats.go"

	"github.com/lockstep-dev/lockstep/shared/contract/domain"
	"github.com/lockstep-dev/lockstep/shared/contract/jobspec"
	"github.com/lockstep-dev/lockstep/shared/contract/subjects"
	"github.com/lockstep-dev/lockstep/shared/core/place"
	"github.com/lockstep-dev/lockstep/shared/core/queue"
)

// serveAdmin answers `submit --test-only` and `lockstep topology` while
// this replica leads: the leader has the view that matters.
func (s *scheduler) serveAdmin(ctx context.Context) (stop func(), err error) {
	testOnly, err := s.Bus.Serve(subjects.TestOnly, "", func(m *nats.Msg) {
		data, _ := json.Marshal(s.testOnly(m.Data))
		_ = m.Respond(data)
	})
	if err != nil {
		return nil, err
	}
	topo, err := s.Bus.Serve(subjects.TopologyView, "", func(m *nats.Msg) {
		_ = m.Respond(s.renderTopology())
	})
	if err != nil {
		_ = testOnly.Unsubscribe()
		return nil, err
	}
	return func() {
		_ = testOnly.Unsubscribe()
		_ = topo.Unsubscribe()
	}, nil
}

// testOnly plans as if the spec had just been submitted.
func (s *scheduler) testOnly(raw []byte) domain.TestOnlyReply {
	spec, err := jobspec.Parse(raw)
	if err != nil {
		return domain.TestOnlyReply{Error: err.Error()}
	}
	now := s.cfg.Now()
	id := spec.ID
	if id == "" {
		id = "test-only"
	}
	in, _, _ := s.input(now)
	job := domain.Job{ID: id, Spec: spec, State: domain.StatePending, Attempt: 1, SubmittedAt: now, PendingSince: now}
	in.Pending = append(in.Pending, queue.PendingJob{
		ID: id, Queue: spec.Queue, Priority: spec.Priority, SubmittedAt: now,
		TimeLimit: spec.TimeLimit.Duration(), Request: place.RequestForJob(job),
	})
	plan := queue.PlanBackfill(in)
	d, _ := plan.Find(id)
	reply := domain.TestOnlyReply{Start: d.Action == queue.Start, Placement: d.Placement, Reason: d.Reason, Detail: d.Detail}
	if r := plan.Reservation; r != nil && r.JobID == id && r.Known() {
		reply.StartsAt = r.Start
		if reply.Placement == nil {
			p := r.Placement
			reply.Placement = &p
		}
	}
	return reply
}

// renderTopology prints the switch tree with free/total GPUs per switch.
func (s *scheduler) renderTopology() []byte {
	snap := s.snapshot()
	topo, err := snap.ResolvedTopology()
	if err != nil {
		return []byte("topology error: " + err.Error() + "\n")
	}
	gpus := map[string][2]int{}
	for _, nv := range snap.Nodes {
		// A down node's GPUs are in neither count: they are not there to
		// run anything until its agent registers again (node list shows it
		// down; node remove forgets it).
		free, total := 0, 0
		if nv.Up {
			total = nv.Node.GPUs
			if !nv.Drained {
				free = len(nv.Free)
			}
		}
		gpus[nv.Node.Name] = [2]int{free, total}
	}
	var buf bytes.Buffer
	if err := topo.Render(&buf, func(node string) (int, int) { g := gpus[node]; return g[0], g[1] }); err != nil {
		return []byte("render: " + err.Error() + "\n")
	}
	return buf.Bytes()
}
