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
