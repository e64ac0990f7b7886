package agent

import (
	"os"
	"path/filepath"

	"github.com/cockroachdb/errors"

	"github.com/lockstep-dev/lockstep/shared/contract/domain"
	"github.com/lockstep-dev/lockstep/shared/contract/rankenv"
	"github.com/lockstep-dev/lockstep/shared/contract/slurmenv"
)

// slurmJob is the job-level Slurm environment of an assignment on this
// node (rankenv/slurm.go). workdir is where the job's processes run here.
func slurmJob(as domain.Assignment, workdir string) *rankenv.SlurmJob {
	nodes := as.Nodes
	if len(nodes) == 0 {
		nodes = []string{as.Node} // an assignment written before gangs named their nodes
	}
	list, err := slurmenv.CompressHostlist(nodes)
	if err != nil {
		list = as.Node // node names checked by DecodeAssignment; not expected
	}
	gpus := map[int]bool{}
	for _, r := range as.Ranks {
		for _, g := range r.GPUs {
			gpus[g] = true
		}
	}
	submitDir := as.Env[rankenv.SlurmSubmitDir]
	if submitDir == "" {
		submitDir = workdir
	}
	name := as.JobName
	if name == "" {
		name = as.JobID
	}
	return &rankenv.SlurmJob{
		JobID: as.JobID, JobName: name, Partition: as.Queue, NodeList: list,
		SubmitDir: submitDir, SubmitHost: as.Env[rankenv.SlurmSubmitHost],
		NNodes: as.NNodes, NTasks: as.WorldSize, NTasksPerNode: len(as.Ranks), GPUsOnNode: len(gpus),
		CPUsPerTask: as.CPUsPerTask,
	}
}

// shimDirName is the directory in the data directory that holds the
// Slurm command shims, first on every job process's PATH.
const shimDirName = "bin"

// linkShims makes DIR/srun, scontrol, … links to target (the lockstep
// binary, which acts as the command it is named after) and returns DIR.
// Links already there are replaced: the agent's binary may have moved.
func linkShims(dataDir, target string) (string, error) {
	if target == "" {
		exe, err := os.Executable()
		if err != nil {
			return "", errors.Wrap(err, "find the agent's binary for the Slurm shims")
		}
		target = exe
	}
	target, err := filepath.Abs(target)
	if err != nil {
		return "", errors.Wrapf(err, "shim target %s", target)
	}
	dir, err := filepath.Abs(filepath.Join(dataDir, shimDirName))
	if err != nil {
		return "", errors.Wrap(err, "shim directory")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", errors.Wrapf(err, "create %s", dir)
	}
	for _, name := range slurmenv.Commands {
		p := filepath.Join(dir, name)
		_ = os.Remove(p)
		if err := os.Symlink(target, p); err != nil {
			return "", errors.Wrapf(err, "link %s", p)
		}
	}
	return dir, nil
}
