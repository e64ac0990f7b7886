package drain

import (
	"context"
	"encoding/json"
	"sort"
	"time"

	"github.com/cockroachdb/errors"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/lockstep-dev/lockstep/shared/contract/domain"
	"github.com/lockstep-dev/lockstep/shared/contract/errs"
	"github.com/lockstep-dev/lockstep/shared/contract/events"
	"github.com/lockstep-dev/lockstep/shared/contract/subjects"
	"github.com/lockstep-dev/lockstep/shared/plumbing/store"
)

// handleNodeRequest drains or resumes a node for maintenance. A drained
// node gets no new work (placement skips it) and its running gangs are
// checkpoint-drained and requeued elsewhere by the watch loop.
func (s *service) handleNodeRequest(ctx context.Context, msg jetstream.Msg, req domain.NodeRequest) error {
	now := s.cfg.Now().UTC()
	var ev events.Event
	switch msg.Subject() {
	case subjects.NodeDrain:
		st := domain.NodeState{Drained: true, Reason: req.Reason, Since: now}
		if _, err := s.Etcd.Put(ctx, store.NodeStateKey(req.Node), store.MustJSON(st)); err != nil {
			return errors.Wrapf(err, "drain node %s", req.Node)
		}
		ev = events.Event{Type: events.NodeDrained, Node: req.Node, Reason: req.Reason, Time: now}
	case subjects.NodeResume:
		// Not deleted: the agent watches its node state, and returns the
		// GPUs its health checks withdrew before ResumedAt.
		st := domain.NodeState{Since: now, ResumedAt: now}
		if _, err := s.Etcd.Put(ctx, store.NodeStateKey(req.Node), store.MustJSON(st)); err != nil {
			return errors.Wrapf(err, "resume node %s", req.Node)
		}
		ev = events.Event{Type: events.NodeResumed, Node: req.Node, Reason: req.Reason, Time: now}
	default:
		return errs.MarkPermanent(errors.Newf("unknown node request subject %s", msg.Subject()))
	}
	s.Log.Info("node state changed", "node", req.Node, "event", ev.Type, "reason", req.Reason)
	return s.Bus.PublishEvent(ctx, ev)
}

// handleNodeList answers `lockstep node list` from the watch caches, and
// says since when each down node is down.
func (s *service) handleNodeList(msg *nats.Msg) {
	list := nodeList(s.inventory.Snapshot(), s.live.Snapshot(), s.nodeState.Snapshot(), s.allocs.Snapshot())
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	var stream jetstream.Stream
	for i := range list {
		if list[i].Up {
			continue
		}
		if stream == nil {
			var err error
			if stream, err = s.Bus.JS.Stream(ctx, subjects.StreamEvents); err != nil {
				break // the list goes without the times
			}
		}
		list[i].DownSince = downSince(ctx, stream, list[i].Node.Name)
	}
	data, _ := json.Marshal(list)
	_ = msg.Respond(data)
}

// downSince is when the events stream stored the node's last node-down
// event (gang publishes one when it sees the node's lease end): the
// server's time, not the publisher's; zero when the stream no longer
// holds one, or it does not decode as that node's event.
func downSince(ctx context.Context, stream jetstream.Stream, node string) time.Time {
	subject := subjects.NodeEvent(node, string(events.NodeDown))
	m, err := stream.GetLastMsgForSubject(ctx, subject)
	if err != nil {
		return time.Time{}
	}
	if ev, err := events.DecodeFrom(subject, m.Data); err != nil || ev.Node != node || ev.Type != events.NodeDown {
		return time.Time{}
	}
	return m.Time
}

// nodeList joins inventory, liveness, admin state and allocations.
func nodeList(inv, live map[string]domain.Node, states map[string]domain.NodeState, allocs map[string]domain.Allocation) []domain.NodeInfo {
	used := map[string]int{}
	jobsOn := map[string][]string{}
	for _, a := range allocs {
		for _, np := range a.Placement.Nodes {
			used[np.Node] += len(np.GPUs)
			jobsOn[np.Node] = append(jobsOn[np.Node], a.JobID)
		}
	}
	var out []domain.NodeInfo
	for _, n := range inv {
		_, up := live[store.NodeKey(n.Name)]
		info := domain.NodeInfo{Node: n, Up: up, State: states[store.NodeStateKey(n.Name)], GPUsUsed: used[n.Name], Jobs: jobsOn[n.Name]}
		sort.Strings(info.Jobs)
		out = append(out, info)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Node.Name < out[j].Node.Name })
	return out
}
