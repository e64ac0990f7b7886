package gang

import (
	"slices"
	"testing"

	"github.com/cockroachdb/errors"

	"github.com/lockstep-dev/lockstep/shared/contract/domain"
	"github.com/lockstep-dev/lockstep/shared/plumbing/jobs"
	"github.com/lockstep-dev/lockstep/shared/plumbing/store"
)

func claim(job string, attempt int) store.Owned {
	return store.Owned{StoredKey: store.StoredKey{Key: store.ClaimKey("n0", attempt)}, Job: job, Attempt: attempt}
}

// strayJobs finds the jobs with keys their allocation does not account for.
func TestStrayJobs(t *testing.T) {
	a := gangOn("n0", "n1") // job j, attempt 1
	cases := []struct {
		name      string
		allocs    map[string]domain.Allocation
		malformed map[string]error
		claims    []store.Owned
		assigns   []assignRef
		want      []string
	}{
		{name: "everything accounted for", allocs: map[string]domain.Allocation{"j": a},
			claims: []store.Owned{claim("j", 1)}, assigns: []assignRef{{"n0", "j"}, {"n1", "j"}}},
		{name: "allocation record deleted", claims: []store.Owned{claim("j", 1)}, assigns: []assignRef{{"n0", "j"}}, want: []string{"j"}},
		{name: "assignment alone", assigns: []assignRef{{"n1", "k"}}, want: []string{"k"}},
		{name: "claim of an older attempt", allocs: map[string]domain.Allocation{"j": a}, claims: []store.Owned{claim("j", 0)}, want: []string{"j"}},
		{name: "assignment on a node outside the placement", allocs: map[string]domain.Allocation{"j": a},
			assigns: []assignRef{{"n7", "j"}}, want: []string{"j"}},
		{name: "undecodable claim names no job", claims: []store.Owned{{StoredKey: store.StoredKey{Key: store.ClaimKey("n0", 0)}}}},
		{name: "malformed record is released as such", malformed: map[string]error{"j": errors.New("bad")},
			claims: []store.Owned{claim("j", 1)}, assigns: []assignRef{{"n0", "j"}}},
		{name: "sorted", assigns: []assignRef{{"n0", "z"}, {"n0", "b"}, {"n1", "z"}}, want: []string{"b", "z"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := strayJobs(c.allocs, c.malformed, c.claims, c.assigns); !slices.Equal(got, c.want) {
				t.Errorf("strayJobs = %v, want %v", got, c.want)
			}
		})
	}
}

// strayUpTo says which attempts of a job with strays are over.
func TestStrayUpTo(t *testing.T) {
	cases := []struct {
		name     string
		job      jobs.Brief
		found    bool
		hasAlloc bool
		upTo     int
		ok       bool
	}{
		{name: "no record: every attempt", upTo: -1, ok: true},
		{name: "finished: every attempt", job: jobs.Brief{State: domain.StateSucceeded, Attempt: 3}, found: true, upTo: -1, ok: true},
		{name: "pending: the attempts before", job: jobs.Brief{State: domain.StatePending, Attempt: 3}, found: true, upTo: 2, ok: true},
		{name: "running with its allocation: the attempts before", job: jobs.Brief{State: domain.StateRunning, Attempt: 2},
			found: true, hasAlloc: true, upTo: 1, ok: true},
		{name: "running without allocation: requeued instead", job: jobs.Brief{State: domain.StateRunning, Attempt: 2}, found: true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			upTo, ok := strayUpTo(c.job, c.found, c.hasAlloc)
			if upTo != c.upTo || ok != c.ok {
				t.Errorf("strayUpTo = %d %v, want %d %v", upTo, ok, c.upTo, c.ok)
			}
		})
	}
}
