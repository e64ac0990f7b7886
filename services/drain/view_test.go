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
	"github.com/lockstep-dev/lockstep/shared/plumbing/store"
	"github.com/lockstep-dev/lockstep/shared/plumbing/testenv"
)

// viewRecord is a job record as a running, draining gang's looks: every
// field the mirror reads set, and a spec and placement of a real size.
func viewRecord(t testing.TB) []byte {
	t.Helper()
	raw, err := json.Marshal(viewJob())
	if err != nil {
		t.Fatal(err)
	}
	return raw
}

func viewJob() domain.Job {
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
	return job
}

// The view decodes what the mirror reads (dueDrains, GPUDrains,
// orphanedDrains, the η gauge) as the full decode does: a field renamed in
// domain.Job shows here, and so does a field the decisions start to read
// that the view leaves out.
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

	// The decisions come out the same from either, draining or not, before
	// and past the time limit, on a drained node or a withdrawn GPU.
	notDraining := viewJob()
	notDraining.Drain = nil
	rawNot, err := json.Marshal(notDraining)
	if err != nil {
		t.Fatal(err)
	}
	fullNot, _ := jobs.Decode("viewed", rawNot)
	viewNot, err := decodeJobView("viewed", rawNot)
	if err != nil {
		t.Fatal(err)
	}
	p := *full.Placement
	allocs := lookup(map[string]domain.Allocation{"viewed": {JobID: "viewed", Attempt: 3, State: domain.AllocRunning, Placement: p}})
	drained := map[string]domain.NodeState{store.NodeStateKey(p.Nodes[1].Node): {Drained: true, Reason: "maintenance"}}
	sick := map[string]domain.Node{store.NodeKey(p.Nodes[0].Node): {Name: p.Nodes[0].Node, Unhealthy: []domain.GPUFault{{GPU: 0, Reason: "XID 79"}}}}
	for _, pair := range [][2]domain.Job{{full, view}, {fullNot, viewNot}} {
		for _, at := range []time.Time{full.RunningAt.Add(time.Minute), full.RunningAt.Add(3 * time.Hour)} {
			for _, nodes := range []map[string]domain.NodeState{nil, drained} {
				for _, live := range []map[string]domain.Node{nil, sick} {
					want := dueDrains([]domain.Job{pair[0]}, allocs, nodes, live, at)
					if got := dueDrains([]domain.Job{pair[1]}, allocs, nodes, live, at); !reflect.DeepEqual(got, want) {
						t.Errorf("due drains from the view %+v, from the record %+v", got, want)
					}
				}
			}
			want := orphanedDrains([]domain.Job{pair[0]}, nil, allocs, at)
			if got := orphanedDrains([]domain.Job{pair[1]}, nil, allocs, at); !reflect.DeepEqual(got, want) {
				t.Errorf("orphaned drains from the view %+v, from the record %+v", got, want)
			}
		}
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
