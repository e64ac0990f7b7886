package main

import (
	"context"
	"testing"

	"github.com/lockstep-dev/lockstep/shared/contract/domain"
	"github.com/lockstep-dev/lockstep/shared/contract/jobspec"
)

// An array's verdict is every task recorded, each counted once however
// often its record changes meanwhile; a plain job's is its record; a
// rejection is final at once.
func TestAwaitVerdictsWaitsForEveryTaskOfAnArray(t *testing.T) {
	task := func(i int, st domain.State) domain.Job {
		return domain.Job{ID: "sweep_" + string(rune('0'+i)), State: st, Array: &domain.ArrayTask{JobID: "sweep", Index: i}}
	}
	records := make(chan domain.Job, 16)
	for _, j := range []domain.Job{
		task(0, domain.StatePending),
		task(0, domain.StateRunning), // the same task again: not a second one
		{ID: "solo", State: domain.StatePending},
		{ID: "bad", State: domain.StateRejected, Reason: "no such queue"},
		{ID: "stranger", State: domain.StatePending},
		task(1, domain.StatePending),
	} {
		records <- j
	}
	close(records)
	parse := func(raw string) jobspec.Spec {
		spec, err := jobspec.Parse([]byte(raw))
		if err != nil {
			t.Fatal(err)
		}
		return spec
	}
	waiting := map[string]int{
		"sweep": expectedRecords(parse(`{"id":"sweep","gang":{"nodes":1,"gpusPerNode":1},"array":{"indexes":"0-2"},"command":["true"]}`)),
		"solo":  expectedRecords(parse(`{"id":"solo","gang":{"nodes":1,"gpusPerNode":1},"command":["true"]}`)),
		"bad":   1,
	}
	if waiting["sweep"] != 3 || waiting["solo"] != 1 {
		t.Fatalf("expected records: %v, want sweep 3, solo 1", waiting)
	}
	rejected, pending := awaitVerdicts(context.Background(), records, waiting)
	if pending != 1 {
		t.Errorf("pending = %d, want 1 (the array, whose third task was never recorded)", pending)
	}
	if len(rejected) != 1 || rejected["bad"] != "no such queue" {
		t.Errorf("rejected = %v", rejected)
	}
}
