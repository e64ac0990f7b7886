package agent

import (
	"slices"
	"testing"

	"github.com/lockstep-dev/lockstep/shared/contract/domain"
)

func TestLayoutStep(t *testing.T) {
	nodes := []string{"a", "b", "c"}
	for _, tc := range []struct {
		name  string
		shape stepShape
		want  []stepNode // nil: an error
	}{
		{"default: all nodes × the job's tasks per node", stepShape{}, []stepNode{{"a", 2, 0}, {"b", 2, 2}, {"c", 2, 4}}},
		{"-N 2", stepShape{Nodes: 2}, []stepNode{{"a", 2, 0}, {"b", 2, 2}}},
		{"--ntasks-per-node=1 (a launcher per node)", stepShape{TasksPerNode: 1}, []stepNode{{"a", 1, 0}, {"b", 1, 1}, {"c", 1, 2}}},
		{"-n 4: blocks, first nodes one more", stepShape{NTasks: 4}, []stepNode{{"a", 2, 0}, {"b", 1, 2}, {"c", 1, 3}}},
		{"-n 1: one node", stepShape{NTasks: 1}, []stepNode{{"a", 1, 0}}},
		{"-n 5 --ntasks-per-node=2: block-fill", stepShape{NTasks: 5, TasksPerNode: 2}, []stepNode{{"a", 2, 0}, {"b", 2, 2}, {"c", 1, 4}}},
		{"-n 4 --ntasks-per-node=4: one node", stepShape{NTasks: 4, TasksPerNode: 4}, []stepNode{{"a", 4, 0}}},
		{"-N 1 -n 3", stepShape{Nodes: 1, NTasks: 3}, []stepNode{{"a", 3, 0}}},
		{"-N 4: more nodes than the job has", stepShape{Nodes: 4}, nil},
		{"-N 3 -n 2: fewer tasks than nodes", stepShape{Nodes: 3, NTasks: 2}, nil},
		{"-N 1 -n 3 --ntasks-per-node=2: does not fit", stepShape{Nodes: 1, NTasks: 3, TasksPerNode: 2}, nil},
		{"negative", stepShape{NTasks: -1}, nil},
	} {
		got, err := layoutStep(nodes, 2, tc.shape)
		if tc.want == nil {
			if err == nil {
				t.Errorf("%s: got %v, want an error", tc.name, got)
			}
			continue
		}
		if err != nil || !slices.Equal(got, tc.want) {
			t.Errorf("%s: got %v (%v), want %v", tc.name, got, err, tc.want)
		}
	}
}

func TestTaskShare(t *testing.T) {
	ranks := []domain.Rank{{Rank: 4, GPUs: []int{0, 1}}, {Rank: 5, GPUs: []int{2, 3}}, {Rank: 6, GPUs: []int{4, 5}}, {Rank: 7, GPUs: []int{6, 7}}}
	for _, tc := range []struct {
		l, k int
		want []int
	}{
		{0, 4, []int{0, 1}}, {3, 4, []int{6, 7}}, // one rank each
		{0, 1, []int{0, 1, 2, 3, 4, 5, 6, 7}}, // one task: the whole node
		{1, 2, []int{4, 5, 6, 7}},             // two tasks: halves
		{5, 8, []int{4, 5}},                   // more tasks than ranks: shared
	} {
		if got := taskShare(ranks, tc.l, tc.k).GPUs; !slices.Equal(got, tc.want) {
			t.Errorf("task %d of %d: GPUs %v, want %v", tc.l, tc.k, got, tc.want)
		}
	}
}

func TestStepExitCode(t *testing.T) {
	for _, tc := range []struct {
		codes  []int
		killed []bool
		want   int
	}{
		{[]int{0, 0}, nil, 0},
		{[]int{0, 3, 1}, nil, 3},
		{[]int{0, 137}, nil, 137},                          // SIGKILL: 128+9
		{[]int{2, 143, 143}, []bool{false, true, true}, 2}, // kill-on-bad-exit: the killed do not count
	} {
		if got := stepExitCode(tc.codes, tc.killed); got != tc.want {
			t.Errorf("stepExitCode(%v, %v) = %d, want %d", tc.codes, tc.killed, got, tc.want)
		}
	}
}
