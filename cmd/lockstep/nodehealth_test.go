package main

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/lockstep-dev/lockstep/shared/contract/domain"
)

func TestUnhealthyColumn(t *testing.T) {
	for _, tc := range []struct {
		faults []domain.GPUFault
		want   string
	}{
		{nil, "-"},
		{[]domain.GPUFault{{GPU: 3, Reason: "gpu 3 (GPU-x): 2 uncorrectable ECC errors"}}, "gpu 3 (GPU-x): 2 uncorrectable ECC errors"},
		{[]domain.GPUFault{{GPU: 1, Reason: "fell off the bus"}, {GPU: 2, Reason: "x"}}, "gpu 1: fell off the bus; gpu 2: x"},
		{[]domain.GPUFault{{GPU: 0, Reason: "evil\x1b[2J\rreason"}}, `gpu 0: evil\x1b[2J\rreason`},
	} {
		if got := unhealthyColumn(domain.Node{Unhealthy: tc.faults}); got != tc.want {
			t.Errorf("%+v: %q, want %q", tc.faults, got, tc.want)
		}
	}
	got := unhealthyColumn(domain.Node{Unhealthy: []domain.GPUFault{{GPU: 0, Reason: strings.Repeat("é", 500)}}})
	if utf8.RuneCountInString(got) != maxUnhealthyColumn || !strings.HasSuffix(got, "…") {
		t.Errorf("not cut to %d: %q", maxUnhealthyColumn, got)
	}
}
