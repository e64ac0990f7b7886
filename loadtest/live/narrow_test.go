package live

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/lockstep-dev/lockstep/shared/contract/codec"
	"github.com/lockstep-dev/lockstep/shared/contract/domain"
	"github.com/lockstep-dev/lockstep/shared/contract/events"
)

// The harness decodes only what it reads of an assignment and an event;
// those fields must keep the names the services write them under, or a
// virtual agent would run every job for the default time and the report
// would miss its placements.
func TestNarrowDecodesReadWhatTheServicesWrite(t *testing.T) {
	as := domain.Assignment{JobID: "j", Attempt: 3, Epoch: 42, Node: "n1", Command: []string{"sleep", "0.5"},
		Ranks: []domain.Rank{{Rank: 0, GPUs: []int{0}}}, Env: map[string]string{"A": "1"}}
	raw, err := json.Marshal(as)
	if err != nil {
		t.Fatal(err)
	}
	var got launched
	if err := codec.Decode(raw, &got); err != nil {
		t.Fatal(err)
	}
	if got.JobID != as.JobID || got.Attempt != as.Attempt || got.Epoch != as.Epoch || len(got.Command) != 2 || got.Command[1] != "0.5" {
		t.Errorf("assignment read as %+v, from %s", got, raw)
	}

	at := time.Date(2026, 12, 6, 14, 0, 0, 0, time.UTC)
	ev := events.Event{Type: events.Reserved, JobID: "j", Time: at, Reason: "Relaxed: spread",
		Placement: &domain.Placement{Nodes: []domain.NodePlacement{{Node: "n1", GPUs: []int{0}}, {Node: "n2"}}}}
	if raw, err = json.Marshal(ev); err != nil {
		t.Fatal(err)
	}
	var seen followedEvent
	if err := codec.Decode(raw, &seen); err != nil {
		t.Fatal(err)
	}
	if seen.Type != ev.Type || seen.JobID != ev.JobID || !seen.Time.Equal(at) || seen.Reason != ev.Reason ||
		seen.Placement == nil || len(seen.Placement.Nodes) != 2 || seen.Placement.Nodes[1].Node != "n2" {
		t.Errorf("event read as %+v, from %s", seen, raw)
	}
}
