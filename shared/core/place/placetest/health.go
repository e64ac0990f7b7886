package placetest

import (
	"fmt"
	"time"

	"github.com/lockstep-dev/lockstep/shared/contract/domain"
)

// Withdrawn marks GPUs as withdrawn by the agent's health checks
// (domain.Node.Unhealthy): they are not free.
func (b *NodeBuilder) Withdrawn(gpus ...int) *NodeBuilder {
	for _, g := range gpus {
		b.nv.Node.Unhealthy = append(b.nv.Node.Unhealthy, domain.GPUFault{
			GPU: g, Reason: fmt.Sprintf("gpu %d: 2 uncorrectable ECC errors", g),
			Since: time.Date(2026, 12, 3, 6, 0, 0, 0, time.UTC),
		})
	}
	return b
}
