package lifecycle_test

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/lockstep-dev/lockstep/shared/contract/domain"
	"github.com/lockstep-dev/lockstep/shared/core/lifecycle"
)

// TestGPUDrains: a running gang with a rank on a withdrawn GPU is drained
// and requeued, once; everything else is left alone.
func TestGPUDrains(t *testing.T) {
	fault := func(gpu int) domain.GPUFault {
		return domain.GPUFault{GPU: gpu, Reason: "gpu 3 (GPU-x): 2 uncorrectable ECC errors", Since: now.Add(-time.Minute)}
	}
	job := func(id string, attempt int, state domain.State) domain.Job {
		return domain.Job{ID: id, Attempt: attempt, State: state}
	}
	alloc := func(id string, attempt int, on map[string][]int) domain.Allocation {
		a := domain.Allocation{JobID: id, Attempt: attempt}
		for _, n := range []string{"n1", "n2"} {
			if gpus, ok := on[n]; ok {
				a.Placement.Nodes = append(a.Placement.Nodes, domain.NodePlacement{Node: n, GPUs: gpus})
			}
		}
		return a
	}
	sick := map[string]domain.Node{
		"n1": {Name: "n1", GPUs: 8, Unhealthy: []domain.GPUFault{fault(3)}},
		"n2": {Name: "n2", GPUs: 8},
	}
	draining := job("draining", 1, domain.StateRunning)
	draining.Drain = &domain.Drain{Kind: domain.DrainPreempt}
	cases := []struct {
		name    string
		job     domain.Job
		alloc   *domain.Allocation
		nodes   map[string]domain.Node
		drained bool
	}{
		{name: "on the withdrawn GPU", job: job("a", 1, domain.StateRunning), alloc: ptr(alloc("a", 1, map[string][]int{"n1": {0, 1, 2, 3, 4, 5, 6, 7}})), nodes: sick, drained: true},
		{name: "one node of two on it", job: job("a", 1, domain.StateRunning), alloc: ptr(alloc("a", 1, map[string][]int{"n2": {0}, "n1": {3}})), nodes: sick, drained: true},
		{name: "same node, other GPUs", job: job("a", 1, domain.StateRunning), alloc: ptr(alloc("a", 1, map[string][]int{"n1": {0, 1, 2, 4}})), nodes: sick},
		{name: "healthy node", job: job("a", 1, domain.StateRunning), alloc: ptr(alloc("a", 1, map[string][]int{"n2": {3}})), nodes: sick},
		{name: "node not registered (down)", job: job("a", 1, domain.StateRunning), alloc: ptr(alloc("a", 1, map[string][]int{"n1": {3}})), nodes: map[string]domain.Node{}},
		{name: "already draining", job: draining, alloc: ptr(alloc("draining", 1, map[string][]int{"n1": {3}})), nodes: sick},
		{name: "not running yet", job: job("a", 1, domain.StateReserved), alloc: ptr(alloc("a", 1, map[string][]int{"n1": {3}})), nodes: sick},
		{name: "allocation of another attempt", job: job("a", 2, domain.StateRunning), alloc: ptr(alloc("a", 1, map[string][]int{"n1": {3}})), nodes: sick},
		{name: "no allocation", job: job("a", 1, domain.StateRunning), nodes: sick},
	}
	for _, tc := range cases {
		allocs := map[string]domain.Allocation{}
		if tc.alloc != nil {
			allocs[tc.alloc.JobID] = *tc.alloc
		}
		got := lifecycle.GPUDrains([]domain.Job{tc.job}, allocs, tc.nodes)
		if !tc.drained {
			if len(got) != 0 {
				t.Errorf("%s: drained: %+v", tc.name, got)
			}
			continue
		}
		want := []domain.DrainRequest{{JobID: tc.job.ID, Kind: domain.DrainNode, Then: domain.ThenRequeue,
			Reason: "GPU 3 of node n1 withdrawn: gpu 3 (GPU-x): 2 uncorrectable ECC errors"}}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s:\n got  %+v\n want %+v", tc.name, got, want)
		}
	}
	// A huge reason is cut to what a drain request may carry.
	long := map[string]domain.Node{"n1": {Name: "n1", GPUs: 8, Unhealthy: []domain.GPUFault{{GPU: 0, Reason: strings.Repeat("é", domain.MaxReasonBytes)}}}}
	got := lifecycle.GPUDrains([]domain.Job{job("b", 1, domain.StateRunning), job("a", 1, domain.StateRunning)},
		map[string]domain.Allocation{"a": alloc("a", 1, map[string][]int{"n1": {0}}), "b": alloc("b", 1, map[string][]int{"n1": {0}})}, long)
	if len(got) != 2 || got[0].JobID != "a" || got[1].JobID != "b" {
		t.Fatalf("not one each, sorted: %+v", got)
	}
	if r := got[0].Reason; len(r) > domain.MaxReasonBytes || !strings.HasSuffix(r, "…") || !utf8Valid(r) {
		t.Errorf("reason of %d bytes not cut cleanly", len(r))
	}
}

func ptr[T any](v T) *T { return &v }

func utf8Valid(s string) bool { return strings.ToValidUTF8(s, "\uFFFD") == s }
