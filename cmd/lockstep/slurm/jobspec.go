package slurm

import (
	"fmt"
	"strings"
	"time"

	"github.com/cockroachdb/errors"

	"github.com/lockstep-dev/lockstep/shared/contract/errs"
	"github.com/lockstep-dev/lockstep/shared/contract/jobspec"
)

// Bounds of the job spec (schemas/jobspec.v1.json) that a directive can
// exceed; checked here so the error names the option.
const (
	maxPriority    = 1_000_000
	maxSpecNodes   = 4096
	maxGPUsPerNode = 64
	maxCPUsPerTask = 1024
	maxNameLen     = 128
	maxSpecTime    = 365 * 24 * time.Hour
)

// checkpointSignals are the signals checkpoint.signal may name.
var checkpointSignals = map[string]bool{"USR1": true, "USR2": true, "TERM": true, "INT": true, "HUP": true}

// JobSpec translates the directives into a Lockstep job spec running
// command on every rank. Slurm's defaults apply where Slurm has one
// (one node; one task per node when neither --ntasks nor
// --ntasks-per-node is given); Lockstep's spec defaults fill the rest
// when the spec is parsed, and are not written here.
//
//	-J/--job-name          name
//	-N/--nodes             gang.nodes
//	--gpus-per-node,       gang.gpusPerNode (required: a Lockstep job has GPUs),
//	  --gres=gpu:[type:]N  and gang.gpuType from the type
//	-n/--ntasks,           gang.tasksPerNode
//	  --ntasks-per-node
//	-c/--cpus-per-task     gang.cpusPerTask
//	--gpu-bind             gang.gpuBind
//	--switches=N@time      topology.maxSwitches, topology.waitForSwitches
//	-t/--time              timeLimit (absent when unlimited)
//	-p/--partition         queue
//	--priority, --nice     priority = priority - nice
//	--signal=SIG@time      checkpoint.signal, checkpoint.gracePeriod
//	--no-requeue           restartPolicy.maxRestarts = 0 (--requeue: the default)
//	--export=NAME=value    env (the NAME=value items only)
//	--container-image,     container.image (pyxis's registry#image as registry/image),
//	  --container-mounts,  container.mounts (SRC[:DST[:ro|rw]],...),
//	  --container-workdir  container.workdir (--container-env: the caller's)
//
// An impossible combination is an error naming the options. What has no
// spec field stays in the Directives for the caller (see the package
// documentation).
func (d Directives) JobSpec(command []string) (jobspec.Spec, error) {
	s, err := d.jobSpec(command)
	if err != nil {
		return jobspec.Spec{}, errs.MarkInvalid(err)
	}
	return s, nil
}

func (d Directives) jobSpec(command []string) (jobspec.Spec, error) {
	var s jobspec.Spec
	if len(command) == 0 || command[0] == "" {
		return s, errors.New("no command to run")
	}
	s.Command = append([]string(nil), command...)

	if len(d.JobName) > maxNameLen {
		return s, errors.Newf("--job-name: %d characters, more than the %d allowed", len(d.JobName), maxNameLen)
	}
	s.Name = d.JobName

	if d.Partition != "" {
		if strings.Contains(d.Partition, ",") {
			return s, errors.Newf("--partition=%s: a list of partitions is not supported; give one", d.Partition)
		}
		if !jobspec.ValidBaseID(d.Partition) {
			return s, errors.Newf("--partition=%s: a Lockstep queue name is lowercase letters, digits and '-'", d.Partition)
		}
		s.Queue = d.Partition
	}

	gang, err := d.gang()
	if err != nil {
		return s, err
	}
	s.Gang = gang

	if d.Switches != nil {
		// More switches than nodes always holds; the spec caps it at nodes.
		s.Topology.MaxSwitches = min(d.Switches.Count, gang.Nodes)
		if w := d.Switches.Wait; w != nil {
			switch {
			case w.Unlimited || w.Duration > maxSpecTime:
				return s, errors.Newf("--switches: a wait of more than a year is not supported")
			case w.Duration == 0:
				// Slurm: do not wait. The spec cannot say zero (absent is
				// the 5m default), so wait the least it can.
				s.Topology.WaitForSwitches = jobspec.DurationOf(time.Second)
			default:
				s.Topology.WaitForSwitches = jobspec.DurationOf(w.Duration)
			}
		}
	}

	if t := d.TimeLimit; t != nil && !t.Unlimited {
		if t.Duration > maxSpecTime {
			return s, errors.Newf("--time: %s is more than a year, the most Lockstep allows", t.Duration)
		}
		s.TimeLimit = jobspec.DurationOf(t.Duration)
	}

	prio := 0
	if d.Priority != nil {
		prio = *d.Priority
	}
	if d.Nice != nil {
		prio -= *d.Nice
	}
	if prio < -maxPriority || prio > maxPriority {
		return s, errors.Newf("--priority/--nice: priority %d is outside Lockstep's range of -%d to %d", prio, maxPriority, maxPriority)
	}
	s.Priority = prio

	if sig := d.Signal; sig != nil {
		if !checkpointSignals[sig.Name] {
			return s, errors.Newf("--signal: Lockstep's checkpoint signal is one of SIGUSR1, SIGUSR2, SIGTERM, SIGINT, SIGHUP, not %s", signalName(sig))
		}
		if sig.Time == 0 {
			return s, errors.New("--signal: a sig_time of 0 leaves no time to checkpoint; Lockstep needs a grace period of at least a second")
		}
		s.Checkpoint.Signal = "SIG" + sig.Name
		s.Checkpoint.GracePeriod = jobspec.DurationOf(sig.Time)
	}

	if d.Requeue != nil && !*d.Requeue {
		s.RestartPolicy.MaxRestarts = new(0)
	}

	if s.Container, err = d.Container.jobSpec(); err != nil {
		return s, err
	}

	if d.Export != nil && len(d.Export.Set) > 0 {
		s.Env = map[string]string{}
		for _, v := range d.Export.Set {
			if !jobspec.ValidEnvName(v.Name) {
				return s, errors.Newf("--export: %q is not an environment variable name", v.Name)
			}
			s.Env[v.Name] = v.Value
		}
	}
	return s, nil
}

// gang works out the gang's shape from -N, -n, --ntasks-per-node,
// --gpus-per-node or --gres, -c and --gpu-bind.
func (d Directives) gang() (jobspec.Gang, error) {
	var g jobspec.Gang
	gpus := d.GPUsPerNode
	gpuOpt := "--gpus-per-node"
	switch {
	case d.GPUsPerNode != nil && d.GRESGPU != nil:
		return g, errors.New("--gpus-per-node and --gres=gpu are mutually exclusive (as in Slurm)")
	case d.GRESGPU != nil:
		gpus, gpuOpt = d.GRESGPU, "--gres=gpu"
	case gpus == nil:
		return g, errors.New("no GPUs requested: a Lockstep job needs --gpus-per-node=N or --gres=gpu:N")
	}
	if gpus.Type != "" {
		// Slurm's GRES type names the model, as gang.gpuType does ("h100";
		// "_" separates words, as in "tesla_v100").
		if !validGPUType(gpus.Type) {
			return g, errors.Newf("%s: GPU type %q is not a GPU model (letters, digits, '.', '_' and '-', at most 64)", gpuOpt, gpus.Type)
		}
		g.GPUType = gpus.Type
	}
	if gpus.Count > maxGPUsPerNode {
		return g, errors.Newf("%s: %d GPUs per node, more than the %d allowed", gpuOpt, gpus.Count, maxGPUsPerNode)
	}
	g.GPUsPerNode = gpus.Count

	nodes := d.Nodes
	tasks := d.NTasksPerNode
	switch {
	case nodes == 0 && tasks != 0 && d.NTasks != 0:
		if d.NTasks%tasks != 0 {
			return g, errors.Newf("--ntasks=%d is not a multiple of --ntasks-per-node=%d", d.NTasks, tasks)
		}
		nodes = d.NTasks / tasks
	case nodes == 0:
		nodes = 1 // Slurm's default
	}
	if nodes > maxSpecNodes {
		return g, errors.Newf("--nodes: %d nodes, more than the %d allowed", nodes, maxSpecNodes)
	}
	switch {
	case tasks != 0 && d.NTasks != 0 && d.NTasks != nodes*tasks:
		return g, errors.Newf("--ntasks=%d is not --nodes=%d times --ntasks-per-node=%d: every node of a gang runs the same number of tasks", d.NTasks, nodes, tasks)
	case tasks == 0 && d.NTasks != 0:
		if d.NTasks%nodes != 0 {
			return g, errors.Newf("--ntasks=%d cannot be spread evenly over --nodes=%d: every node of a gang runs the same number of tasks", d.NTasks, nodes)
		}
		tasks = d.NTasks / nodes
	case tasks == 0:
		tasks = 1 // Slurm's default: one task per node
	}
	if g.GPUsPerNode%tasks != 0 {
		return g, errors.Newf("%s=%d cannot be shared evenly by %d tasks per node: the tasks per node (--ntasks-per-node, or --ntasks over --nodes) must divide the GPUs per node", gpuOpt, g.GPUsPerNode, tasks)
	}
	if d.CPUsPerTask > maxCPUsPerTask {
		return g, errors.Newf("--cpus-per-task: %d, more than the %d allowed", d.CPUsPerTask, maxCPUsPerTask)
	}
	g.Nodes, g.TasksPerNode, g.CPUsPerTask, g.GPUBind = nodes, tasks, d.CPUsPerTask, d.GPUBind
	return g, nil
}

func signalName(s *Signal) string {
	if s.Name == "" {
		return fmt.Sprintf("signal %d", s.Number)
	}
	return "SIG" + s.Name
}

// validGPUType is gang.gpuType's schema pattern, checked here so that a
// script's type is refused naming its option.
func validGPUType(s string) bool {
	if s == "" || len(s) > 64 {
		return false
	}
	for i, r := range s {
		alnum := r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9'
		if !alnum && (i == 0 || (r != '.' && r != '_' && r != '-')) {
			return false
		}
	}
	return true
}
