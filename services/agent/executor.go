package agent

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"maps"
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

	"github.com/lockstep-dev/lockstep/services/agent/containers"
	"github.com/lockstep-dev/lockstep/shared/contract/domain"
	"github.com/lockstep-dev/lockstep/shared/core/place"
	"github.com/lockstep-dev/lockstep/shared/plumbing/bus"
	"github.com/lockstep-dev/lockstep/shared/plumbing/telemetry"
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
	// root says whether the agent may start ranks as other users; self is
	// the agent's own account, for ranks that run as the agent.
	root bool
	self account
	// natsURL is the bus's address as ranks get it (no credentials); sock
	// is the ack socket's path ("" when it is not served).
	natsURL, sock string
	// shimDir holds the Slurm command shims ("" when they could not be
	// made).
	shimDir string

	// engine runs container jobs' ranks (nil: this node refuses them).
	engine *containers.Docker
	// lifeline is the socket rank containers hold a connection to, and
	// lifelineBin the static binary that holds it in each (reexec/lifeline.go);
	// "" when containers run without.
	lifeline, lifelineBin string
	// hostMemory is the machine's memory in bytes, shared among rank
	// containers by their GPUs (containers.MemoryShare); 0: unknown.
	hostMemory int64
	// pulls are the container gangs' pull phases on this node, by job
	// (pull.go); guarded by mu.
	pulls map[string]*imagePull

	mu    sync.Mutex
	gangs map[string]*localGang
	// relays are the steps this node's sruns are running (steps.go).
	relays map[stepKey]*stepRelay
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
	procs []rank
	// stopping is closed when the scheduler asked for the ranks to stop;
	// exits after that are not reported as failures.
	stopping chan struct{}
	stopOnce sync.Once
	// exited is closed when every rank has exited, before the exit is
	// reported: the ack watchers take their last look then, and the report
	// waits for them (acks), so drain hears of a checkpoint a rank wrote
	// just before exiting ahead of the exit itself.
	exited chan struct{}
	ackMu  sync.Mutex // orders acks.Add before the wait in supervise
	acks   sync.WaitGroup
	done   chan struct{}
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
	// token is the attempt's ack token (acksock.go); acct is who its ranks
	// run as.
	token string
	acct  account
	// setup and workdir are what every process of the attempt here is
	// started with (srun's step tasks too); steps are those tasks.
	setup   rankSetup
	workdir string
	steps   gangSteps
	// img is a container batch job's image and mounts, for its script
	// and step tasks (nil: they run bare).
	img *ctrImage
}

func newExecutor(cfg Config, b *bus.Bus, box *container, log *slog.Logger, report func(context.Context, domain.Report)) *executor {
	e := &executor{cfg: cfg, bus: b, box: box, log: log, report: report, gangs: map[string]*localGang{}, launched: map[string]int{}, pulls: map[string]*imagePull{},
		root: os.Geteuid() == 0, self: selfAccount(), natsURL: publicNATS(cfg.NATSURL)}
	if !e.root {
		log.Info("agent not running as root: ranks run as the agent's own user, not as their owners", "user", e.self.Name)
	}
	return e
}

// launchedBefore reports whether this attempt (or a later one) of the job
// was already started here.
func (e *executor) launchedBefore(jobID string, attempt int) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	last, ok := e.launched[jobID]
	return ok && last >= attempt
}

// forget drops the memory of a job whose assignment is gone, and ends
// its pull if one is under way.
func (e *executor) forget(jobID string) {
	e.endPulls(func(id string) bool { return id != jobID })
	e.mu.Lock()
	delete(e.launched, jobID)
	e.mu.Unlock()
}

// start launches every local rank of an assignment, or none: if one fails
// to start, those already started are killed. assignRev is the
// assignment's CreateRevision (see runningKeys.hold). ctx carries the
// launch span.
func (e *executor) start(ctx context.Context, as domain.Assignment, assignRev int64) error {
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

	// Who the ranks run as is settled before anything of them touches the
	// disk: an owner this node cannot run as fails the job here.
	acct, err := e.runAs(as.Owner)
	if err != nil {
		return err
	}
	e.dirMu.Lock()
	defer e.dirMu.Unlock()
	dir, err := e.attemptDir(as, acct)
	if err != nil {
		return err
	}
	// Recorded before anything of the attempt runs: gang reserves no later
	// attempt of the job until the key is gone (see runningKeys).
	runRev, err := e.alive.hold(ctx, as, assignRev)
	if err != nil {
		return err
	}
	g := &localGang{as: as, stopping: make(chan struct{}), exited: make(chan struct{}), done: make(chan struct{}), regCtx: ctx, runRev: runRev, token: newToken(), acct: acct}
	workdir, note := rankWorkdir(as.Workdir, dir, e.cfg.Node.Name)
	if note != "" {
		e.log.Warn("working directory unusable; using the attempt's directory", "job", as.JobID, "workdir", as.Workdir, "instead", dir)
	}
	setup := rankSetup{as: as, hw: e.cfg.Node, node: e.cfg.Node.Name, acct: acct, natsURL: e.natsURL, sock: e.sock, token: g.token, ackDir: dir,
		slurm: slurmJob(as, workdir), shimDir: e.shimDir}
	if e.cfg.VisibleDevices == VisibleUUID {
		setup.uuids = e.cfg.GPUUUIDs
	}
	g.setup, g.workdir = setup, workdir
	start := e.startRanks
	switch {
	case as.Batch != nil:
		start = e.startBatch
	case as.Container != nil:
		start = func(g *localGang, setup rankSetup, _, dir, note string) error {
			return e.startContainers(g, setup, dir, note)
		}
	}
	if err := start(g, setup, workdir, dir, note); err != nil {
		g.killStarted()
		go e.alive.drop(ctx, as, runRev)
		return err
	}
	// The run outlives the launch (and the watch that saw it): only its
	// trace context is kept.
	g.ctx, g.span = telemetry.StartChild(context.WithoutCancel(ctx), telemetry.SpanRun,
		telemetry.AttrJobID.String(as.JobID), telemetry.AttrRanks.Int(len(as.Ranks)))
	e.mu.Lock()
	if ctx.Err() != nil {
		// The registration ended while the ranks started (its lease lost,
		// the agent stopping): its fence has already listed the gangs to
		// kill, so these would outlive it, beside their replacements.
		e.mu.Unlock()
		g.killStarted()
		g.span.End() // its running key goes with the registration's lease
		return errors.Wrapf(ctx.Err(), "registration ended while job %s's ranks started", as.JobID)
	}
	e.gangs[as.JobID] = g
	e.launched[as.JobID] = as.Attempt
	e.mu.Unlock()
	e.log.InfoContext(ctx, "ranks started", "job", as.JobID, "attempt", as.Attempt, "ranks", len(as.Ranks), "user", acct.Name)
	if len(g.procs) == 0 {
		go e.hold(g) // a batch job's node other than the script's
	} else {
		go e.supervise(g)
	}
	return nil
}

// parallelStarts bounds the ranks of one assignment that start at once:
// a node's GPUs' worth, so a many-task assignment does not fork a storm.
const parallelStarts = 8

// startRanks starts the assignment's ranks, parallelStarts at a time, and
// adds them to g.procs in rank order. Each start waits for its
// supervisor's answer that the rank runs: one after another, a node's
// eight ranks made the gang wait eight of those answers, and a gang
// starts when its slowest node has. If any start fails, g.procs holds the
// ranks that did start, for the caller to end, and the error is the
// lowest failing rank's.
func (e *executor) startRanks(g *localGang, setup rankSetup, workdir, dir, note string) error {
	ranks := g.as.Ranks
	started := make([]*rankProc, len(ranks))
	errs := make([]error, len(ranks))
	slots := make(chan struct{}, parallelStarts)
	var wg sync.WaitGroup
	for i, r := range ranks {
		wg.Go(func() {
			slots <- struct{}{}
			defer func() { <-slots }()
			started[i], errs[i] = e.startRank(g, setup, r, workdir, dir, note)
		})
	}
	wg.Wait()
	for _, p := range started {
		if p != nil {
			g.procs = append(g.procs, p)
		}
	}
	return firstError(errs)
}

// firstError is the first non-nil error of errs, nil if there is none.
func firstError(errs []error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// startRank starts one rank of g's assignment under its supervisor, its
// output to the job's log subjects and to the rank's file in dir.
func (e *executor) startRank(g *localGang, setup rankSetup, r domain.Rank, workdir, dir, note string) (*rankProc, error) {
	as, acct := g.as, g.acct
	cmd := exec.Command(as.Command[0], as.Command[1:]...)
	cmd.Dir = workdir
	cmd.Env = rankEnv(setup, r)
	if acct.Cred != nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: acct.Cred}
	}
	logFile := filepath.Join(dir, "rank-"+strconv.Itoa(r.Rank)+".log")
	cmd.Stdout, cmd.Stderr = e.newSinks(as, r.Rank, logFile)
	if note != "" {
		_, _ = io.WriteString(cmd.Stderr, note)
	}
	// Cores and memory as the agent's own layout says (with closest
	// binding, its GPUs' NUMA node).
	var pin rankPin
	pin.cpus, pin.mems = place.Pin(e.cfg.Node, r, as.GPUBind == "closest")
	p, pinErr, err := e.box.start(cmd, pin)
	if err != nil {
		closeAll([]io.Writer{cmd.Stdout, cmd.Stderr})
		return nil, errors.Wrapf(err, "start rank %d (%s)", r.Rank, as.Command[0])
	}
	if pinErr != nil {
		// Simulated nodes may claim more cores than this machine has;
		// the rank runs unpinned rather than not at all.
		e.log.Warn("rank not pinned", "job", as.JobID, "rank", r.Rank, "err", pinErr)
	}
	return p, nil
}

// rank is one running rank: a process tree (rankProc) or a container
// (ctrRank). The executor knows nothing else of it.
type rank interface {
	// signal sends sig to the rank (SIGKILL ends it at once).
	signal(sig syscall.Signal)
	// kill ends the rank now.
	kill()
	// finish waits for the rank's end, flushes and closes its output, lets
	// go of what it held, and returns its exit code (128+n for signal n).
	finish() int
	// ended reports whether the rank has exited.
	ended() bool
}

func (p *rankProc) ended() bool { return isClosed(p.exited) }

// finish is rank.finish for a process tree.
func (p *rankProc) finish() int {
	err := p.wait() // also flushes the rank's output
	for _, w := range []io.Writer{p.cmd.Stdout, p.cmd.Stderr} {
		if c, ok := w.(io.Closer); ok {
			_ = c.Close()
		}
	}
	return exitCode(p.cmd, err)
}

// supervise waits for every rank and reports: the first non-zero exit at
// once (gang stops everywhere), or success when all exited 0.
func (e *executor) supervise(g *localGang) {
	type exit struct{ rank, code int }
	exits := make(chan exit, len(g.procs))
	for i, p := range g.procs {
		go func() {
			exits <- exit{rank: g.as.Ranks[i].Rank, code: p.finish()}
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
	// A batch script's steps end with it, as in Slurm.
	e.endSteps(g)
	g.ackMu.Lock()
	close(g.exited)
	g.ackMu.Unlock()
	waitAtMost(&g.acks, ackFlushTimeout)
	if !failed && !isClosed(g.stopping) {
		e.report(ctx, domain.Report{JobID: g.as.JobID, Attempt: g.as.Attempt, Kind: domain.ReportExited})
	}
	e.retire(g)
	g.span.SetAttributes(attribute.Bool("lockstep.failed", failed), attribute.Bool("lockstep.stopped", isClosed(g.stopping)))
	g.span.End()
	e.log.InfoContext(ctx, "ranks exited", "job", g.as.JobID, "attempt", g.as.Attempt, "failed", failed)
}

// retire forgets g once nothing of it runs: its ranks (or a batch share's
// hold) have ended and its exits are recorded.
func (e *executor) retire(g *localGang) {
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
	if grace <= 0 {
		// A fence kills at once even a gang already stopping within a
		// grace (its assignment just released, say): the stop below runs
		// once, and its SIGKILL would come after the grace, past the
		// lease whose end lets a replacement start.
		g.stopOnce.Do(func() {
			close(g.stopping)
			e.log.Info("stopping ranks", "job", jobID, "reason", reason)
		})
		e.signalAll(g, syscall.SIGKILL)
		return
	}
	g.stopOnce.Do(func() {
		close(g.stopping)
		e.log.Info("stopping ranks", "job", jobID, "reason", reason)
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
	e.endPulls(func(string) bool { return false })
	e.stopGangs(func(string) bool { return false }, reason, grace)
	e.mu.Lock()
	clear(e.launched)
	e.mu.Unlock()
}

// keepOnly stops every gang for which keep returns false and waits for
// them, and forgets the jobs it does not keep: their assignments are gone,
// deleted while the watch that would have said so was down.
func (e *executor) keepOnly(keep func(jobID string) bool, reason string) {
	e.endPulls(keep)
	e.stopGangs(keep, reason, e.cfg.StopGrace)
	e.mu.Lock()
	maps.DeleteFunc(e.launched, func(jobID string, _ int) bool { return !keep(jobID) })
	e.mu.Unlock()
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

// killStarted kills the ranks a start got going before it gave up, and
// waits for them.
func (g *localGang) killStarted() {
	for _, p := range g.procs {
		p.kill()
		_ = p.finish()
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

func exitCode(p *exec.Cmd, err error) int {
	if p.ProcessState == nil {
		return 255
	}
	if ws, ok := p.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return 128 + int(ws.Signal())
	}
	return p.ProcessState.ExitCode()
}

// ackFlushTimeout bounds how long an exit report waits for the ack
// watchers' last look (a file read and one request to drain).
const ackFlushTimeout = 10 * time.Second

// waitAtMost waits for wg, or d, whichever comes first.
func waitAtMost(wg *sync.WaitGroup, d time.Duration) {
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-done:
	case <-t.C:
	}
}

func isClosed(ch chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}
