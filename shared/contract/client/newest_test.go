package client

import (
	"fmt"
	"testing"

	"github.com/lockstep-dev/lockstep/shared/contract/domain"
)

func record(id string, state domain.State, addr string) domain.Job {
	return domain.Job{ID: id, State: state, Placement: &domain.Placement{MasterAddr: addr}}
}

// A record read from a replica that is behind never replaces a newer one
// already returned: the job read as succeeded does not read as running
// again (TestComposeFaults once saw exactly that on a three-server NATS).
func TestNewestSeenNeverGoesBack(t *testing.T) {
	var n newestSeen
	if got := n.keep(record("a", domain.StateRunning, "node-01"), 5); got.State != domain.StateRunning {
		t.Fatalf("first read: got %s, want running", got.State)
	}
	if got := n.keep(record("a", domain.StateSucceeded, "node-01"), 7); got.State != domain.StateSucceeded {
		t.Fatalf("newer read: got %s, want succeeded", got.State)
	}
	if got := n.keep(record("a", domain.StateRunning, "node-01"), 5); got.State != domain.StateSucceeded {
		t.Fatalf("stale read (revision 5 after 7): got %s, want the succeeded record", got.State)
	}
	if got := n.keep(record("a", domain.StateSucceeded, "node-01"), 7); got.State != domain.StateSucceeded {
		t.Errorf("the same revision again: got %s", got.State)
	}
	if got := n.keep(record("b", domain.StatePending, ""), 1); got.State != domain.StatePending {
		t.Errorf("another job's revisions are its own: job b at revision 1 read %s, want pending", got.State)
	}
}

// What the memory keeps is nobody else's: a caller changing the record it
// was given, first or again, changes nothing a later read returns.
func TestNewestSeenSharesNothing(t *testing.T) {
	var n newestSeen
	first := n.keep(record("a", domain.StateSucceeded, "node-01"), 7)
	first.Placement.MasterAddr = "changed by the first caller"
	again := n.keep(record("a", domain.StateRunning, "stale"), 5)
	if again.Placement.MasterAddr != "node-01" {
		t.Fatalf("a stale read returned %q, want the record as read (node-01)", again.Placement.MasterAddr)
	}
	again.Placement.MasterAddr = "changed by the second caller"
	if third := n.keep(record("a", domain.StateRunning, "stale"), 6); third.Placement.MasterAddr != "node-01" {
		t.Errorf("a later stale read returned %q, want node-01", third.Placement.MasterAddr)
	}
}

// A listing consults the memory without filling it: it would otherwise
// evict every job read one by one, and hold every record of the bucket.
func TestNewestSeenListingConsultsOnly(t *testing.T) {
	var n newestSeen
	n.keep(record("a", domain.StateSucceeded, "node-01"), 7)
	if got, ok := n.newer("a", 5); !ok || got.State != domain.StateSucceeded {
		t.Errorf("a listing's revision 5 of a job read at 7: got %v %s, want the succeeded record", ok, got.State)
	}
	if _, ok := n.newer("a", 7); ok {
		t.Error("a listing's record as new as the one read was replaced")
	}
	if _, ok := n.newer("b", 3); ok || len(n.jobs) != 1 {
		t.Errorf("a listing's job never read: replaced %v, %d jobs remembered, want 1", ok, len(n.jobs))
	}
}

// The memory is bounded: a new job past maxSeen starts it afresh, and it
// then holds again for what is read from there on; a job already
// remembered is updated in place, full or not.
func TestNewestSeenIsBounded(t *testing.T) {
	var n newestSeen
	for i := range maxSeen {
		n.keep(record(fmt.Sprintf("j%d", i), domain.StatePending, ""), uint64(i+1))
	}
	n.keep(record("j0", domain.StateRunning, ""), 5000)
	if len(n.jobs) != maxSeen {
		t.Fatalf("updating a remembered job when full left %d jobs, want %d", len(n.jobs), maxSeen)
	}
	n.keep(record("new", domain.StatePending, ""), 6000)
	if len(n.jobs) > maxSeen {
		t.Fatalf("remembers %d jobs, want at most %d", len(n.jobs), maxSeen)
	}
	if got := n.keep(record("new", domain.StateRunning, ""), 1); got.State != domain.StatePending {
		t.Errorf("a job read after the reset went back to revision 1: got %s", got.State)
	}
}
