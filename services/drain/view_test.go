package drain

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/lockstep-dev/lockstep/shared/contract/domain"
	"github.com/lockstep-dev/lockstep/shared/contract/jobspec"
	"github.com/lockstep-dev/lockstep/shared/plumbing/jobs"
	"github.com/lockstep-dev/lockstep/shared/plumbing/testenv"
)

// viewRecord is a job record as a running, draining gang's looks: every
// field the mirror reads set, and a spec and placement of a real size.
func viewRecord(t testing.TB) []byte {
	t.Helper()
	now := time.Date(2026, 12, 6, 12, 0, 0, 0, time.UTC)
	spec := testenv.GangSpec("viewed", 4, 8, "python", "train.py", "--config", strings.Repeat("x", 200))
	spec.Env = map[string]string{"NCCL_DEBUG": "INFO", "WANDB_PROJECT": "llm", "DATA": "/data/shards"}
	spec.TimeLimit = jobspec.DurationOf(2 * time.Hour)
	spec.RestartPolicy.RequeueOnTimeLimit = true
	p := testenv.GangPlacement(testenv.GangNodes("viewed", 4), 8, 29500)
	job := domain.Job{ID: "viewed", Spec: spec, State: domain.StateRunning, Attempt: 3, Restarts: 1, Placement: &p,
		Drain:  &domain.Drain{Kind: domain.DrainNode, Then: domain.ThenRequeue, Reason: "node n1 drained", RequestedAt: now, Deadline: now.Add(time.Minute), Actor: "alice"},
		Timing: domain.Timing{Compute: time.Hour, SchedLatency: time.Second, GangWait: 2 * time.Second, Drain: 3 * time.Second}, SubmittedAt: now.Add(-2 * time.Hour),
		PendingSince: now.Add(-2 * time.Hour), ReservedAt: now.Add(-time.Hour), RunningAt: now.Add(-time.Hour), Owner: "alice",
		TraceParent: "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"}
	raw, err := json.Marshal(job)
	if err != nil {
		t.Fatal(err)
	}
	return raw
}

// The view decodes what the mirror reads (dueDrains, GPUDrains,
// orphanedDrains, the η gauge) as the full decode does: a field renamed in
// domain.Job, or a new one the mirror starts to read, shows here.
func TestJobViewKeepsWhatTheMirrorReads(t *testing.T) {
	raw := viewRecord(t)
	full, err := jobs.Decode("viewed", raw)
	if err != nil {
		t.Fatal(err)
	}
	view, err := decodeJobView("viewed", raw)
	if err != nil {
		t.Fatal(err)
	}
	want := domain.Job{ID: full.ID, State: full.State, Attempt: full.Attempt, Drain: full.Drain, Timing: full.Timing, RunningAt: full.RunningAt}
	want.Spec.TimeLimit, want.Spec.RestartPolicy.RequeueOnTimeLimit = full.Spec.TimeLimit, full.Spec.RestartPolicy.RequeueOnTimeLimit
	if !reflect.DeepEqual(view, want) {
		t.Errorf("view %+v\nwant %+v", view, want)
	}
	if view.Spec.TimeLimit.Duration() != 2*time.Hour || !view.Spec.RestartPolicy.RequeueOnTimeLimit || view.Drain == nil ||
		view.Timing.Compute != time.Hour || view.RunningAt.IsZero() {
		t.Errorf("the view lost a field the record has: %+v", view)
	}
	if _, err := decodeJobView("other", raw); err == nil {
		t.Error("a record under another job's key decoded")
	}
}

// go test -bench JobRecord ./services/drain: what the mirror's decode of
// one record costs, the view against the whole record.
func BenchmarkJobRecordView(b *testing.B) {
	raw := viewRecord(b)
	b.SetBytes(int64(len(raw)))
	for b.Loop() {
		if _, err := decodeJobView("viewed", raw); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkJobRecordFull(b *testing.B) {
	raw := viewRecord(b)
	b.SetBytes(int64(len(raw)))
	for b.Loop() {
		if _, err := jobs.Decode("viewed", raw); err != nil {
			b.Fatal(err)
		}
	}
}
