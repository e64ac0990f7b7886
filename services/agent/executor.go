package agent

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/cockroachdb/errors"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"

	"github.com/lockstep-dev/lockstep/shared/bus"
	"github.com/lockstep-dev/lockstep/shared/domain"
	"github.com/lockstep-dev/lockstep/shared/telemetry"
)

// executor runs the ranks of the gangs assigned to this node.
type executor struct {
	cfg    Config
	bus    *bus.Bus
	log    *slog.Logger
	report func(context.Context, domain.Report)
	// box contains each rank's whole process tree.
	box *container
	// alive says in etcd which jobs have ranks alive here (nil: nowhere,
	// in tests of the executor alone).
	alive *runningKeys

	mu    sync.Mutex
	gangs map[string]*localGang
	// launched remembers the latest attempt started per job, so a rewrite
	// of the same assignment (the launch barrier detaches it from its lease)
	// never starts finished ranks again. Entries go when the assignment does.
	launched map[string]int
	// dirMu keeps the retention sweep from removing a job's directory while
	// an attempt of it is being started.
	dirMu sync.Mutex
}

// localGang is this node's share of one gang attempt.
type localGang struct {
	as    domain.Assignment
	procs []*rankProc
	// stopping is closed when the scheduler asked for the ranks to stop;
	// exits after that are not reported as failures.
	stopping chan struct{}
	stopOnce sync.Once
	done     chan struct{}
	// drainSignalled is the drain (by request time) already signalled.
	drainSignalled time.Time
	// ctx carries the span of the ranks' run (from start to the last exit);
	// reports about them are sent under it.
	ctx  context.Context
	span trace.Span
	// regCtx is the registration's: it ends with the lease the running
	// key (written at runRev) is attached to.
	regCtx context.Context
	runRev int64
}

func newExecutor(cfg Config, b *bus.Bus, box *container, log *slog.Logger, report func(context.Context, domain.Report)) *executor {
	return &executor{cfg: cfg, bus: b, box: box, log: log, report: report, gangs: map[string]*localGang{}, launched: map[string]int{}}
}

// launchedBefore reports whether this attempt (or a later one) of the job
// was already started here.
func (e *executor) launchedBefore(jobID string, attempt int) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	last, ok := e.launched[jobID]
	return ok && last >= attempt
}

// forget drops the memory of a job whose assignment is gone.
func (e *executor) forget(jobID string) {
	e.mu.Lock()
	delete(e.launched, jobID)
	e.mu.Unlock()
}

// start launches every local rank of an assignment, or none: if one fails
// to start, those already started are killed. ctx carries the launch span.
func (e *executor) start(ctx context.Context, as domain.Assignment) error {
	if len(as.Command) == 0 || len(as.Ranks) == 0 {
		return errors.Newf("assignment of job %s has no command or no ranks", as.JobID)
	}
	e.mu.Lock()
	if old, ok := e.gangs[as.JobID]; ok {
		// An older attempt still here: it must go before the new one starts.
		e.mu.Unlock()
		e.stop(as.JobID, "superseded by attempt "+strconv.Itoa(as.Attempt))
		<-old.done
		e.mu.Lock()
	}
	e.mu.Unlock()

	e.dirMu.Lock()
	defer e.dirMu.Unlock()
	dir := filepath.Join(e.cfg.DataDir, "jobs", as.JobID, strconv.Itoa(as.Attempt))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return errors.Wrap(err, "rank working directory")
	}
	// Recorded before anything of the attempt runs: gang reserves no later
	// attempt of the job until the key is gone (see runningKeys).
	runRev, err := e.alive.hold(ctx, as)
	if err != nil {
		return err
	}
	g := &localGang{as: as, stopping: make(chan struct{}), done: make(chan struct{}), regCtx: ctx, runRev: runRev}
	workdir, note := rankWorkdir(as.Workdir, dir, e.cfg.Node.Name)
	if note != "" {
		e.log.Warn("working directory unusable; using the attempt's directory", "job", as.JobID, "workdir", as.Workdir, "instead", dir)
	}
	for _, r := range as.Ranks {
		cmd := exec.Command(as.Command[0], as.Command[1:]...)
		cmd.Dir = workdir
		cmd.Env = rankEnv(as, r, e.cfg.Node.Name, e.cfg.NATSURL, ackFile(dir, r.Rank))
		logFile := filepath.Join(dir, "rank-"+strconv.Itoa(r.Rank)+".log")
		cmd.Stdout = e.newSink(as.JobID, r.Rank, "stdout", logFile)
		cmd.Stderr = e.newSink(as.JobID, r.Rank, "stderr", logFile)
		if note != "" {
			_, _ = io.WriteString(cmd.Stderr, note)
		}
		p, pinErr, err := e.box.start(cmd, r.CPUs)
		if err != nil {
			for _, p := range g.procs {
				p.kill()
				_ = p.wait()
			}
			go e.alive.drop(ctx, as, runRev)
			return errors.Wrapf(err, "start rank %d (%s)", r.Rank, as.Command[0])
		}
		g.procs = append(g.procs, p)
		if pinErr != nil {
			// Simulated nodes may claim more cores than this machine has;
			// the rank runs unpinned rather than not at all.
			e.log.Warn("rank not pinned", "job", as.JobID, "rank", r.Rank, "err", pinErr)
		}
	}
	// The run outlives the launch (and the watch that saw it): only its
	// trace context is kept.
	g.ctx, g.span = telemetry.StartChild(context.WithoutCancel(ctx), telemetry.SpanRun,
		telemetry.AttrJobID.String(as.JobID), telemetry.AttrRanks.Int(len(as.Ranks)))
	e.mu.Lock()
	e.gangs[as.JobID] = g
	e.launched[as.JobID] = as.Attempt
	e.mu.Unlock()
	e.log.InfoContext(ctx, "ranks started", "job", as.JobID, "attempt", as.Attempt, "ranks", len(as.Ranks))
	go e.supervise(g)
	return nil
}

// supervise waits for every rank and reports: the first non-zero exit at
// once (gang stops everywhere), or success when all exited 0.
func (e *executor) supervise(g *localGang) {
	type exit struct{ rank, code int }
	exits := make(chan exit, len(g.procs))
	for i, p := range g.procs {
		go func() {
			err := p.wait() // also flushes the rank's output
			for _, w := range []io.Writer{p.cmd.Stdout, p.cmd.Stderr} {
				if c, ok := w.(io.Closer); ok {
					_ = c.Close()
				}
			}
			exits <- exit{rank: g.as.Ranks[i].Rank, code: exitCode(p.cmd, err)}
		}()
	}
	ctx := g.ctx
	failed := false
	for range g.procs {
		x := <-exits
		if x.code == 0 || failed || isClosed(g.stopping) {
			continue
		}
		failed = true
		e.report(ctx, domain.Report{JobID: g.as.JobID, Attempt: g.as.Attempt, Kind: domain.ReportFailed, Rank: x.rank, ExitCode: x.code})
		// Kill-on-bad-exit locally right away; gang releases the rest.
		e.signalAll(g, syscall.SIGTERM)
	}
	if !failed && !isClosed(g.stopping) {
		e.report(ctx, domain.Report{JobID: g.as.JobID, Attempt: g.as.Attempt, Kind: domain.ReportExited})
	}
	e.mu.Lock()
	if e.gangs[g.as.JobID] == g {
		delete(e.gangs, g.as.JobID)
	}
	e.mu.Unlock()
	close(g.done)
	// Every rank's wait returned, so every tree is gone: only now may the
	// job's next attempt be reserved. Not before close(done): a lost etcd
	// must not hold up fencing, which waits for done.
	go e.alive.drop(g.regCtx, g.as, g.runRev)
	g.span.SetAttributes(attribute.Bool("lockstep.failed", failed), attribute.Bool("lockstep.stopped", isClosed(g.stopping)))
	g.span.End()
	e.log.InfoContext(ctx, "ranks exited", "job", g.as.JobID, "attempt", g.as.Attempt, "failed", failed)
}

// stop asks a gang's ranks to stop: SIGTERM, then SIGKILL after StopGrace.
func (e *executor) stop(jobID, reason string) { e.stopWithin(jobID, reason, e.cfg.StopGrace) }

// stopWithin stops a gang's ranks: SIGTERM, then SIGKILL after grace (at
// once when grace is 0).
func (e *executor) stopWithin(jobID, reason string, grace time.Duration) {
	e.mu.Lock()
	g, ok := e.gangs[jobID]
	e.mu.Unlock()
	if !ok {
		return
	}
	g.stopOnce.Do(func() {
		close(g.stopping)
		e.log.Info("stopping ranks", "job", jobID, "reason", reason)
		if grace <= 0 {
			e.signalAll(g, syscall.SIGKILL)
			return
		}
		e.signalAll(g, syscall.SIGTERM)
		go func() {
			select {
			case <-g.done:
			case <-time.After(grace):
				e.signalAll(g, syscall.SIGKILL)
			}
		}()
	})
}

// stopAll stops every gang and waits for their ranks to exit.
// It also forgets what was launched: stopAll ends a registration (lease
// lost, shutdown), and assignments of that registration must be reported
// lost, not silently skipped, if they are seen again.
func (e *executor) stopAll(reason string) { e.endRegistration(reason, e.cfg.StopGrace) }

// fenceAll kills every rank at once: the node's lease is (about to be)
// gone, its gangs are being started elsewhere, and a rank that lingers
// would run beside its replacement.
func (e *executor) fenceAll(reason string) { e.endRegistration(reason, 0) }

func (e *executor) endRegistration(reason string, grace time.Duration) {
	e.stopGangs(func(string) bool { return false }, reason, grace)
	e.mu.Lock()
	clear(e.launched)
	e.mu.Unlock()
}

// keepOnly stops every gang for which keep returns false and waits for them.
func (e *executor) keepOnly(keep func(jobID string) bool, reason string) {
	e.stopGangs(keep, reason, e.cfg.StopGrace)
}

func (e *executor) stopGangs(keep func(jobID string) bool, reason string, grace time.Duration) {
	e.mu.Lock()
	var victims []*localGang
	for id, g := range e.gangs {
		if !keep(id) {
			victims = append(victims, g)
		}
	}
	e.mu.Unlock()
	for _, g := range victims {
		e.stopWithin(g.as.JobID, reason, grace)
	}
	for _, g := range victims {
		<-g.done
	}
}

func (e *executor) signalAll(g *localGang, sig syscall.Signal) {
	for _, p := range g.procs {
		p.signal(sig)
	}
}

// rankWorkdir picks the ranks' working directory: the one asked for (the
// spec's, or the submitting shell's by default) if it exists on this node,
// else — as Slurm does — the attempt's own directory, with a note for the
// ranks' stderr saying so. A job submitted from a laptop directory that no
// node has still runs.
func rankWorkdir(asked, attemptDir, node string) (dir, note string) {
	if asked == "" {
		return attemptDir, ""
	}
	st, err := os.Stat(asked)
	if err == nil && st.IsDir() {
		return asked, ""
	}
	if err == nil {
		err = errors.New("not a directory")
	}
	return attemptDir, fmt.Sprintf("lockstep: cannot use working directory %s on %s (%v); running in %s instead\n", asked, node, err, attemptDir)
}

// rankEnv is the agent's environment, then the spec's env, then what
// Lockstep sets (which wins: a spec cannot fake its rank).
func rankEnv(as domain.Assignment, r domain.Rank, node, natsURL, ack string) []string {
	env := os.Environ()
	for k, v := range as.Env {
		env = append(env, k+"="+v)
	}
	resumeFrom, resumeStep := "", ""
	if as.Resume != nil {
		resumeFrom, resumeStep = as.Resume.Path, strconv.FormatInt(as.Resume.Step, 10)
	}
	if len(r.CPUs) > 0 {
		env = append(env, "LOCKSTEP_CPUS="+joinInts(r.CPUs))
	}
	return append(env,
		"LOCKSTEP_NATS="+natsURL,
		"LOCKSTEP_RESTART_COUNT="+strconv.Itoa(as.RestartCount),
		"LOCKSTEP_RESUME_FROM="+resumeFrom,
		"LOCKSTEP_RESUME_STEP="+resumeStep,
		"LOCKSTEP_CHECKPOINT_DIR="+as.CheckpointDir,
		"LOCKSTEP_CHECKPOINT_ACK="+ack,
		"MASTER_ADDR="+as.MasterAddr,
		"MASTER_PORT="+strconv.Itoa(as.MasterPort),
		"WORLD_SIZE="+strconv.Itoa(as.WorldSize),
		"RANK="+strconv.Itoa(r.Rank),
		"LOCAL_RANK="+strconv.Itoa(r.LocalRank),
		"LOCAL_WORLD_SIZE="+strconv.Itoa(len(as.Ranks)),
		"NODE_RANK="+strconv.Itoa(as.NodeRank),
		"NNODES="+strconv.Itoa(as.NNodes),
		"CUDA_VISIBLE_DEVICES="+joinInts(r.GPUs),
		"LOCKSTEP_JOB_ID="+as.JobID,
		"LOCKSTEP_ATTEMPT="+strconv.Itoa(as.Attempt),
		"LOCKSTEP_NODE="+node,
	)
}

func joinInts(xs []int) string {
	b := make([]byte, 0, 3*len(xs))
	for i, x := range xs {
		if i > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendInt(b, int64(x), 10)
	}
	return string(b)
}

func exitCode(p *exec.Cmd, err error) int {
	if p.ProcessState == nil {
		return 255
	}
	if ws, ok := p.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return 128 + int(ws.Signal())
	}
	return p.ProcessState.ExitCode()
}

func isClosed(ch chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}
