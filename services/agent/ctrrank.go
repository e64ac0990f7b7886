package agent

import (
	"context"
	"io"
	"log/slog"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/cockroachdb/errors"
	"go.opentelemetry.io/otel/attribute"
	"golang.org/x/sys/unix"

	"github.com/lockstep-dev/lockstep/services/agent/containers"
	"github.com/lockstep-dev/lockstep/shared/contract/domain"
	"github.com/lockstep-dev/lockstep/shared/contract/jobspec"
	"github.com/lockstep-dev/lockstep/shared/contract/rankenv"
	"github.com/lockstep-dev/lockstep/shared/core/place"
	"github.com/lockstep-dev/lockstep/shared/plumbing/telemetry"
)

// startEngine connects to the container engine and removes what an
// earlier agent of this node left: at start this agent runs no attempt,
// so every container labelled with this node is a leftover.
func startEngine(ctx context.Context, cfg Config, log *slog.Logger) (*containers.Docker, error) {
	d, err := containers.NewDocker(cfg.ContainerHost, containers.WithSharing(containers.Sharing{Container: cfg.ContainerShare, DataDir: cfg.DataDir}))
	if err != nil {
		return nil, errors.Wrap(err, "--container-runtime docker")
	}
	pctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if err := d.Ping(pctx); err != nil {
		_ = d.Close()
		return nil, errors.Wrap(err, "--container-runtime docker (--container-host)")
	}
	n, err := containers.Reap(pctx, d, cfg.Node.Name, cfg.DataDir, func(string, int) bool { return false })
	if err != nil {
		log.Warn("leftover rank containers not all removed", "err", err)
	}
	if n > 0 {
		log.Info("removed rank containers an earlier agent left", "count", n)
	}
	return d, nil
}

// ctrRank is a rank running in a container, behind the same small
// interface as a process (rank).
type ctrRank struct {
	d      *containers.Docker
	id     string
	ctx    context.Context
	outs   []io.Writer
	copied <-chan struct{}
	exited chan struct{}
}

// engineCallTimeout bounds one engine call that should be quick (a
// signal, a removal): a hung engine must not hang the executor.
const engineCallTimeout = 30 * time.Second

func (c *ctrRank) signal(sig syscall.Signal) {
	if sig == syscall.SIGKILL {
		c.kill()
		return
	}
	ctx, cancel := context.WithTimeout(c.ctx, engineCallTimeout)
	defer cancel()
	_ = c.d.Signal(ctx, c.id, unix.SignalName(sig))
}

func (c *ctrRank) kill() {
	if isClosed(c.exited) {
		return
	}
	ctx, cancel := context.WithTimeout(c.ctx, engineCallTimeout)
	defer cancel()
	_ = c.d.Signal(ctx, c.id, "SIGKILL")
}

// finish waits for the container, closes its output and removes it.
func (c *ctrRank) finish() int {
	code, err := c.d.Wait(c.ctx, c.id)
	close(c.exited)
	if err != nil && code == 0 {
		code = 255
	}
	// The attach stream ends with the container: its last lines are
	// written before the sinks close (bounded: a stuck stream must not
	// hold the exit report).
	select {
	case <-c.copied:
	case <-time.After(5 * time.Second):
	}
	closeAll(c.outs)
	// A container not removed now is reaped at the agent's next start.
	ctx, cancel := context.WithTimeout(c.ctx, engineCallTimeout)
	defer cancel()
	_ = c.d.Remove(ctx, c.id)
	return code
}

// noEngine is why a node without a container engine runs no container
// job (its pull fails with it, and so would its ranks).
func (e *executor) noEngine() error {
	return errors.Newf("node %s runs no container jobs: its agent was started without --container-runtime docker", e.cfg.Node.Name)
}

// startContainers starts each rank of g in its own container: the image
// is made present first (verified, when the gang's pull phase made it
// present; else as container.pullPolicy says), then the ranks start with
// the environment, pinning and GPUs bare ranks get.
func (e *executor) startContainers(g *localGang, setup rankSetup, dir, note string) error {
	as := g.as
	spec := as.Container.WithDefaults()
	if e.engine == nil {
		return e.noEngine()
	}
	user, err := containerUser(spec.User, g.acct, e.self)
	if err != nil {
		return err
	}
	policy := spec.PullPolicy
	if e.pulledFor(as.JobID, as.Attempt) {
		// The gang's pull phase made it present here: only verify.
		policy = jobspec.PullNever
	}
	ctx, span := telemetry.StartChild(g.regCtx, telemetry.SpanImage, attribute.String("lockstep.image", spec.Image))
	t0 := time.Now()
	pulled, err := e.engine.Ensure(ctx, spec.Image, policy)
	took := time.Since(t0)
	span.SetAttributes(attribute.Bool("lockstep.image.pulled", pulled), attribute.Int64("lockstep.image.ensure_ms", took.Milliseconds()))
	span.End()
	if err != nil {
		return errors.Wrapf(err, "container image for job %s", as.JobID)
	}
	e.log.Info("container image ready", "job", as.JobID, "image", spec.Image, "policy", spec.PullPolicy, "pulled", pulled, "took", took)
	mounts := append([]jobspec.Mount{{Source: dir, Target: dir}}, spec.Mounts...)
	if setup.sock != "" {
		mounts = append(mounts, jobspec.Mount{Source: setup.sock, Target: setup.sock})
	}
	setup.shimDir = "" // the Slurm shims are host binaries
	var gpus []string
	if len(e.cfg.GPUUUIDs) == e.cfg.Node.GPUs && e.cfg.Node.GPUs > 0 {
		setup.uuids = e.cfg.GPUUUIDs // renumbered inside: only UUIDs name them there
	}
	rctx := context.WithoutCancel(g.regCtx)
	shm := int64(0)
	if len(as.Ranks) == 1 {
		// A node's only rank may have its own /dev/shm: no other rank of
		// the job needs its IPC namespace (containers.Rank.ShmSize).
		shm = spec.ShmSize
	} else if spec.ShmSize > 0 {
		e.log.Info("container.shmSize not applied: the node's ranks share the host's IPC namespace", "job", as.JobID, "ranks", len(as.Ranks))
	}
	for _, r := range as.Ranks {
		env := containerEnv(setup, r, spec.Env)
		cpus, mems := place.Pin(e.cfg.Node, r, as.GPUBind == "closest")
		if have := onlineCPUs(cpus); len(have) < len(cpus) {
			// As for a bare rank: pinned to those of its cores this machine
			// has (a simulated node claims more), unpinned if none.
			e.log.Warn("rank pinned to fewer cores: not all of its cores are on this machine", "job", as.JobID, "rank", r.Rank, "cores", have)
			cpus = have
			if len(have) == 0 {
				mems = nil
			}
		}
		if setup.uuids != nil {
			gpus = nil
			for _, i := range r.GPUs {
				gpus = append(gpus, setup.uuids[i])
			}
		}
		cr := containers.Rank{Job: as.JobID, Attempt: as.Attempt, Rank: r.Rank, Node: e.cfg.Node.Name, Scope: e.cfg.DataDir, Image: spec.Image,
			Command: as.Command, Env: env, Workdir: spec.Workdir, Mounts: mounts, CPUs: cpus, Mems: mems, GPUs: gpus, User: user, ShmSize: shm,
			MemoryBytes: containers.MemoryShare(e.hostMemory, len(r.GPUs), e.cfg.Node.GPUs),
			Devices:     containers.RDMADevices("/", place.ClosestNICs(setup.hw, r.GPUs))}
		logFile := dir + "/rank-" + strconv.Itoa(r.Rank) + ".log"
		stdout, stderr := e.newSink(as, r.Rank, "stdout", logFile), e.newSink(as, r.Rank, "stderr", logFile)
		if note != "" {
			_, _ = io.WriteString(stderr, note)
		}
		id, copied, err := e.engine.Start(rctx, containers.CreateOptions(cr), stdout, stderr)
		if err != nil {
			closeAll([]io.Writer{stdout, stderr})
			return errors.Wrapf(err, "start rank %d in image %s", r.Rank, spec.Image)
		}
		g.procs = append(g.procs, &ctrRank{d: e.engine, id: id, ctx: rctx, outs: []io.Writer{stdout, stderr}, copied: copied, exited: make(chan struct{})})
	}
	return nil
}

// containerEnv is a bare rank's environment, with container.env over the
// spec's env, and PATH the image's usual one, not the node's.
func containerEnv(s rankSetup, r domain.Rank, extra map[string]string) []string {
	env := rankEnvOf(s, r)
	env.Path = rankenv.DefaultPath
	if len(extra) > 0 {
		spec := make(map[string]string, len(env.Spec)+len(extra))
		for k, v := range env.Spec {
			spec[k] = v
		}
		for k, v := range extra {
			spec[k] = v
		}
		env.Spec = spec
	}
	return lastWins(env.List())
}

// lastWins keeps one entry per name, the last, as os/exec does: an engine
// need not (Lockstep's own variables come last and must be the ones seen).
func lastWins(env []string) []string {
	at := map[string]int{}
	out := make([]string, 0, len(env))
	for _, kv := range env {
		k, _, _ := strings.Cut(kv, "=")
		if i, ok := at[k]; ok {
			out[i] = kv
			continue
		}
		at[k] = len(out)
		out = append(out, kv)
	}
	return out
}

// containerUser is uid:gid of whom the ranks run as in the container:
// the account a bare rank would run as (the owner's, or the agent's own
// when it runs ranks as itself). container.user may only name that
// account: a container is never a way to become somebody else, root
// included.
func containerUser(asked string, acct, self account) (string, error) {
	uid, gid := unix.Getuid(), unix.Getgid()
	if acct.Cred != nil {
		uid, gid = int(acct.Cred.Uid), int(acct.Cred.Gid)
	}
	ids := strconv.Itoa(uid) + ":" + strconv.Itoa(gid)
	name := acct.Name
	if acct.Cred == nil {
		name = self.Name
	}
	switch asked {
	case "", name, strconv.Itoa(uid), ids:
		return ids, nil
	}
	return "", errors.Newf("container.user %q is not the job's account %s (%s); containers run as the job's owner", asked, name, ids)
}

// onlineCPUs is those of cpus this process may run on (a simulated node
// may claim more than the machine has).
func onlineCPUs(cpus []int) []int {
	var set unix.CPUSet
	if err := unix.SchedGetaffinity(0, &set); err != nil {
		return nil
	}
	var out []int
	for _, c := range cpus {
		if c < 1024 && set.IsSet(c) {
			out = append(out, c)
		}
	}
	return out
}

func closeAll(ws []io.Writer) {
	for _, w := range ws {
		if c, ok := w.(io.Closer); ok {
			_ = c.Close()
		}
	}
}
