package place_test

import (
	"reflect"
	"testing"

	"github.com/lockstep-dev/lockstep/shared/contract/domain"
	"github.com/lockstep-dev/lockstep/shared/core/place"
)

func TestClosestNICsAndMemoryNodes(t *testing.T) {
	n := domain.Node{GPUs: 6, CPUs: 8, NUMA: []domain.NUMANode{
		{ID: 0, GPUs: []int{0, 1, 2, 3}, CPUs: []int{0, 1, 2, 3}, NICs: []string{"mlx5_0", "mlx5_1"}},
		{ID: 1, GPUs: []int{4, 5}, CPUs: []int{4, 5, 6, 7}},
	}}
	for _, tc := range []struct {
		gpus []int
		want []string
	}{
		{[]int{0}, []string{"mlx5_0"}},
		{[]int{1}, []string{"mlx5_1"}},
		{[]int{2}, []string{"mlx5_0"}},
		{[]int{0, 1, 2, 3}, []string{"mlx5_0", "mlx5_1"}},
		{[]int{4}, nil},
		{[]int{9}, nil},
	} {
		if got := place.ClosestNICs(n, tc.gpus); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("GPUs %v: NICs %v, want %v", tc.gpus, got, tc.want)
		}
	}
	if got := place.MemoryNodes(n, []int{5, 6}); !reflect.DeepEqual(got, []int{1}) {
		t.Errorf("cores 5,6: %v", got)
	}
	if got := place.MemoryNodes(n, []int{3, 4}); !reflect.DeepEqual(got, []int{0, 1}) {
		t.Errorf("cores 3,4: %v", got)
	}
	if got := place.MemoryNodes(n, nil); got != nil {
		t.Errorf("no cores: %v", got)
	}
}

func TestPin(t *testing.T) {
	n := domain.Node{GPUs: 4, CPUs: 8, NUMA: []domain.NUMANode{
		{ID: 0, GPUs: []int{0, 1}, CPUs: []int{0, 1, 2, 3}},
		{ID: 1, GPUs: []int{2, 3}, CPUs: []int{4, 5, 6, 7}},
	}}
	for _, tc := range []struct {
		r          domain.Rank
		closest    bool
		cpus, mems []int
	}{
		{domain.Rank{GPUs: []int{2}, CPUs: []int{5}}, true, []int{5}, []int{1}},
		{domain.Rank{GPUs: []int{2}, CPUs: []int{5}}, false, []int{5}, []int{1}},
		{domain.Rank{GPUs: []int{2, 3}}, true, []int{4, 5, 6, 7}, []int{1}},
		{domain.Rank{GPUs: []int{2, 3}}, false, nil, nil},
		{domain.Rank{GPUs: []int{1, 2}}, true, nil, nil},
		{domain.Rank{GPUs: []int{9}}, true, nil, nil},
	} {
		cpus, mems := place.Pin(n, tc.r, tc.closest)
		if !reflect.DeepEqual(cpus, tc.cpus) || !reflect.DeepEqual(mems, tc.mems) {
			t.Errorf("%+v closest %v: cores %v memory %v, want %v %v", tc.r, tc.closest, cpus, mems, tc.cpus, tc.mems)
		}
	}
}
