package agent

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/cockroachdb/errors"
	"go.opentelemetry.io/otel/attribute"

	"github.com/lockstep-dev/lockstep/services/agent/containers"
	"github.com/lockstep-dev/lockstep/services/agent/reexec"
	"github.com/lockstep-dev/lockstep/shared/contract/domain"
	"github.com/lockstep-dev/lockstep/shared/contract/jobspec"
	"github.com/lockstep-dev/lockstep/shared/contract/rankenv"
	"github.com/lockstep-dev/lockstep/shared/contract/slurmenv"
	"github.com/lockstep-dev/lockstep/shared/core/place"
	"github.com/lockstep-dev/lockstep/shared/plumbing/telemetry"
)

// containerShimDir is where a container finds the Slurm commands: the
// agent's own (static) binary, mounted once per command name, so that a
// batch script in any image, FROM scratch included, finds srun.
const containerShimDir = "/.lockstep/bin"

// ctrImage is what every container of one attempt on this node shares.
type ctrImage struct {
	spec jobspec.Container // with its defaults
	// user is uid:gid inside; mounts the spec's and the agent's own.
	user   string
	mounts []jobspec.Mount
	// shims says the Slurm commands are mounted at containerShimDir.
	shims bool
	// lifeline is the agent's lifeline socket every container's command
	// holds ("" for none: the containers outlive a killed agent).
	lifeline string
}

// containerLifeline is the agent's binary inside a container, run as the
// lifeline (package reexec).
const containerLifeline = containerShimDir + "/" + reexec.LifelineArg0

// prepareContainers makes the attempt's image present (only verified when
// the gang's pull phase made it present; else as container.pullPolicy
// says), settles who runs inside and what is mounted, and sets g.setup
// for containers: GPUs by UUID, the host's shims off PATH.
func (e *executor) prepareContainers(g *localGang, dir string) (ctrImage, error) {
	as := g.as
	spec := as.Container.WithDefaults()
	if e.engine == nil {
		return ctrImage{}, e.noEngine()
	}
	if err := checkMountSources(spec.Mounts, e.cfg.ContainerMountsUnder, os.Lstat); err != nil {
		return ctrImage{}, err
	}
	user, err := containerUser(spec.User, g.acct, e.self)
	if err != nil {
		return ctrImage{}, err
	}
	policy := spec.PullPolicy
	if e.pulledFor(as.JobID, as.Attempt) {
		policy = jobspec.PullNever
	}
	ctx, span := telemetry.StartChild(g.regCtx, telemetry.SpanImage, attribute.String("lockstep.image", spec.Image))
	t0 := time.Now()
	pulled, err := e.engine.Ensure(ctx, spec.Image, policy)
	took := time.Since(t0)
	span.SetAttributes(attribute.Bool("lockstep.image.pulled", pulled), attribute.Int64("lockstep.image.ensure_ms", took.Milliseconds()))
	span.End()
	if err != nil {
		return ctrImage{}, errors.Wrapf(err, "container image for job %s", as.JobID)
	}
	e.log.Info("container image ready", "job", as.JobID, "image", spec.Image, "policy", spec.PullPolicy, "pulled", pulled, "took", took)

	img := ctrImage{spec: spec, user: user, mounts: append([]jobspec.Mount{{Source: dir, Target: dir}}, spec.Mounts...)}
	if g.setup.sock != "" {
		img.mounts = append(img.mounts, jobspec.Mount{Source: g.setup.sock, Target: g.setup.sock})
	}
	if bin := e.shimBinary(); bin != "" && as.Batch != nil {
		for _, name := range slurmenv.Commands {
			img.mounts = append(img.mounts, jobspec.Mount{Source: bin, Target: containerShimDir + "/" + name, ReadOnly: true})
		}
		img.shims = true
	}
	if e.lifeline != "" {
		img.mounts = append(img.mounts, jobspec.Mount{Source: e.lifelineBin, Target: containerLifeline, ReadOnly: true},
			jobspec.Mount{Source: e.lifeline, Target: e.lifeline})
		img.lifeline = e.lifeline
	}
	g.setup.shimDir = "" // the host's shim links mean nothing inside
	if len(e.cfg.GPUUUIDs) == e.cfg.Node.GPUs && e.cfg.Node.GPUs > 0 {
		g.setup.uuids = e.cfg.GPUUUIDs // renumbered inside: only UUIDs name them there
	}
	return img, nil
}

// shimBinary is the host path of the binary the Slurm shims run, to mount
// into a batch job's containers; "" where there is none, or where the
// agent runs in a container of its own (its binary is not on the host's
// disk, which the engine mounts from).
func (e *executor) shimBinary() string {
	if e.shimDir == "" || e.cfg.ContainerShare != "" {
		return ""
	}
	bin, err := filepath.EvalSymlinks(filepath.Join(e.shimDir, "srun"))
	if err != nil {
		return ""
	}
	return bin
}

// ctrTask is one container to start: a rank, a batch script or one task
// of an srun step.
type ctrTask struct {
	// name tells a script's or step task's container from a rank's
	// (containers.Rank.Task; "" for a rank).
	name string
	// share is the GPUs and cores it gets.
	share          domain.Rank
	argv           []string
	env            rankenv.Env
	stdout, stderr io.Writer
}

// startContainer starts one container of g's attempt.
func (e *executor) startContainer(g *localGang, img ctrImage, t ctrTask) (*ctrRank, error) {
	as := g.as
	cpus, mems := place.Pin(e.cfg.Node, t.share, as.GPUBind == "closest")
	if have := onlineCPUs(cpus); len(have) < len(cpus) {
		// As for a bare rank: pinned to those of its cores this machine
		// has (a simulated node claims more), unpinned if none.
		e.log.Warn("container pinned to fewer cores: not all of its cores are on this machine", "job", as.JobID, "rank", t.share.Rank, "cores", have)
		cpus = have
		if len(have) == 0 {
			mems = nil
		}
	}
	var gpus []string
	if g.setup.uuids != nil {
		for _, i := range t.share.GPUs {
			gpus = append(gpus, g.setup.uuids[i])
		}
	}
	shm := int64(0)
	if len(as.Ranks) == 1 && t.name == "" {
		// A node's only rank may have its own /dev/shm: no other rank of
		// the job needs its IPC namespace (containers.Rank.ShmSize).
		shm = img.spec.ShmSize
	}
	argv := t.argv
	if img.lifeline != "" {
		argv = reexec.LifelineArgv(containerLifeline, img.lifeline, argv)
	}
	cr := containers.Rank{Job: as.JobID, Attempt: as.Attempt, Rank: t.share.Rank, Task: t.name, Node: e.cfg.Node.Name, Scope: e.cfg.DataDir,
		Image: img.spec.Image, Command: argv, Env: containerEnv(t.env, img), Workdir: img.spec.Workdir, Mounts: img.mounts,
		CPUs: cpus, Mems: mems, GPUs: gpus, User: img.user, ShmSize: shm,
		MemoryBytes: containers.MemoryShare(e.hostMemory, len(t.share.GPUs), e.cfg.Node.GPUs),
		Devices:     containers.RDMADevices("/", place.ClosestNICs(g.setup.hw, t.share.GPUs))}
	rctx := context.WithoutCancel(g.regCtx)
	id, copied, err := e.engine.Start(rctx, containers.CreateOptions(cr), t.stdout, t.stderr)
	if err != nil {
		return nil, err
	}
	return &ctrRank{d: e.engine, id: id, ctx: rctx, outs: []io.Writer{t.stdout, t.stderr}, copied: copied, exited: make(chan struct{})}, nil
}

// startContainers starts each rank of g in its own container, with the
// environment, pinning and GPUs bare ranks get.
func (e *executor) startContainers(g *localGang, _ rankSetup, dir, note string) error {
	as := g.as
	img, err := e.prepareContainers(g, dir)
	if err != nil {
		return err
	}
	if len(as.Ranks) > 1 && img.spec.ShmSize > 0 {
		e.log.Info("container.shmSize not applied: the node's ranks share the host's IPC namespace", "job", as.JobID, "ranks", len(as.Ranks))
	}
	for _, r := range as.Ranks {
		logFile := dir + "/rank-" + strconv.Itoa(r.Rank) + ".log"
		stdout, stderr := e.newSinks(as, r.Rank, logFile)
		if note != "" {
			_, _ = io.WriteString(stderr, note)
		}
		c, err := e.startContainer(g, img, ctrTask{share: r, argv: as.Command, env: rankEnvOf(g.setup, r), stdout: stdout, stderr: stderr})
		if err != nil {
			closeAll([]io.Writer{stdout, stderr})
			return errors.Wrapf(err, "start rank %d in image %s", r.Rank, img.spec.Image)
		}
		g.procs = append(g.procs, c)
	}
	return nil
}

// containerEnv writes out a container's environment: container.env over
// the spec's env, PATH the image's usual one (not the node's), with the
// Slurm commands first when they are mounted.
func containerEnv(env rankenv.Env, img ctrImage) []string {
	env.Path = rankenv.DefaultPath
	if len(img.spec.Env) > 0 || img.shims {
		spec := make(map[string]string, len(env.Spec)+len(img.spec.Env))
		for k, v := range env.Spec {
			spec[k] = v
		}
		for k, v := range img.spec.Env {
			spec[k] = v
		}
		env.Spec = spec
	}
	if img.shims {
		env.Path = containerShimDir + ":" + env.Path
		if p, ok := env.Spec[rankenv.Path]; ok && !strings.HasPrefix(p, containerShimDir+":") {
			env.Spec[rankenv.Path] = containerShimDir + ":" + p
		}
	}
	return lastWins(env.List())
}
