package agent

import (
	"strings"
	"testing"

	"github.com/lockstep-dev/lockstep/shared/contract/domain"
	"github.com/lockstep-dev/lockstep/shared/plumbing/store"
)

// Forged or malformed assignments are refused, naming the field, before
// anything runs or a directory is made from the job ID.
func TestCheckAssignmentNamesTheField(t *testing.T) {
	node := domain.Node{Name: "n1", GPUs: 2, CPUs: 4}
	good := func() domain.Assignment {
		return domain.Assignment{JobID: "j1", Attempt: 1, Node: "n1", Command: []string{"true"},
			Ranks: []domain.Rank{{Rank: 0, GPUs: []int{0}, CPUs: []int{0, 1}}, {Rank: 1, GPUs: []int{1}, CPUs: []int{2, 3}}}}
	}
	if err := checkAssignment(store.AssignKey("n1", "j1"), good(), node); err != nil {
		t.Fatalf("valid assignment refused: %v", err)
	}
	for _, c := range []struct {
		field string
		key   string
		edit  func(*domain.Assignment)
	}{
		{"jobId", store.AssignKey("n1", "a/b"), func(a *domain.Assignment) { a.JobID = "a/b" }},
		{"jobId", store.AssignKey("n1", ".."), func(a *domain.Assignment) { a.JobID = ".." }},
		{"jobId", store.AssignKey("n1", "other"), func(*domain.Assignment) {}},
		{"node", "", func(a *domain.Assignment) { a.Node = "n2" }},
		{"attempt", "", func(a *domain.Assignment) { a.Attempt = 0 }},
		{"command", "", func(a *domain.Assignment) { a.Command = nil }},
		{"ranks", "", func(a *domain.Assignment) { a.Ranks = nil }},
		{"ranks[1].gpus", "", func(a *domain.Assignment) { a.Ranks[1].GPUs = []int{2} }},
		{"ranks[1].gpus", "", func(a *domain.Assignment) { a.Ranks[1].GPUs = []int{0} }},
		{"ranks[1].cpus", "", func(a *domain.Assignment) { a.Ranks[1].CPUs = []int{4} }},
		{"ranks[1].cpus", "", func(a *domain.Assignment) { a.Ranks[1].CPUs = []int{-64} }},
		{"ranks[1].cpus", "", func(a *domain.Assignment) { a.Ranks[1].CPUs = []int{1} }},
	} {
		as := good()
		c.edit(&as)
		key := c.key
		if key == "" {
			key = store.AssignKey("n1", as.JobID)
		}
		err := checkAssignment(key, as, node)
		if err == nil || !strings.HasPrefix(err.Error(), c.field+":") {
			t.Errorf("%s (%+v): err = %v, want one naming %s", c.field, as, err, c.field)
		}
	}
}
