package main

import (
	"testing"
	"time"

	"github.com/lockstep-dev/lockstep/shared/contract/domain"
)

func TestSummarizeComputesClusterEfficiency(t *testing.T) {
	jobs := []domain.Job{
		{State: domain.StateSucceeded, ReservedAt: time.Now(), Timing: domain.Timing{Compute: 90 * time.Second, SchedLatency: 5 * time.Second, Drain: 5 * time.Second, GangWait: 4 * time.Second}},
		{State: domain.StateRunning, ReservedAt: time.Now(), Timing: domain.Timing{Compute: 0, SchedLatency: 0, GangWait: 2 * time.Second}},
		{State: domain.StatePending},
	}
	st := summarize(jobs)
	if st.Efficiency != 0.9 {
		t.Errorf("η = %v, want 90/(90+5+5) = 0.9", st.Efficiency)
	}
	if st.MeanGangWait != 3*time.Second {
		t.Errorf("mean gang wait = %s, want 3s", st.MeanGangWait)
	}
	if st.Jobs[domain.StatePending] != 1 || st.Jobs[domain.StateSucceeded] != 1 {
		t.Errorf("counts %v", st.Jobs)
	}
}
