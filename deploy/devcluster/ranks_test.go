package devcluster_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/lockstep-dev/lockstep/deploy/devcluster"
	"github.com/lockstep-dev/lockstep/shared/contract/domain"
	"github.com/lockstep-dev/lockstep/shared/contract/events"
	"github.com/lockstep-dev/lockstep/shared/plumbing/store"
	"github.com/lockstep-dev/lockstep/shared/plumbing/testenv"
)

// The finding (issue 14): a requeued job's next attempt was reserved and
// started while a rank of the attempt before, ignoring SIGTERM, still ran
// out its stop grace on its node. Now the agent keeps running/<node>/<job>
// until the rank's whole tree is gone, and the reservation waits for it:
// at the moment attempt 2's allocation appears in etcd, attempt 1's rank
// process must already be gone.
func TestNextAttemptWaitsForTheRanksOfTheLast(t *testing.T) {
	h := newHarness(t, devcluster.Config{Nodes: 2, GPUsPerNode: 1})
	ctx := context.Background()
	out := t.TempDir()
	id := h.submit(fmt.Sprintf(`{"id":"stubborn","gang":{"nodes":1,"gpusPerNode":1},
		"command":["sh","-c","trap '' TERM; echo $$ > %s/pid-$LOCKSTEP_ATTEMPT.tmp && mv %s/pid-$LOCKSTEP_ATTEMPT.tmp %s/pid-$LOCKSTEP_ATTEMPT; exec sleep 300"]}`,
		out, out, out))
	j := h.waitFor(id, 30*time.Second, func(j domain.Job) bool { return j.State == domain.StateRunning })
	node := j.Placement.Nodes[0].Node
	var pid int
	testenv.Eventually(t, 30*time.Second, func() error {
		raw, err := os.ReadFile(filepath.Join(out, "pid-1"))
		if err != nil {
			return err
		}
		pid, err = strconv.Atoi(string(bytes.TrimSpace(raw)))
		return err
	})
	if !alive(pid) {
		t.Fatalf("attempt 1's rank (pid %d) is not running", pid)
	}

	// Tamper: the allocation of the running gang goes; gang requeues the
	// job and releases the attempt, and the agent stops the rank, which
	// ignores SIGTERM and lives until the stop grace (5 s) ends.
	wctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	del, err := h.etcd.Delete(ctx, store.AllocKey(id))
	if err != nil {
		t.Fatal(err)
	}
	deleted := time.Now()
	w := h.etcd.Watch(wctx, store.AllocKey(id), clientv3.WithRev(del.Header.Revision+1))
	reserved := false
	for resp := range w {
		for _, ev := range resp.Events {
			if ev.Type != clientv3.EventTypePut {
				continue
			}
			a, err := store.DecodeAllocation(store.AllocKey(id), ev.Kv.Value)
			if err != nil || a.Attempt < 2 {
				continue
			}
			// Checked at once, before anything else: the ordering is the test.
			if alive(pid) {
				t.Fatalf("attempt %d reserved on %v while attempt 1's rank (pid %d) still runs on %s",
					a.Attempt, a.Placement.NodeNames(), pid, node)
			}
			t.Logf("attempt %d reserved %s after the deletion, attempt 1's rank already gone", a.Attempt, time.Since(deleted).Round(time.Millisecond))
			reserved = true
		}
		if reserved {
			break
		}
	}
	if !reserved {
		t.Fatalf("attempt 2 never reserved: %v", wctx.Err())
	}
	// The wait was visible: a conflict naming the node still running the
	// rank, while it was stopped.
	var named bool
	for _, ev := range h.events(id) {
		named = named || (ev.Type == events.Conflict && strings.Contains(ev.Reason, node+" still runs ranks of attempt 1"))
	}
	if !named {
		t.Errorf("no conflict event names %s still running attempt 1's ranks", node)
	}
	h.waitFor(id, 30*time.Second, func(j domain.Job) bool { return j.Attempt == 2 && j.State == domain.StateRunning })
	h.checkInvariants()
}

// alive says whether pid is a process that has not exited (a zombie has).
func alive(pid int) bool {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	i := bytes.LastIndexByte(raw, ')')
	return i >= 0 && i+2 < len(raw) && raw[i+2] != 'Z'
}
