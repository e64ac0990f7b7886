package jobs_test

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

// placedJob is a running 4 × 8-rank gang's record, every field set that a
// running record can have.
func placedJob() domain.Job {
	now := time.Date(2026, 12, 6, 12, 0, 0, 0, time.UTC)
	spec := testenv.GangSpec("placed", 4, 8, "python", "train.py", "--config", strings.Repeat("x", 200))
	spec.Env = map[string]string{"NCCL_DEBUG": "INFO", "DATA": "/data/shards"}
	spec.TimeLimit = jobspec.DurationOf(2 * time.Hour)
	p := testenv.GangPlacement(testenv.GangNodes("placed", 4), 8, 29500)
	exit := 0
	return domain.Job{ID: "placed", Spec: spec, State: domain.StateRunning, Reason: "r", Detail: "d", Attempt: 3, Restarts: 1, Conflicts: 2,
		Placement: &p, ExitCode: &exit, Owner: "alice",
		Drain:          &domain.Drain{Kind: domain.DrainNode, Then: domain.ThenRequeue, Reason: "node n1 drained", RequestedAt: now, Deadline: now.Add(time.Minute)},
		LastCheckpoint: &domain.CheckpointRef{Step: 7, Path: "/ckpt/7", Attempt: 3, At: now},
		Timing:         domain.Timing{Compute: time.Hour, SchedLatency: time.Second, GangWait: 2 * time.Second},
		SubmittedAt:    now.Add(-2 * time.Hour), PendingSince: now.Add(-2 * time.Hour), ReservedAt: now.Add(-time.Hour), RunningAt: now.Add(-time.Hour),
		TraceParent: "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"}
}

func encode(t testing.TB, j domain.Job) []byte {
	t.Helper()
	raw, err := json.Marshal(j)
	if err != nil {
		t.Fatal(err)
	}
	return raw
}

// DecodeUnplaced gives what Decode gives but the placement of a record
// that is not pending, and a pending record whole.
func TestDecodeUnplacedLeavesOutOnlyAPlacedRecordsPlacement(t *testing.T) {
	for _, state := range []domain.State{domain.StateReserved, domain.StateRunning, domain.StateSucceeded, domain.StatePending} {
		for _, placed := range []bool{true, false} {
			j := placedJob()
			j.State = state
			if !placed {
				j.Placement = nil
			}
			raw := encode(t, j)
			full, err := jobs.Decode("placed", raw)
			if err != nil {
				t.Fatal(err)
			}
			got, err := jobs.DecodeUnplaced("placed", raw)
			if err != nil {
				t.Fatalf("%s: %v", state, err)
			}
			want := full
			if state != domain.StatePending {
				want.Placement = nil
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("%s, placed %v:\n got  %+v\n want %+v", state, placed, got, want)
			}
			if state == domain.StatePending && placed && got.Placement == nil {
				t.Errorf("a pending record lost its placement: written back, it would lose it in the bucket too")
			}
		}
	}
}

// The key check is Decode's; a placement that is no placement is refused
// only where the record comes back whole.
func TestDecodeUnplacedRefusals(t *testing.T) {
	raw := encode(t, placedJob())
	if _, err := jobs.DecodeUnplaced("other", raw); err == nil {
		t.Error("a record under another job's key decoded")
	}
	if _, err := jobs.DecodeUnplaced("placed", []byte(`{"id":"placed","state":"running"`)); err == nil {
		t.Error("truncated JSON decoded")
	}
	var fields map[string]any
	if err := json.Unmarshal(raw, &fields); err != nil {
		t.Fatal(err)
	}
	fields["placement"] = []any{7, "not a placement"}
	spoiled, err := json.Marshal(fields)
	if err != nil {
		t.Fatal(err)
	}
	bad := string(spoiled)
	if _, err := jobs.Decode("placed", []byte(bad)); err == nil {
		t.Fatal("Decode took a spoiled placement: the test proves nothing")
	}
	if j, err := jobs.DecodeUnplaced("placed", []byte(bad)); err != nil || j.Placement != nil || j.Attempt != 3 {
		t.Errorf("a running record with a spoiled placement: %+v, %v (want the rest of it)", j, err)
	}
	pending := strings.Replace(bad, `"state":"running"`, `"state":"pending"`, 1)
	if _, err := jobs.DecodeUnplaced("placed", []byte(pending)); err == nil {
		t.Error("a pending record with a spoiled placement decoded: written back, it would lose it")
	}
}

// go test -bench Unplaced ./shared/plumbing/jobs: a running gang's record,
// whole and without its placement.
func BenchmarkDecodeRunningRecord(b *testing.B) {
	raw := encode(b, placedJob())
	for _, c := range []struct {
		name   string
		decode func(string, []byte) (domain.Job, error)
	}{{"whole", jobs.Decode}, {"unplaced", jobs.DecodeUnplaced}} {
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(int64(len(raw)))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := c.decode("placed", raw); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
