package agent

import (
	"github.com/cockroachdb/errors"

	"github.com/lockstep-dev/lockstep/shared/contract/domain"
)

// stepShape is what srun asked for; 0 is "not given".
type stepShape struct {
	Nodes, NTasks, TasksPerNode int
}

// stepNode is one node's part of a step: its tasks are FirstTask …
// FirstTask+Tasks-1 (Slurm's block distribution).
type stepNode struct {
	Node             string
	Tasks, FirstTask int
}

// layoutStep places a step on the job's nodes (by node rank) as srun does
// inside an allocation, where SLURM_NNODES, SLURM_NTASKS and
// SLURM_NTASKS_PER_NODE are its defaults: by default every node with the
// job's tasks per node; -N takes the first N nodes; -n spreads N tasks in
// blocks (the first nodes take one more when they do not divide), over
// fewer nodes when there are fewer tasks than nodes and -N was not given;
// --ntasks-per-node caps each node.
func layoutStep(jobNodes []string, jobTasksPerNode int, s stepShape) ([]stepNode, error) {
	if s.Nodes < 0 || s.NTasks < 0 || s.TasksPerNode < 0 {
		return nil, errors.New("srun: -N, -n and --ntasks-per-node must be positive")
	}
	if s.Nodes > len(jobNodes) {
		return nil, errors.Newf("srun: -N %d: the job has %d nodes", s.Nodes, len(jobNodes))
	}
	nodes := s.Nodes
	if nodes == 0 {
		nodes = len(jobNodes)
		switch {
		case s.NTasks > 0 && s.TasksPerNode > 0:
			nodes = min(nodes, (s.NTasks+s.TasksPerNode-1)/s.TasksPerNode)
		case s.NTasks > 0:
			nodes = min(nodes, s.NTasks)
		}
	}
	perNode := s.TasksPerNode
	if perNode == 0 && s.NTasks == 0 {
		perNode = jobTasksPerNode
	}
	ntasks := s.NTasks
	if ntasks == 0 {
		ntasks = nodes * perNode
	}
	if ntasks < nodes {
		return nil, errors.Newf("srun: -n %d is fewer tasks than the %d nodes asked for", ntasks, nodes)
	}
	if perNode > 0 && ntasks > nodes*perNode {
		return nil, errors.Newf("srun: -n %d tasks do not fit %d nodes × %d tasks per node", ntasks, nodes, perNode)
	}
	if ntasks/nodes > domain.MaxStepTasks {
		return nil, errors.Newf("srun: more than %d tasks on a node", domain.MaxStepTasks)
	}
	out := make([]stepNode, nodes)
	next := 0
	for i := range out {
		n := ntasks / nodes
		if i < ntasks%nodes {
			n++
		}
		if perNode > 0 {
			// Block-fill: with a cap, the first nodes take the cap.
			n = min(perNode, ntasks-next-(nodes-i-1))
		}
		out[i] = stepNode{Node: jobNodes[i], Tasks: n, FirstTask: next}
		next += n
	}
	return out, nil
}

// taskShare is what local task l of k on a node gets of the node's ranks
// (the allocation's pinning, as srun with --gpu-bind=closest gives a task
// its GPUs and cores): as many tasks as ranks, one rank each; fewer,
// consecutive ranks each (one task per node gets them all, the way
// torchrun launches per node want); more, tasks share ranks in turn.
func taskShare(ranks []domain.Rank, l, k int) domain.Rank {
	if k <= len(ranks) {
		from, to := l*len(ranks)/k, (l+1)*len(ranks)/k
		r := wholeNode(ranks[from:to])
		return r
	}
	return ranks[l*len(ranks)/k]
}

// stepExitCode is srun's exit status (srun(1), "RETURN VALUE"): the
// highest exit code of its tasks, a task killed by a signal counting as
// 128 + the signal. Tasks killed by the step itself (kill-on-bad-exit,
// srun interrupted) are left out: they did not fail of their own.
func stepExitCode(codes []int, killed []bool) int {
	most := 0
	for i, c := range codes {
		if i < len(killed) && killed[i] {
			continue
		}
		most = max(most, c)
	}
	return most
}
