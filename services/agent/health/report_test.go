package health

import (
	"testing"
)

func gpu(i int, reasons ...string) GPUState {
	return GPUState{Index: i, UUID: "GPU-0000000" + string(rune('0'+i)), Reasons: reasons}
}

func TestDiff(t *testing.T) {
	for _, tc := range []struct {
		name               string
		prev, cur          Report
		unhealthy, healthy []int
		nodeDown           string
		nodeUp             bool
	}{
		{"nothing", Report{GPUs: []GPUState{gpu(0), gpu(1)}}, Report{GPUs: []GPUState{gpu(0), gpu(1)}}, nil, nil, "", false},
		{"first poll announces what is broken", Report{}, Report{GPUs: []GPUState{gpu(0), gpu(1, "ECC")}}, []int{1}, nil, "", false},
		{"goes bad", Report{GPUs: []GPUState{gpu(0), gpu(1)}}, Report{GPUs: []GPUState{gpu(0, "lost"), gpu(1)}}, []int{0}, nil, "", false},
		{"a new reason is no transition", Report{GPUs: []GPUState{gpu(0, "ECC")}}, Report{GPUs: []GPUState{gpu(0, "ECC", "Xid 79")}}, nil, nil, "", false},
		{"recovers", Report{GPUs: []GPUState{gpu(0, "ECC"), gpu(1)}}, Report{GPUs: []GPUState{gpu(0), gpu(1)}}, nil, []int{0}, "", false},
		{"node goes bad", Report{GPUs: []GPUState{gpu(0)}}, Report{GPUs: []GPUState{gpu(0)}, Node: []string{"a", "b"}}, nil, nil, "a; b", false},
		{"node stays bad", Report{Node: []string{"a"}}, Report{Node: []string{"b"}}, nil, nil, "", false},
		{"node recovers", Report{Node: []string{"a"}}, Report{}, nil, nil, "", true},
	} {
		ch := Diff(tc.prev, tc.cur)
		if !sameIndexes(ch.BecameUnhealthy, tc.unhealthy) || !sameIndexes(ch.BecameHealthy, tc.healthy) || ch.NodeBecameUnhealthy != tc.nodeDown || ch.NodeBecameHealthy != tc.nodeUp {
			t.Errorf("%s: %+v", tc.name, ch)
		}
		if ch.Empty() != (len(tc.unhealthy)+len(tc.healthy) == 0 && tc.nodeDown == "" && !tc.nodeUp) {
			t.Errorf("%s: Empty() = %v", tc.name, ch.Empty())
		}
	}
}

func sameIndexes(gs []GPUState, want []int) bool {
	if len(gs) != len(want) {
		return false
	}
	for i := range gs {
		if gs[i].Index != want[i] {
			return false
		}
	}
	return true
}
