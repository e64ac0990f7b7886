package lifecycle_test

import (
	"errors"
	"reflect"
	"slices"
	"testing"

	"github.com/lockstep-dev/lockstep/shared/contract/domain"
	"github.com/lockstep-dev/lockstep/shared/core/lifecycle"
)

func claim(job string, attempt int) domain.Claim { return domain.Claim{JobID: job, Attempt: attempt} }

// StrayJobs finds the jobs with keys their allocation does not account for.
func TestStrayJobs(t *testing.T) {
	a := gangOn("j", 1, "n0", "n1")
	type assigns = []lifecycle.AssignKey
	cases := []struct {
		name      string
		allocs    map[string]domain.Allocation
		malformed map[string]error
		claims    []domain.Claim
		assigns   assigns
		want      []string
	}{
		{name: "everything accounted for", allocs: map[string]domain.Allocation{"j": a},
			claims: []domain.Claim{claim("j", 1)}, assigns: assigns{{"n0", "j"}, {"n1", "j"}}},
		{name: "allocation record deleted", claims: []domain.Claim{claim("j", 1)}, assigns: assigns{{"n0", "j"}}, want: []string{"j"}},
		{name: "assignment alone", assigns: assigns{{"n1", "k"}}, want: []string{"k"}},
		{name: "claim of an older attempt", allocs: map[string]domain.Allocation{"j": a}, claims: []domain.Claim{claim("j", 0)}, want: []string{"j"}},
		{name: "assignment on a node outside the placement", allocs: map[string]domain.Allocation{"j": a},
			assigns: assigns{{"n7", "j"}}, want: []string{"j"}},
		{name: "undecodable claim names no job", claims: []domain.Claim{{}}},
		{name: "malformed record is released as such", malformed: map[string]error{"j": errors.New("bad")},
			claims: []domain.Claim{claim("j", 1)}, assigns: assigns{{"n0", "j"}}},
		{name: "sorted", assigns: assigns{{"n0", "z"}, {"n0", "b"}, {"n1", "z"}}, want: []string{"b", "z"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := lifecycle.StrayJobs(c.allocs, c.malformed, c.claims, c.assigns); !slices.Equal(got, c.want) {
				t.Errorf("StrayJobs = %v, want %v", got, c.want)
			}
		})
	}
}

// JudgeStrays says which attempts of a job with strays are over.
func TestJudgeStrays(t *testing.T) {
	cases := []struct {
		name     string
		job      domain.JobBrief
		found    bool
		hasAlloc bool
		want     lifecycle.Action
	}{
		{name: "no record: every attempt", want: lifecycle.SweepStrays{JobID: "j", UpTo: -1}},
		{name: "finished: every attempt", job: domain.JobBrief{State: domain.StateSucceeded, Attempt: 3}, found: true,
			want: lifecycle.SweepStrays{JobID: "j", UpTo: -1}},
		{name: "pending: the attempts before", job: domain.JobBrief{State: domain.StatePending, Attempt: 3}, found: true,
			want: lifecycle.SweepStrays{JobID: "j", UpTo: 2}},
		{name: "running with its allocation: the attempts before", job: domain.JobBrief{State: domain.StateRunning, Attempt: 2},
			found: true, hasAlloc: true, want: lifecycle.SweepStrays{JobID: "j", UpTo: 1}},
		{name: "running without allocation: requeued instead", job: domain.JobBrief{State: domain.StateRunning, Attempt: 2}, found: true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := lifecycle.JudgeStrays("j", c.job, c.found, c.hasAlloc); !reflect.DeepEqual(got, c.want) {
				t.Errorf("JudgeStrays = %#v, want %#v", got, c.want)
			}
		})
	}
}

// A footprint goes once nothing can reserve the job again.
func TestFootprintDone(t *testing.T) {
	cases := []struct {
		name  string
		job   domain.JobBrief
		found bool
		want  bool
	}{
		{name: "no record", want: true},
		{name: "finished", job: domain.JobBrief{State: domain.StateCancelled}, found: true, want: true},
		{name: "pending", job: domain.JobBrief{State: domain.StatePending}, found: true},
		{name: "running", job: domain.JobBrief{State: domain.StateRunning}, found: true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := lifecycle.FootprintDone(c.job, c.found); got != c.want {
				t.Errorf("FootprintDone = %v, want %v", got, c.want)
			}
		})
	}
}
