package main

import (
	"testing"

	"github.com/lockstep-dev/lockstep/deploy/devcluster"
	"github.com/lockstep-dev/lockstep/shared/contract/domain"
	"github.com/lockstep-dev/lockstep/shared/contract/jobspec"
)

func TestHardwareCell(t *testing.T) {
	dev := devcluster.SimulatedNodes(1, 8, 1)[0]
	for _, tc := range []struct {
		n    domain.Node
		want string
	}{
		{dev, "SIMULATED NVIDIA H100 80GB HBM3 81559MiB, 224 CPUs, 2 NUMA, 8 NICs"},
		{domain.Node{GPUs: 8, Simulated: true}, "SIMULATED"},
		{domain.Node{CPUs: 4, NUMA: []domain.NUMANode{{CPUs: []int{0, 1, 2, 3}}}}, "no GPUs, 4 CPUs, 1 NUMA"},
		{domain.Node{GPUs: 1, GPUModel: "evil\tmodel\x1b[2J", GPUMemoryMiB: 1}, `evil\tmodel\x1b[2J 1MiB`},
	} {
		if got := hardware(tc.n); got != tc.want {
			t.Errorf("%q, want %q", got, tc.want)
		}
	}
}

func TestGangHardwareLine(t *testing.T) {
	g := jobspec.Gang{GPUType: "H100", MinGPUMemoryMiB: 80000, CPUsPerTask: 12, GPUBind: "closest"}
	if got, want := gangHardware(g), "H100 GPUs of ≥ 80000 MiB, 12 cores per rank, closest binding (GPUs, cores, memory and NIC on one NUMA node)"; got != want {
		t.Errorf("%q, want %q", got, want)
	}
	if got := gangHardware(jobspec.Gang{MinGPUMemoryMiB: 1}); got != "GPUs of ≥ 1 MiB" {
		t.Errorf("%q", got)
	}
}
