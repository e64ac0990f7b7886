package main

import (
	"fmt"
	"strings"

	"github.com/lockstep-dev/lockstep/shared/contract/domain"
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
