package client

import (
	"fmt"
	"testing"

	"github.com/lockstep-dev/lockstep/shared/contract/domain"
)

// A record read from a replica that is behind never replaces a newer one
// already returned: the job read as succeeded does not read as running
// again (TestComposeFaults once saw exactly that on a three-server NATS).
func TestNewestSeenNeverGoesBack(t *testing.T) {
	var n newestSeen
	running := domain.Job{ID: "a", State: domain.StateRunning, Placement: &domain.Placement{MasterAddr: "node-01"}}
	done := domain.Job{ID: "a", State: domain.StateSucceeded, Placement: &domain.Placement{MasterAddr: "node-01"}}

	if got := n.newest(running, 5); got.State != domain.StateRunning {
		t.Fatalf("first read: got %s, want running", got.State)
	}
	if got := n.newest(done, 7); got.State != domain.StateSucceeded {
		t.Fatalf("newer read: got %s, want succeeded", got.State)
	}
	stale := n.newest(running, 5)
	if stale.State != domain.StateSucceeded {
		t.Fatalf("stale read (revision 5 after 7): got %s, want the succeeded record", stale.State)
	}
	// The record returned again is the caller's own.
	stale.Placement.MasterAddr = "changed"
	if again := n.newest(running, 6); again.Placement.MasterAddr != "node-01" {
		t.Errorf("a caller's change to a returned record showed in a later read: %q", again.Placement.MasterAddr)
	}
	// Another job's revisions are its own.
	if got := n.newest(domain.Job{ID: "b", State: domain.StatePending}, 1); got.State != domain.StatePending {
		t.Errorf("job b at revision 1: got %s, want pending", got.State)
	}
	// The same revision again is not stale.
	if got := n.newest(done, 7); got.State != domain.StateSucceeded {
		t.Errorf("same revision: got %s", got.State)
	}
}

// The memory is bounded: past maxSeen jobs it starts afresh, and then
// holds again for what is read from there on.
func TestNewestSeenIsBounded(t *testing.T) {
	var n newestSeen
	for i := range maxSeen + 10 {
		n.newest(domain.Job{ID: fmt.Sprintf("j%d", i), State: domain.StatePending}, uint64(i+1))
	}
	if len(n.jobs) > maxSeen {
		t.Fatalf("remembers %d jobs, want at most %d", len(n.jobs), maxSeen)
	}
	last := fmt.Sprintf("j%d", maxSeen+9)
	if got := n.newest(domain.Job{ID: last, State: domain.StateRunning}, 1); got.State != domain.StatePending {
		t.Errorf("a job read after the reset went back to revision 1: got %s", got.State)
	}
}
