package invariants

import (
	"strings"
	"testing"

	"github.com/lockstep-dev/lockstep/shared/contract/domain"
	"github.com/lockstep-dev/lockstep/shared/contract/jobspec"
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
		Assignments: map[string]Assignment{
			"n1/a": {"n1", "a", 1, 11}, "n2/a": {"n2", "a", 1, 12}, "n1/b": {"n1", "b", 1, 11},
		},
		Running: map[string]Running{
			"a/n1": {"n1", "a", 1}, "a/n2": {"n2", "a", 1}, "b/n1": {"n1", "b", 1},
		},
		Footprints: map[string][]string{"a": {"n1", "n2"}, "b": {"n1"}},
		Inventory:  map[string]int{"n1": 4, "n2": 2},
		Epochs:     map[string]int64{"n1": 11, "n2": 12},
		Malformed:  map[string]string{},
		LiveLeases: map[int64]bool{7: true},
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

// wholeN2 has job a hold node n2 (2 GPUs) by its whole-node claim
// instead of one claim per GPU.
func wholeN2(s *State) {
	delete(s.Claims, "n2/0")
	delete(s.Claims, "n2/1")
	s.WholeClaims = map[string]Claim{"n2": {"n2", -1, "a", 0}}
	a := s.Allocations["a"]
	a.WholeNodes = []string{"n2"}
	s.Allocations["a"] = a
}

func TestWholeNodeClaimCountsOnEveryGPU(t *testing.T) {
	s := healthy()
	wholeN2(&s)
	if v := Evaluate(s); len(v) != 0 {
		t.Fatalf("n2 held whole reported %v", v)
	}
	// The inventory and the allocation disagree on the node's size (it
	// re-registered): the claim covers the GPUs of both, and the check
	// says nothing false of it.
	s.Inventory["n2"] = 1
	if v := Evaluate(s); len(v) != 0 {
		t.Fatalf("whole-node claim of a node now of 1 GPU: %v", v)
	}
	s.Inventory["n2"] = 0
	if v := Evaluate(s); len(v) != 0 {
		t.Fatalf("whole-node claim of a node its inventory gives no GPUs: %v", v)
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
		}, RuleActiveNoAlloc},
		{"reserved job whose allocation is of another attempt", func(s *State) {
			b := s.Jobs["b"]
			b.Attempt = 2
			s.Jobs["b"] = b
		}, RuleActiveNoAlloc},
		{"assignment of a gone allocation", func(s *State) {
			s.Assignments["n2/gone"] = Assignment{Node: "n2", Job: "gone", Attempt: 1, Epoch: 1}
		}, RuleAssignNoAlloc},
		{"assignment on a node its allocation does not place", func(s *State) {
			s.Assignments["n2/b"] = Assignment{Node: "n2", Job: "b", Attempt: 1, Epoch: 12}
		}, RuleAssignNoAlloc},
		{"agent reports ranks of a gone allocation", func(s *State) {
			s.Running["gone/n2"] = Running{Node: "n2", Job: "gone", Attempt: 1}
		}, RuleRanksNoAlloc},
		{"agent reports ranks on a node the allocation does not place", func(s *State) {
			s.Running["b/n2"] = Running{Node: "n2", Job: "b", Attempt: 1}
		}, RuleRanksNoAlloc},
		{"ranks of attempt 1 alive while attempt 2 is reserved", func(s *State) {
			b := s.Allocations["b"]
			b.Attempt = 2
			s.Allocations["b"] = b
			j := s.Jobs["b"]
			j.Attempt = 2
			s.Jobs["b"] = j
			s.Running["b/n2"] = Running{Node: "n2", Job: "b", Attempt: 1}
		}, RuleRanksBesideNext},
		{"agent reports ranks on a node the footprint does not name", func(s *State) {
			s.Footprints["a"] = []string{"n1"}
		}, RuleRanksOutsideFootprint},
		{"malformed value", func(s *State) { s.Malformed["alloc/x"] = "undecodable" }, RuleMalformed},
		{"allocation of a finished job", func(s *State) {
			b := s.Jobs["b"]
			b.State = domain.StateSucceeded
			s.Jobs["b"] = b
		}, RuleFinishedAlloc},
		{"claim on an unregistered node", func(s *State) { delete(s.Inventory, "n2") }, RuleUnknownNode},
		{"a GPU claim beside its node's whole-node claim", func(s *State) {
			wholeN2(s)
			s.Claims["n2/1"] = Claim{"n2", 1, "b", 7}
		}, RuleDoubleClaim},
		{"whole-node claim of a job without allocation", func(s *State) {
			wholeN2(s)
			c := s.WholeClaims["n2"]
			c.Job = "ghost"
			s.WholeClaims["n2"] = c
		}, RuleOrphanClaim},
		{"claim of a GPU its owner's allocation does not place", func(s *State) {
			s.Claims["n1/3"] = Claim{"n1", 3, "a", 0}
		}, RuleStrayClaim},
		{"whole-node claim of a node its owner's allocation holds in part", func(s *State) {
			wholeN2(s)
			a := s.Allocations["a"]
			a.WholeNodes = nil
			s.Allocations["a"] = a
		}, RuleStrayClaim},
		{"GPU claims of a node its owner's allocation holds whole", func(s *State) {
			a := s.Allocations["a"]
			a.WholeNodes = []string{"n2"}
			s.Allocations["a"] = a
		}, RuleStrayClaim},
		{"whole-node claim on an unregistered node", func(s *State) {
			wholeN2(s)
			delete(s.Inventory, "n2")
		}, RuleUnknownNode},
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
