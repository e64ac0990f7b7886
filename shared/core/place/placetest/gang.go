package placetest

import (
	"time"

	"github.com/lockstep-dev/lockstep/shared/core/place"
)

// GangBuilder builds a place.Request.
type GangBuilder struct {
	r place.Request
}

// MakeGang starts a gang of nodes × gpus, one rank per node.
func MakeGang(nodes, gpus int) *GangBuilder {
	return &GangBuilder{r: place.Request{JobID: "gang", Nodes: nodes, GPUsPerNode: gpus, TasksPerNode: 1}}
}

// ID sets the job ID.
func (b *GangBuilder) ID(id string) *GangBuilder { b.r.JobID = id; return b }

// Tasks sets ranks per node.
func (b *GangBuilder) Tasks(n int) *GangBuilder { b.r.TasksPerNode = n; return b }

// CPUs sets cores per rank.
func (b *GangBuilder) CPUs(n int) *GangBuilder { b.r.CPUsPerTask = n; return b }

// Container marks the gang as a container job (its ranks run from an
// image).
func (b *GangBuilder) Container() *GangBuilder { b.r.Container = true; return b }

// GPUType asks for a GPU model and at least memoryMiB per GPU.
func (b *GangBuilder) GPUType(model string, memoryMiB int64) *GangBuilder {
	b.r.GPUType, b.r.MinGPUMemoryMiB = model, memoryMiB
	return b
}

// Closest asks for closest GPU/CPU binding.
func (b *GangBuilder) Closest() *GangBuilder { b.r.GPUBind = place.BindClosest; return b }

// MaxSwitches sets Slurm's --switches=n@wait.
func (b *GangBuilder) MaxSwitches(n int, wait time.Duration) *GangBuilder {
	b.r.Topology.MaxSwitches, b.r.Topology.WaitForSwitches = n, wait
	return b
}

// Required sets a hard level.
func (b *GangBuilder) Required(l place.Level) *GangBuilder { b.r.Topology.Required = l; return b }

// Preferred sets a soft level with its wait.
func (b *GangBuilder) Preferred(l place.Level, wait time.Duration) *GangBuilder {
	b.r.Topology.Preferred, b.r.Topology.PreferredWait = l, wait
	return b
}

// WaitSince sets when the gang's bounded topology wait started.
func (b *GangBuilder) WaitSince(t time.Time) *GangBuilder { b.r.WaitSince = t; return b }

// Obj returns the request.
func (b *GangBuilder) Obj() place.Request { return b.r }
