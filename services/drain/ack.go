package drain

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/cockroachdb/errors"
	"github.com/nats-io/nats.go"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/lockstep-dev/lockstep/shared/contract/domain"
	"github.com/lockstep-dev/lockstep/shared/contract/subjects"
	"github.com/lockstep-dev/lockstep/shared/plumbing/store"
	"github.com/lockstep-dev/lockstep/shared/plumbing/telemetry"
)

// handleAck answers checkpoint acknowledgements (request/reply). An ack that
// does not match a drain in progress (no drain, another attempt, a rank not
// asked to acknowledge) or that comes from a node not running that rank of
// that attempt is refused and changes nothing. The last expected ack
// completes the drain before the reply.
func (s *service) handleAck(ctx context.Context) nats.MsgHandler {
	return func(msg *nats.Msg) {
		// Request/reply, not JetStream: the same CONSUMER span as the bus's,
		// child of the agent's checkpoint span.
		mctx, span := telemetry.StartProcess(telemetry.Extract(ctx, msg.Header), s.Tel.Tracer, msg.Subject, subjects.QueueDrain, "", len(msg.Data))
		reply := s.ack(mctx, subjects.NodeOf(subjects.CheckpointAck, msg.Subject), msg.Data)
		data, _ := json.Marshal(reply)
		_ = msg.Respond(data)
		if reply.Error != "" {
			span.SetAttributes(telemetry.AttrReason.String(reply.Error))
		}
		span.End()
	}
}

// ack records one ack that came from node (from the subject, which only
// that node may publish on when the bus has auth).
func (s *service) ack(ctx context.Context, node string, data []byte) domain.AckReply {
	a, err := domain.DecodeCheckpointAck(data)
	if err != nil {
		return domain.AckReply{Error: err.Error()}
	}
	if node == "" {
		return domain.AckReply{Error: "an ack must come from a node's agent, on its node's subject"}
	}
	ctx = telemetry.WithJob(ctx, a.JobID)
	if msg := s.ranOn(ctx, node, a); msg != "" {
		s.Log.WarnContext(ctx, "checkpoint ack refused", "job", a.JobID, "attempt", a.Attempt, "rank", a.Rank, "node", node, "reason", msg)
		return domain.AckReply{Error: msg}
	}
	for range 20 {
		rec, rev, found, err := store.GetDrain(ctx, s.Etcd, a.JobID)
		switch {
		case err != nil:
			return domain.AckReply{Error: err.Error()}
		case !found:
			return domain.AckReply{Error: fmt.Sprintf("job %s is not draining: nothing to acknowledge", a.JobID)}
		case rec.Attempt != a.Attempt:
			return domain.AckReply{Error: fmt.Sprintf("job %s is draining attempt %d, not %d", a.JobID, rec.Attempt, a.Attempt)}
		case !slices.Contains(rec.Expected, a.Rank):
			return domain.AckReply{Error: fmt.Sprintf("rank %d of job %s is not asked to acknowledge (ack: %v)", a.Rank, a.JobID, rec.Expected)}
		}
		if prev, ok := rec.Acks[a.Rank]; ok && prev.Step == a.Step && prev.Path == a.Path {
			return domain.AckReply{OK: true, Complete: rec.Acked()}
		}
		if rec.Acks == nil {
			rec.Acks = map[int]domain.CheckpointRef{}
		}
		rec.Acks[a.Rank] = domain.CheckpointRef{Step: a.Step, Path: a.Path, Rank: a.Rank, Attempt: a.Attempt, At: s.cfg.Now().UTC()}
		resp, err := s.Etcd.Txn(ctx).
			If(clientv3.Compare(clientv3.ModRevision(store.DrainKey(a.JobID)), "=", rev)).
			Then(clientv3.OpPut(store.DrainKey(a.JobID), store.MustJSON(rec))).Commit()
		if err != nil {
			return domain.AckReply{Error: errors.Wrap(err, "record ack").Error()}
		}
		if !resp.Succeeded {
			continue // another rank's ack landed first
		}
		if rec.Acked() {
			if err := s.completeDrain(ctx, rec, fmt.Sprintf("checkpoint acknowledged at step %d", rec.Latest().Step)); err != nil {
				// The watch loop finishes it; the ack itself is recorded.
				s.Log.WarnContext(ctx, "drain completion failed; will retry", "job", a.JobID, "err", err)
			}
			return domain.AckReply{OK: true, Complete: true}
		}
		return domain.AckReply{OK: true}
	}
	return domain.AckReply{Error: "drain record kept changing; retry"}
}

// ranOn checks against the allocation that node runs rank a.Rank of the
// attempt the ack names; it returns why not, or "". A node's agent can
// then acknowledge only for its own ranks: the checkpoint it names is
// where the next attempt resumes from.
func (s *service) ranOn(ctx context.Context, node string, a domain.CheckpointAck) string {
	alloc, _, found, err := store.GetAllocation(ctx, s.Etcd, a.JobID)
	switch {
	case err != nil:
		return errors.Wrap(err, "check the ack against the allocation").Error()
	case !found || alloc.Attempt != a.Attempt:
		return fmt.Sprintf("attempt %d of job %s holds no allocation", a.Attempt, a.JobID)
	}
	for _, np := range alloc.Placement.Nodes {
		if np.Node == node && slices.ContainsFunc(np.Ranks, func(r domain.Rank) bool { return r.Rank == a.Rank }) {
			return ""
		}
	}
	return fmt.Sprintf("node %s does not run rank %d of job %s attempt %d", node, a.Rank, a.JobID, a.Attempt)
}
