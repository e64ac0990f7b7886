package live

import (
	"bytes"
	"log/slog"
	"testing"

	"github.com/lockstep-dev/lockstep/shared/contract/domain"
	"github.com/lockstep-dev/lockstep/shared/plumbing/store"
)

// A virtual agent starts only an assignment that names the job its key
// does, as a real one checks: one filed under job a's key that names job
// b starts nothing and reports nothing.
func TestVirtualAgentChecksTheAssignmentAgainstItsKey(t *testing.T) {
	a := newAgents(nil, nil, slog.New(slog.DiscardHandler))
	a.nodes["n1"] = 7
	as := []byte(`{"jobId":"b","attempt":1,"epoch":7,"command":["sleep","60"]}`)

	a.assigned(store.AssignKey("n1", "a"), as, 10)
	if a.started.Load() != 0 || len(a.reports) != 0 || len(a.launched) != 0 {
		t.Fatalf("job b's assignment under job a's key: %d started, %d reports, launched %v; want none",
			a.started.Load(), len(a.reports), a.launched)
	}

	a.assigned(store.AssignKey("n1", "b"), as, 11)
	if a.started.Load() != 1 || len(a.reports) != 1 {
		t.Fatalf("job b's assignment under its own key: %d started, %d reports; want 1 and 1", a.started.Load(), len(a.reports))
	}
	if r := <-a.reports; r.JobID != "b" || r.Kind != domain.ReportStarted {
		t.Errorf("report %+v, want job b started", r)
	}
	a.mu.Lock()
	for _, timer := range a.exits {
		timer.Stop()
	}
	a.mu.Unlock()
}

// The launch barrier puts every assignment again, value kept: the same
// key at the same CreateRevision is skipped unread (here a value that
// would be refused, and logged, if it were read). A new assignment of the
// key (a later attempt, created anew) starts again.
func TestVirtualAgentSkipsTheBarriersRewriteUnread(t *testing.T) {
	var logged bytes.Buffer
	a := newAgents(nil, nil, slog.New(slog.NewTextHandler(&logged, nil)))
	a.nodes["n1"] = 7
	key := store.AssignKey("n1", "j")
	a.assigned(key, []byte(`{"jobId":"j","attempt":1,"epoch":7,"command":["sleep","60"]}`), 20)
	a.assigned(key, []byte(`{"jobId":"not j"}`), 20)
	if logged.Len() > 0 || a.started.Load() != 1 {
		t.Fatalf("the rewrite was read: %d started, log %q", a.started.Load(), logged.String())
	}
	a.released(key)
	a.assigned(key, []byte(`{"jobId":"j","attempt":2,"epoch":7,"command":["sleep","60"]}`), 31)
	if a.started.Load() != 2 {
		t.Fatalf("a new assignment of the key: %d started, want 2", a.started.Load())
	}
	a.stop()
}
