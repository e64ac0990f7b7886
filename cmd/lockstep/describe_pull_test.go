package main

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/lockstep-dev/lockstep/shared/contract/domain"
	"github.com/lockstep-dev/lockstep/shared/contract/jobspec"
)

// A container job's pull phase is its own line, and its own term of η.
func TestDescribeShowsThePullPhase(t *testing.T) {
	var buf bytes.Buffer
	spec := jobspec.Spec{Name: "c", Command: []string{"/probe"}, Container: &jobspec.Container{Image: "probe:v1"}}
	tm := domain.Timing{Compute: 10 * time.Second, SchedLatency: 2 * time.Second, Pull: 1200 * time.Millisecond}
	printDescription(&buf, description{ID: "c", State: domain.StateRunning, Spec: spec, Timing: tm, Efficiency: tm.Efficiency(),
		Pull: &domain.PullSummary{Took: 1200 * time.Millisecond, Slowest: "node-01", SlowestTook: time.Second, Bytes: 12_345_678}})
	for _, want := range []string{"Pull:       1.2s (node-01 slowest, 12 MB)", "scheduling 2s + image pull 1.2s + checkpoint drain 0s"} {
		if !strings.Contains(buf.String(), want) {
			t.Errorf("describe lacks %q:\n%s", want, buf.String())
		}
	}
}
