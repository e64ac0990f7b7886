package main

import (
	"fmt"
	"strings"

	"github.com/lockstep-dev/lockstep/shared/contract/domain"
	"github.com/lockstep-dev/lockstep/shared/contract/jobspec"
	"github.com/lockstep-dev/lockstep/shared/core/place"
)

// hardware is `node list`'s HARDWARE cell: what the node registered, as
// its discovery found it — "NVIDIA H100 80GB HBM3 81559MiB, 224 CPUs, 2
// NUMA, 8 NICs" — or SIMULATED for GPUs an agent declared (--gpus N).
func hardware(n domain.Node) string {
	var parts []string
	switch {
	case n.GPUModel != "":
		parts = append(parts, fmt.Sprintf("%s %dMiB", clean(n.GPUModel), n.GPUMemoryMiB))
	case n.GPUs == 0:
		parts = append(parts, "no GPUs")
	case !n.Simulated:
		parts = append(parts, "GPU model unknown")
	}
	if cpus := len(place.NodeCPUs(n)); cpus > 0 {
		parts = append(parts, fmt.Sprintf("%d CPUs", cpus))
	}
	if len(n.NUMA) > 0 {
		parts = append(parts, fmt.Sprintf("%d NUMA", len(n.NUMA)))
	}
	nics := 0
	for _, d := range n.NUMA {
		nics += len(d.NICs)
	}
	if nics > 0 {
		parts = append(parts, fmt.Sprintf("%d NICs", nics))
	}
	out := strings.Join(parts, ", ")
	if n.Simulated {
		out = strings.TrimSpace("SIMULATED " + out)
	}
	return out
}

// gangHardware is `describe`'s Hardware line: what the spec asks of a
// node beyond GPU counts — "H100 GPUs of ≥ 80000 MiB, 12 cores per rank,
// closest binding".
func gangHardware(g jobspec.Gang) string {
	var parts []string
	gpus := "GPUs"
	if g.GPUType != "" {
		gpus = clean(g.GPUType) + " GPUs"
	}
	if g.MinGPUMemoryMiB > 0 {
		gpus += fmt.Sprintf(" of ≥ %d MiB", g.MinGPUMemoryMiB)
	}
	if g.GPUType != "" || g.MinGPUMemoryMiB > 0 {
		parts = append(parts, gpus)
	}
	if g.CPUsPerTask > 0 {
		parts = append(parts, fmt.Sprintf("%d cores per rank", g.CPUsPerTask))
	}
	if g.GPUBind == "closest" {
		parts = append(parts, "closest binding (GPUs, cores, memory and NIC on one NUMA node)")
	}
	return strings.Join(parts, ", ")
}
