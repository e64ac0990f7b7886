package codec_test

import (
	"encoding/json"
	"reflect"
	"testing"
	"time"

	"github.com/lockstep-dev/lockstep/shared/contract/codec"
	"github.com/lockstep-dev/lockstep/shared/contract/domain"
	"github.com/lockstep-dev/lockstep/shared/contract/jobspec"
)

// Every field kind the records use (durations as integers, times, maps,
// pointers, omitempty and omitzero fields, nested slices) must decode to
// what encoding/json gives.
func TestDecodeMatchesEncodingJSON(t *testing.T) {
	spec, err := jobspec.Parse([]byte(`{"id":"train-1","queue":"research","priority":5,
		"gang":{"nodes":2,"gpusPerNode":4},"command":["python","train.py"],"timeLimit":"2h",
		"topology":{"maxSwitches":1,"waitForSwitches":"10m"},"env":{"A":"1"},"checkpoint":{"signal":"SIGUSR1","gracePeriod":"5m"},"restartPolicy":{"maxRestarts":2}}`))
	if err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 12, 3, 6, 0, 0, 123456789, time.UTC)
	exit := 3
	job := domain.Job{
		ID: "train-1", Spec: spec, State: domain.StateRunning, Reason: "Resources", Detail: "needs 2 nodes — «ünïcode»",
		Attempt: 2, Restarts: 1, Conflicts: 4, ExitCode: &exit,
		Placement: &domain.Placement{MasterAddr: "10.0.0.1", MasterPort: 29500, Leaves: []string{"leaf-1", "leaf-2"},
			Nodes: []domain.NodePlacement{{Node: "n1", NodeRank: 0, GPUs: []int{0, 1, 2, 3},
				Ranks: []domain.Rank{{Rank: 0, LocalRank: 0, GPUs: []int{0, 1}, CPUs: []int{0, 1, 2}}, {Rank: 1, LocalRank: 1, GPUs: []int{2, 3}}}}}},
		Drain:          &domain.Drain{Kind: "preempt", Then: "requeue", Reason: "preempted", RequestedAt: at, Deadline: at.Add(time.Minute)},
		LastCheckpoint: &domain.CheckpointRef{Step: 1200, Path: "/ckpt/1200", Rank: 0, Attempt: 1, At: at},
		Timing:         domain.Timing{Compute: 90 * time.Minute, SchedLatency: 1500 * time.Millisecond, GangWait: time.Second, Drain: 3 * time.Second},
		SubmittedAt:    at, PendingSince: at, RunningAt: at.Add(2 * time.Second),
		TraceID: "0123456789abcdef0123456789abcdef", TraceParent: "00-0123456789abcdef0123456789abcdef-0123456789abcdef-01",
	}
	alloc := domain.Allocation{JobID: "train-1", Attempt: 2, State: "running", Placement: *job.Placement, Lease: 42,
		ReservedAt: at, LaunchDeadline: at.Add(time.Minute), Started: map[string]bool{"n1": true}, Exited: map[string]int{"n1": 0}}

	for _, v := range []any{job, alloc} {
		data, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		want := reflect.New(reflect.TypeOf(v))
		got := reflect.New(reflect.TypeOf(v))
		if err := json.Unmarshal(data, want.Interface()); err != nil {
			t.Fatal(err)
		}
		if err := codec.Decode(data, got.Interface()); err != nil {
			t.Fatalf("%T: %v", v, err)
		}
		if !reflect.DeepEqual(got.Elem().Interface(), want.Elem().Interface()) {
			t.Errorf("%T decodes differently:\n got  %+v\n want %+v", v, got.Elem().Interface(), want.Elem().Interface())
		}
		if !reflect.DeepEqual(got.Elem().Interface(), v) {
			t.Errorf("%T does not round-trip:\n got  %+v\n want %+v", v, got.Elem().Interface(), v)
		}
	}
	// Malformed input is an error, as with encoding/json.
	var j domain.Job
	if err := codec.Decode([]byte(`{"id":"x","attempt":"two"}`), &j); err == nil {
		t.Error("a string attempt decoded without error")
	}
}
