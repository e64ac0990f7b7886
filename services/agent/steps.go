package agent

import (
	"context"
	"crypto/subtle"
	"encoding/json"
	"fmt"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cockroachdb/errors"

	"github.com/lockstep-dev/lockstep/shared/contract/domain"
	"github.com/lockstep-dev/lockstep/shared/contract/subjects"
)

// The launching side of batch job steps. `srun` in a batch script asks
// the agent of its node (the job's first) over the agent socket, with the
// attempt's token, to run a step; the agent lays it out on the job's
// nodes, sends each its launch, relays the tasks' output and exits back
// to srun as they come, and answers with srun's exit code once every task
// ended. srun going away (SIGINT, SIGTERM) kills the step; so does the
// job ending.

// SrunRequest is srun's request on the agent socket (op "srun").
type SrunRequest struct {
	JobID   string `json:"jobId"`
	Attempt int    `json:"attempt"`
	// Nodes, NTasks and TasksPerNode are -N, -n and --ntasks-per-node (0:
	// not given).
	Nodes         int               `json:"nodes,omitempty"`
	NTasks        int               `json:"ntasks,omitempty"`
	TasksPerNode  int               `json:"tasksPerNode,omitempty"`
	KillOnBadExit bool              `json:"killOnBadExit,omitempty"`
	Argv          []string          `json:"argv"`
	Env           map[string]string `json:"env,omitempty"`
}

// SrunSignal is what srun sends after its request: a signal it caught,
// for the step's tasks (Slurm's srun forwards them the same way).
type SrunSignal struct {
	Signal string `json:"signal"`
}

// SrunEvent is one line of the agent's answer: a task's output line, or
// (Done) the step's end with srun's exit code, or an error.
type SrunEvent struct {
	Task     int    `json:"task"`
	Stream   string `json:"stream,omitempty"`
	Line     string `json:"line,omitempty"`
	Done     bool   `json:"done,omitempty"`
	ExitCode int    `json:"exitCode,omitempty"`
	Error    string `json:"error,omitempty"`
}

// stepKey names one step of one attempt.
type stepKey struct {
	job           string
	attempt, step int
}

// stepRelayBytes bounds the output waiting for one srun: a srun slow to
// write it (a terminal over ssh, NCCL_DEBUG from every rank) has that much
// slack, some 160,000 lines of 100 bytes; past it (a srun whose own output
// nobody reads) the step's output is lost and the step fails.
const stepRelayBytes = 16 << 20

// stepMessageBytes is what a queued message counts beyond its text.
const stepMessageBytes = 64

// stepRelay carries a step's messages to the srun that launched it, in
// the order they came.
type stepRelay struct {
	// nodes are the step's nodes with the tasks each runs: a node speaks
	// for its own tasks only, so none can end another's.
	nodes map[string]stepNode
	bound int // bytes the queue may hold

	mu     sync.Mutex
	queue  []domain.StepOutput
	queued int           // bytes in queue
	ready  chan struct{} // the queue gained messages (capacity 1)
	// lost is closed when a message finds the queue full: the step's
	// output has a gap, and the step fails.
	lost     chan struct{}
	loseOnce sync.Once
}

func newStepRelay(bound int) *stepRelay {
	return &stepRelay{nodes: map[string]stepNode{}, bound: bound, ready: make(chan struct{}, 1), lost: make(chan struct{})}
}

// push queues o without waiting; false when the queue would pass its bound.
func (r *stepRelay) push(o domain.StepOutput) bool {
	size := len(o.Line) + len(o.Error) + stepMessageBytes
	r.mu.Lock()
	if r.queued+size > r.bound {
		r.mu.Unlock()
		return false
	}
	r.queue = append(r.queue, o)
	r.queued += size
	r.mu.Unlock()
	select {
	case r.ready <- struct{}{}:
	default:
	}
	return true
}

// take empties the queue, oldest message first.
func (r *stepRelay) take() []domain.StepOutput {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := r.queue
	r.queue, r.queued = nil, 0
	return out
}

// maxSruns bounds the sruns one job runs at once: each holds a goroutine
// of the root agent and up to stepRelayBytes of output. Slurm's own
// default (MaxStepCount) bounds a job's steps in all at 40,000.
const maxSruns = 256

// srunWriteTimeout bounds one write to an srun (see serveSrun).
const srunWriteTimeout = time.Minute

// serveSrun runs one srun request on connection c.
func (a *agent) serveSrun(ctx context.Context, c *net.UnixConn, in *json.Decoder, token string, req SrunRequest) {
	_ = c.SetDeadline(time.Time{}) // a step runs as long as it runs
	enc := json.NewEncoder(c)
	// Each write has srunWriteTimeout: an srun that stops reading fails
	// its step (its tasks are killed) instead of holding this goroutine,
	// and the output queued for it, as long as the job lives.
	send := func(ev SrunEvent) error {
		_ = c.SetWriteDeadline(time.Now().Add(srunWriteTimeout))
		return enc.Encode(ev)
	}
	fail := func(err error) {
		a.Log.Warn("srun refused", "job", domain.BoundReason(req.JobID), "err", err)
		_ = send(SrunEvent{Done: true, ExitCode: 1, Error: err.Error()})
	}
	g, err := a.exec.admitSrun(req, token, peerUID(c))
	if err != nil {
		fail(err)
		return
	}
	if !g.steps.enterSrun(maxSruns) {
		fail(errors.Newf("job %s already runs %d sruns at once on %s, its most", req.JobID, maxSruns, a.cfg.Node.Name))
		return
	}
	defer g.steps.leaveSrun()
	layout, err := layoutStep(g.as.Nodes, len(g.as.Ranks), stepShape{Nodes: req.Nodes, NTasks: req.NTasks, TasksPerNode: req.TasksPerNode})
	if err != nil {
		fail(err)
		return
	}
	l := domain.StepLaunch{JobID: req.JobID, Attempt: req.Attempt, Step: g.steps.newStep(), Argv: req.Argv, Env: req.Env}
	relay := newStepRelay(stepRelayBytes)
	total := 0
	for _, n := range layout {
		l.Nodes = append(l.Nodes, n.Node)
		l.Tasks = append(l.Tasks, n.Tasks)
		relay.nodes[n.Node] = n
		total += n.Tasks
	}
	if _, err := domain.DecodeStepLaunch(mustJSON(l)); err != nil {
		fail(err)
		return
	}
	key := stepKey{req.JobID, req.Attempt, l.Step}
	a.exec.mu.Lock()
	if a.exec.relays == nil {
		a.exec.relays = map[stepKey]*stepRelay{}
	}
	a.exec.relays[key] = relay
	a.exec.mu.Unlock()
	defer func() {
		a.exec.mu.Lock()
		delete(a.exec.relays, key)
		a.exec.mu.Unlock()
	}()
	self := a.cfg.Node.Name
	sendAll := func(kind string, v any) {
		for _, n := range l.Nodes {
			if err := a.Bus.NC.Publish(subjects.StepTo(kind, self, n), mustJSON(v)); err != nil {
				a.Log.Warn("step message not sent", "job", req.JobID, "step", l.Step, "to", n, "err", err)
			}
		}
	}
	a.Log.Info("step launching", "job", req.JobID, "step", l.Step, "nodes", l.Nodes, "tasks", total)
	sendAll(subjects.StepLaunch, l)

	// srun sends the signals it catches for the tasks; closing its end
	// is how it says stop (it was interrupted).
	gone := make(chan struct{})
	go func() {
		defer close(gone)
		for {
			var sig SrunSignal
			if err := in.Decode(&sig); err != nil {
				return
			}
			if !domain.IsStepSignal(sig.Signal) {
				a.Log.Warn("srun sent a signal steps do not forward", "job", req.JobID, "step", l.Step, "signal", sig.Signal)
				continue
			}
			sendAll(subjects.StepKill, domain.StepKill{JobID: req.JobID, Attempt: req.Attempt, Step: l.Step, Signal: sig.Signal})
		}
	}()
	codes, killedTasks, ended := make([]int, total), make([]bool, total), make([]bool, total)
	exited := 0
	var killing atomic.Bool // the lost output watcher below kills too
	kill := func() {
		if killing.CompareAndSwap(false, true) {
			sendAll(subjects.StepKill, domain.StepKill{JobID: req.JobID, Attempt: req.Attempt, Step: l.Step})
		}
	}
	// Lost output fails the step: its tasks end now, not once srun reads
	// again (this goroutine may be stuck writing to it until then).
	finished := make(chan struct{})
	defer close(finished)
	go func() {
		select {
		case <-relay.lost:
			kill()
		case <-finished:
		}
	}()
	// handle passes one message on to srun; false when the step ends with
	// it (refused).
	handle := func(o domain.StepOutput) bool {
		switch o.Kind {
		case domain.StepStdout, domain.StepStderr:
			if send(SrunEvent{Task: o.Task, Stream: o.Kind, Line: o.Line}) != nil {
				kill()
			}
		case domain.StepRefused:
			_ = send(SrunEvent{Task: o.Task, Stream: domain.StepStderr, Line: "srun: " + o.Error})
			kill()
			_ = send(SrunEvent{Done: true, ExitCode: 1, Error: "step refused: " + o.Error})
			return false
		case domain.StepExit:
			if o.Task >= total || ended[o.Task] {
				return true // a repeated exit must not count as another task's
			}
			ended[o.Task] = true
			exited++
			codes[o.Task], killedTasks[o.Task] = o.Code, killing.Load()
			if o.Code != 0 && req.KillOnBadExit {
				kill()
			}
		}
		return true
	}
	for exited < total {
		select {
		case <-relay.ready:
			for _, o := range relay.take() {
				if !handle(o) {
					return
				}
			}
		case <-relay.lost:
			kill()
			_ = send(SrunEvent{Done: true, ExitCode: 1, Error: stepOutputLost()})
			return
		case <-gone:
			kill()
			return
		case <-g.done:
			_ = send(SrunEvent{Done: true, ExitCode: 1, Error: "the job ended"})
			return
		case <-ctx.Done():
			kill()
			return
		}
	}
	select {
	case <-relay.lost:
		// Every task ended, but some of their output never reached srun.
		_ = send(SrunEvent{Done: true, ExitCode: 1, Error: stepOutputLost()})
	default:
		_ = send(SrunEvent{Done: true, ExitCode: stepExitCode(codes, killedTasks)})
	}
}

// stepOutputLost is what srun is told when its step's output overflowed.
func stepOutputLost() string {
	return fmt.Sprintf("some of the step's output was lost (srun fell %d MiB behind it: is srun's own output read?): the step failed and its tasks were killed", stepRelayBytes>>20)
}

// admitSrun checks srun's request against the attempt running here: the
// token is the attempt's, the job a batch job whose script runs on this
// node, the caller the job's user (or root).
func (e *executor) admitSrun(req SrunRequest, token string, uid int) (*localGang, error) {
	e.mu.Lock()
	g, ok := e.gangs[req.JobID]
	e.mu.Unlock()
	switch {
	case !ok || subtle.ConstantTimeCompare([]byte(g.token), []byte(token)) != 1:
		return nil, errors.Newf("no attempt of job %q runs on %s with this token", req.JobID, e.cfg.Node.Name)
	case g.as.Attempt != req.Attempt:
		return nil, errors.Newf("job %s runs attempt %d on %s, not %d", req.JobID, g.as.Attempt, e.cfg.Node.Name, req.Attempt)
	case g.as.Batch == nil:
		return nil, errors.Newf("job %s is not a batch job: srun runs steps of a batch script", req.JobID)
	case g.as.NodeRank != 0 || len(g.as.Nodes) == 0:
		return nil, errors.Newf("srun runs on the batch script's node, not on %s", e.cfg.Node.Name)
	case len(req.Argv) == 0:
		return nil, errors.New("srun: no command")
	}
	if c := g.acct.Cred; c != nil && uid != int(c.Uid) && uid != 0 {
		return nil, errors.Newf("srun from uid %d, not from the job's user %s", uid, g.acct.Name)
	}
	return g, nil
}

// relayOutput hands a step message to its srun, if it came from the node
// that runs the message's task. It runs in the one subscription callback
// that carries every step message to this node, so it never waits: a
// srun that falls stepRelayBytes behind loses its step's output (and the
// step fails) rather than hold up the launches, kills and output of every
// other step here.
func (e *executor) relayOutput(from string, o domain.StepOutput) {
	e.mu.Lock()
	r, ok := e.relays[stepKey{o.JobID, o.Attempt, o.Step}]
	e.mu.Unlock()
	if !ok {
		return
	}
	n, ok := r.nodes[from]
	if !ok {
		return
	}
	if o.Task < n.FirstTask || o.Task >= n.FirstTask+n.Tasks {
		e.log.Warn("step message dropped: the task is not the sending node's", "job", o.JobID, "step", o.Step, "from", from, "task", o.Task, "kind", o.Kind)
		return
	}
	select {
	case <-r.lost:
		return // the step failed; what comes after the gap is not relayed
	default:
	}
	if !r.push(o) {
		r.loseOnce.Do(func() {
			e.log.Warn("step output lost: srun is not reading it; the step fails", "job", o.JobID, "attempt", o.Attempt, "step", o.Step)
			close(r.lost)
		})
	}
}

// Srun sends a step request to the agent at sock with the attempt's
// token, forwards what comes on signals (names domain.IsStepSignal accepts) to
// the step's tasks, calls onEvent for every output line, and returns
// srun's exit code. Cancelling ctx (srun interrupted) closes the
// connection, which kills the step.
func Srun(ctx context.Context, sock, token string, req SrunRequest, signals <-chan string, onEvent func(SrunEvent)) (int, error) {
	var d net.Dialer
	c, err := d.DialContext(ctx, "unix", sock)
	if err != nil {
		return 1, errors.Wrapf(err, "reach the node's agent at %s", sock)
	}
	defer c.Close()
	stop := context.AfterFunc(ctx, func() { _ = c.Close() })
	defer stop()
	enc := json.NewEncoder(c)
	if err := enc.Encode(socketRequest{Op: opSrun, ackRequest: ackRequest{Token: token}, Srun: &req}); err != nil {
		return 1, errors.Wrap(err, "send the step to the agent")
	}
	go func() {
		for sig := range signals {
			_ = enc.Encode(SrunSignal{Signal: sig})
		}
	}()
	dec := json.NewDecoder(c)
	for {
		var ev SrunEvent
		if err := dec.Decode(&ev); err != nil {
			if ctx.Err() != nil {
				return 1, ctx.Err()
			}
			return 1, errors.Wrap(err, "read the step's output from the agent")
		}
		if ev.Done {
			if ev.Error != "" {
				return ev.ExitCode, errors.Newf("%s", ev.Error)
			}
			return ev.ExitCode, nil
		}
		onEvent(ev)
	}
}
