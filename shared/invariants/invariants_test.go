package invariants

import (
	"strings"
	"testing"

	"github.com/lockstep-dev/lockstep/shared/domain"
	"github.com/lockstep-dev/lockstep/shared/jobspec"
)

// healthy is one running 2x2 job with durable claims, plus a reserved 1x1
// job under a live lease.
func healthy() State {
	run := domain.Allocation{JobID: "a", Attempt: 1, State: domain.AllocRunning, Placement: domain.Placement{
		Nodes: []domain.NodePlacement{{Node: "n1", GPUs: []int{0, 1}}, {Node: "n2", GPUs: []int{0, 1}}}}}
	res := domain.Allocation{JobID: "b", Attempt: 1, State: domain.AllocReserved, Placement: domain.Placement{
		Nodes: []domain.NodePlacement{{Node: "n1", GPUs: []int{2}}}}}
	return State{
		Claims: map[string]Claim{
			"n1/0": {"n1", 0, "a", 0}, "n1/1": {"n1", 1, "a", 0},
			"n2/0": {"n2", 0, "a", 0}, "n2/1": {"n2", 1, "a", 0},
			"n1/2": {"n1", 2, "b", 7},
		},
		Allocations: map[string]domain.Allocation{"a": run, "b": res},
		Inventory:   map[string]bool{"n1": true, "n2": true},
		LiveLeases:  map[int64]bool{7: true},
		Jobs: map[string]domain.Job{
			"a": {ID: "a", State: domain.StateRunning, Attempt: 1, Spec: jobspec.Spec{Gang: jobspec.Gang{Nodes: 2, GPUsPerNode: 2}}},
			"b": {ID: "b", State: domain.StateReserved, Attempt: 1, Spec: jobspec.Spec{Gang: jobspec.Gang{Nodes: 1, GPUsPerNode: 1}}},
		},
	}
}

func TestHealthyStateHasNoViolations(t *testing.T) {
	if v := Evaluate(healthy()); len(v) != 0 {
		t.Fatalf("healthy state reported %v", v)
	}
}

func TestEachRuleIsDetected(t *testing.T) {
	cases := []struct {
		name   string
		mutate func(*State)
		rule   string
	}{
		{"two allocations share a GPU", func(s *State) {
			b := s.Allocations["b"]
			b.Placement.Nodes[0].GPUs = []int{1}
			s.Allocations["b"] = b
		}, RuleDoubleClaim},
		{"claim without live lease nor durable allocation", func(s *State) { delete(s.LiveLeases, 7) }, RuleOrphanClaim},
		{"claim of a job without allocation", func(s *State) {
			s.Claims["n2/5"] = Claim{"n2", 5, "ghost", 7}
		}, RuleOrphanClaim},
		{"allocation missing its claim", func(s *State) { delete(s.Claims, "n2/1") }, RuleOrphanClaim},
		{"running job holds less than its gang", func(s *State) {
			a := s.Jobs["a"]
			a.Spec.Gang.GPUsPerNode = 4
			s.Jobs["a"] = a
		}, RuleGangSize},
		{"running job without allocation", func(s *State) {
			s.Jobs["c"] = domain.Job{ID: "c", State: domain.StateRunning, Attempt: 2}
		}, RuleGangSize},
		{"allocation of a finished job", func(s *State) {
			b := s.Jobs["b"]
			b.State = domain.StateSucceeded
			s.Jobs["b"] = b
		}, RuleFinishedAlloc},
		{"claim on an unregistered node", func(s *State) { delete(s.Inventory, "n2") }, RuleUnknownNode},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := healthy()
			tc.mutate(&s)
			v := Evaluate(s)
			found := false
			for _, x := range v {
				found = found || x.Rule == tc.rule
			}
			if !found {
				t.Errorf("want a %s violation, got %v", tc.rule, v)
			}
			if len(v) > 0 && !strings.Contains(v[0].String(), ":") {
				t.Errorf("violation text %q should say what is wrong", v[0])
			}
		})
	}
}
