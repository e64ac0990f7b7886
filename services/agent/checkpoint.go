package agent

import (
	"context"
	"encoding/json"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/cockroachdb/errors"
	"github.com/nats-io/nats.go"

	"github.com/lockstep-dev/lockstep/shared/contract/domain"
	"github.com/lockstep-dev/lockstep/shared/contract/jobspec"
	"github.com/lockstep-dev/lockstep/shared/contract/subjects"
	"github.com/lockstep-dev/lockstep/shared/plumbing/clock"
	"github.com/lockstep-dev/lockstep/shared/plumbing/store"
	"github.com/lockstep-dev/lockstep/shared/plumbing/telemetry"
)

// The checkpoint half of draining, on the node: when a drain record appears
// for a gang running here, send its ranks the checkpoint signal once, then
// watch each expected rank's ack file (LOCKSTEP_CHECKPOINT_ACK) and forward
// what it says to the drain service. A rank may also acknowledge itself
// with `lockstep ckpt-done`, which goes through the agent's socket
// (acksock.go); both end up as the same request, on this node's subject.

// followDrains runs until ctx ends.
func (a *agent) followDrains(ctx context.Context) {
	drains := store.DrainCache(a.Etcd, a.Log)
	drains.OnChange = func(_ string, rec, _ *domain.DrainRecord) {
		if rec != nil {
			a.exec.checkpoint(ctx, *rec, a.sendAck)
		}
	}
	drains.Run(ctx)
}

// signals maps the spec's signal names.
var signals = map[string]syscall.Signal{
	"SIGUSR1": syscall.SIGUSR1, "SIGUSR2": syscall.SIGUSR2, "SIGTERM": syscall.SIGTERM,
	"SIGINT": syscall.SIGINT, "SIGHUP": syscall.SIGHUP,
}

// checkpoint signals the local ranks of a draining gang (once per drain)
// and starts watching their ack files.
func (e *executor) checkpoint(ctx context.Context, rec domain.DrainRecord, send func(context.Context, domain.CheckpointAck) error) {
	e.mu.Lock()
	g, ok := e.gangs[rec.JobID]
	if !ok || g.as.Attempt != rec.Attempt || g.drainSignalled.Equal(rec.Drain.RequestedAt) {
		e.mu.Unlock()
		return
	}
	g.drainSignalled = rec.Drain.RequestedAt
	e.mu.Unlock()

	// The drain record carries the job's trace; the acks follow under it.
	ctx, span := telemetry.Continue(ctx, g.span.TracerProvider().Tracer(telemetry.ScopeName), rec.TraceParent,
		telemetry.SpanSignal, telemetry.AttrJobID.String(rec.JobID), telemetry.AttrAttempt.Int(rec.Attempt),
		telemetry.AttrNode.String(e.cfg.Node.Name), telemetry.AttrDrainKind.String(string(rec.Drain.Kind)))
	defer span.End()
	ctx = telemetry.WithJob(ctx, rec.JobID)
	sig, ok := signals[rec.Signal]
	if !ok {
		// The record predates the signal field, or names one the schema
		// has since dropped: the spec's default.
		sig = signals[jobspec.DefaultSignal]
	}
	e.log.InfoContext(ctx, "asking ranks to checkpoint", "job", rec.JobID, "signal", rec.Signal, "reason", rec.Drain.Reason)
	e.signalAll(g, sig)

	expected := map[int]bool{}
	for _, r := range rec.Expected {
		expected[r] = true
	}
	dir := filepath.Join(e.cfg.DataDir, "jobs", rec.JobID, strconv.Itoa(rec.Attempt))
	g.ackMu.Lock()
	defer g.ackMu.Unlock()
	if isClosed(g.exited) {
		return // the ranks are gone; their exit is being reported
	}
	for _, r := range g.as.Ranks {
		if expected[r.Rank] {
			g.acks.Add(1)
			go func() {
				defer g.acks.Done()
				e.watchAck(ctx, g, ackFile(dir, r.Rank), domain.CheckpointAck{JobID: rec.JobID, Attempt: rec.Attempt, Rank: r.Rank}, send)
			}()
		}
	}
}

// maxAckBytes bounds a checkpoint ack file: a step and a path.
const maxAckBytes = 64 << 10

// watchAck polls one rank's ack file until it has content (then forwards
// it), the ranks have exited (after a last look), or ctx ends.
func (e *executor) watchAck(ctx context.Context, g *localGang, path string, ack domain.CheckpointAck, send func(context.Context, domain.CheckpointAck) error) {
	t := time.NewTicker(50 * time.Millisecond)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-g.exited:
			// Ranks exited; a last look, since a rank may write and exit.
		case <-t.C:
		}
		// The rank's file: read as what it should be, a small regular
		// file, not through a link to /dev/zero or a FIFO (userfiles).
		raw, err := readUserFile(path, maxAckBytes)
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			e.log.WarnContext(ctx, "checkpoint ack file refused", "file", path, "err", err)
			return
		}
		if err == nil && len(strings.TrimSpace(string(raw))) > 0 {
			step, ckptPath, perr := ParseAck(raw)
			if perr != nil {
				e.log.WarnContext(ctx, "unreadable checkpoint ack file", "file", path, "err", perr)
				return
			}
			ack.Step, ack.Path = step, ckptPath
			if err := send(ctx, ack); err != nil {
				e.log.WarnContext(ctx, "checkpoint ack refused", "job", ack.JobID, "rank", ack.Rank, "err", err)
			}
			return
		}
		if isClosed(g.exited) {
			return
		}
	}
}

// ackFile is where a rank writes its acknowledgement.
func ackFile(dir string, rank int) string {
	return filepath.Join(dir, "checkpoint-ack-rank-"+strconv.Itoa(rank))
}

// ParseAck reads an ack file. Accepted forms, so a shell script can write
// one with echo: JSON {"step": 120, "path": "/ckpt/120"}; "step=120
// path=/ckpt/120"; or a bare step number.
func ParseAck(raw []byte) (step int64, path string, err error) {
	s := strings.TrimSpace(string(raw))
	if strings.HasPrefix(s, "{") {
		var v struct {
			Step *int64 `json:"step"`
			Path string `json:"path"`
		}
		if err := json.Unmarshal([]byte(s), &v); err != nil || v.Step == nil {
			return 0, "", errors.Newf("want {\"step\": N, \"path\": \"...\"}, got %q", s)
		}
		return *v.Step, v.Path, nil
	}
	if n, err := strconv.ParseInt(s, 10, 64); err == nil {
		return n, "", nil
	}
	found := false
	for _, f := range strings.Fields(s) {
		k, v, ok := strings.Cut(f, "=")
		switch {
		case !ok:
			return 0, "", errors.Newf("want step=N path=P, got %q", f)
		case k == "step":
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil {
				return 0, "", errors.Newf("step %q is not a number", v)
			}
			step, found = n, true
		case k == "path":
			path = v
		}
	}
	if !found {
		return 0, "", errors.Newf("no step in %q", s)
	}
	return step, path, nil
}

// sendAck forwards an ack to the drain service and waits for its verdict.
func (a *agent) sendAck(ctx context.Context, ack domain.CheckpointAck) error {
	reply, err := a.requestAck(ctx, ack)
	if err != nil {
		return err
	}
	if !reply.OK {
		return errors.New(reply.Error)
	}
	return nil
}

// requestAck forwards an ack to the drain service on this node's ack
// subject and returns its answer, retrying while no drain replica answers.
func (a *agent) requestAck(ctx context.Context, ack domain.CheckpointAck) (domain.AckReply, error) {
	data, _ := json.Marshal(ack)
	req := nats.NewMsg(subjects.CheckpointAckFrom(a.cfg.Node.Name))
	req.Data = data
	telemetry.Inject(ctx, req.Header)
	for i := range 20 {
		rctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		msg, err := a.Bus.NC.RequestMsgWithContext(rctx, req)
		cancel()
		if err == nil {
			var reply domain.AckReply
			if err := json.Unmarshal(msg.Data, &reply); err != nil {
				return domain.AckReply{}, errors.Wrap(err, "decode ack reply")
			}
			return reply, nil
		}
		if ctx.Err() != nil {
			return domain.AckReply{}, ctx.Err()
		}
		clock.Sleep(ctx, time.Duration(i+1)*100*time.Millisecond)
	}
	return domain.AckReply{}, errors.New("no drain service answered")
}
