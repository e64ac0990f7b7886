package devcluster_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/lockstep-dev/lockstep/deploy/devcluster"
	"github.com/lockstep-dev/lockstep/shared/contract/domain"
	"github.com/lockstep-dev/lockstep/shared/contract/events"
	"github.com/lockstep-dev/lockstep/shared/plumbing/store"
	"github.com/lockstep-dev/lockstep/shared/plumbing/testenv"
)

// TestTopologyPlacementAndSwitchWait runs on 4 nodes over 2 leaves: a
// 2-node gang lands in one leaf; with one node busy in each leaf, a gang
// asking for one switch waits (WaitingForSwitches) and, after its wait,
// takes the best available and says so.
func TestTopologyPlacementAndSwitchWait(t *testing.T) {
	h := newHarness(t, devcluster.Config{Nodes: 4, Leaves: 2})

	first := h.submit(`{"id":"one-leaf","gang":{"nodes":2,"gpusPerNode":8},"command":["true"]}`)
	j := h.waitFor(first, 30*time.Second, func(j domain.Job) bool { return j.State == domain.StateSucceeded })
	if len(j.Placement.Leaves) != 1 {
		t.Errorf("2-node gang on an idle 2-leaf cluster spans %v, want one leaf", j.Placement.Leaves)
	}

	// One busy node in each leaf: best fit packs three 1-node jobs into
	// one full leaf plus one node of the other; cancel one in the full leaf.
	byLeaf := map[string][]string{}
	for _, id := range []string{"busy-a", "busy-b", "busy-c"} {
		h.submit(`{"id":"` + id + `","gang":{"nodes":1,"gpusPerNode":8},"command":["sleep","300"]}`)
	}
	for _, id := range []string{"busy-a", "busy-b", "busy-c"} {
		j := h.waitFor(id, 30*time.Second, func(j domain.Job) bool { return j.State == domain.StateRunning })
		byLeaf[j.Placement.Leaves[0]] = append(byLeaf[j.Placement.Leaves[0]], id)
	}
	if len(byLeaf) != 2 {
		t.Fatalf("setup: busy jobs by leaf %v", byLeaf)
	}
	for _, ids := range byLeaf {
		if len(ids) == 2 {
			if err := h.cl.Cancel(context.Background(), ids[0], "make room"); err != nil {
				t.Fatal(err)
			}
			h.waitFor(ids[0], 10*time.Second, func(j domain.Job) bool { return j.State == domain.StateCancelled })
			testenv.Eventually(t, 10*time.Second, func() error {
				if n := h.keysUnder(store.AllocKey(ids[0])); n != 0 {
					return fmt.Errorf("%s still allocated", ids[0])
				}
				return nil
			})
		}
	}

	submitted := time.Now()
	id := h.submit(`{"id":"switches","gang":{"nodes":2,"gpusPerNode":8},"command":["sleep","1"],
		"topology":{"maxSwitches":1,"waitForSwitches":"3s"}}`)
	j = h.waitFor(id, 10*time.Second, func(j domain.Job) bool {
		return j.State == domain.StatePending && strings.HasPrefix(j.Reason, "WaitingForSwitches")
	})
	t.Logf("while waiting: %s — %s", j.Reason, j.Detail)
	j = h.waitFor(id, 30*time.Second, func(j domain.Job) bool { return j.State.Active() || j.State.Terminal() })
	waited := time.Since(submitted)
	if waited < 3*time.Second {
		t.Errorf("placed after %s, before its 3s switch wait", waited)
	}
	if len(j.Placement.Leaves) != 2 {
		t.Errorf("relaxed placement spans %v, want the 2 leaves available", j.Placement.Leaves)
	}
	reserved := h.waitEvent(id, events.Reserved)
	if !strings.Contains(strings.ToLower(reserved.Reason), "relax") && !strings.Contains(reserved.Reason, "switch") {
		t.Errorf("reserved event should say the switch constraint was relaxed, reason %q", reserved.Reason)
	}
	t.Logf("reserved after %s: %s", waited.Round(100*time.Millisecond), reserved.Reason)
}
