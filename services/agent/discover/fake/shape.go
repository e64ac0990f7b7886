package fake

import (
	"strings"

	"github.com/cockroachdb/errors"

	"github.com/lockstep-dev/lockstep/services/agent/discover"
)

// ErrInvalidShape marks a Shape that no machine has.
var ErrInvalidShape = errors.New("invalid machine shape")

// Shape is the hardware of a simulated machine.
type Shape struct {
	Sockets        int
	CoresPerSocket int
	ThreadsPerCore int
	// NUMANodes split the cores evenly, in core order (sub-NUMA clustering
	// gives more than one per socket).
	NUMANodes        int
	MemoryMiBPerNUMA int64
	// GPUsPerNUMA and NICsPerNUMA sit on each NUMA node; GPU k and NIC k of
	// a node share a PCIe switch.
	GPUsPerNUMA  int
	NICsPerNUMA  int
	GPUName      string
	GPUMemoryMiB int64
	// NVLinks is the number of bonded NVLinks between every pair of GPUs
	// (18 through an H100 NVSwitch); 0 for GPUs on PCIe only, which reach
	// each other through the host bridges (NODE) or across sockets (SYS).
	NVLinks int
	// Cpuset is the agent's Cpus_allowed_list in cpulist form ("" for every
	// CPU): a containerised agent sees fewer CPUs.
	Cpuset string
}

// DGXH100 is an NVIDIA DGX H100: 2 × 56-core Xeon with SMT (224 CPUs), two
// NUMA nodes, eight H100 80GB HBM3 on NVSwitch and eight ConnectX-7
// compute NICs, four of each per NUMA node. The real machine's storage NICs
// (four more ports) are left out; see ../testdata/README.md.
func DGXH100() Shape {
	return Shape{
		Sockets:          2,
		CoresPerSocket:   56,
		ThreadsPerCore:   2,
		NUMANodes:        2,
		MemoryMiBPerNUMA: 1031701, // MemTotal of a 2 TB DGX's node, as in the fixture
		GPUsPerNUMA:      4,
		NICsPerNUMA:      4,
		GPUName:          "NVIDIA H100 80GB HBM3",
		GPUMemoryMiB:     81559,
		NVLinks:          18,
	}
}

// Bounds keep a shape within what discovery accepts and what fits the PCI
// numbering below.
const (
	maxCPUs  = 8192 // Linux's NR_CPUS ceiling
	maxNUMA  = 64
	maxGPUs  = 64
	maxNICs  = 256
	maxLinks = 999
)

// Validate reports the first thing no machine could have.
func (s Shape) Validate() error {
	bad := func(format string, args ...any) error {
		return errors.Mark(errors.Newf(format, args...), ErrInvalidShape)
	}
	cores := s.Sockets * s.CoresPerSocket
	switch {
	case s.Sockets < 1 || s.Sockets > 64:
		return bad("%d sockets", s.Sockets)
	case s.CoresPerSocket < 1 || s.CoresPerSocket > 1024:
		return bad("%d cores per socket", s.CoresPerSocket)
	case s.ThreadsPerCore < 1 || s.ThreadsPerCore > 8:
		return bad("%d threads per core", s.ThreadsPerCore)
	case cores*s.ThreadsPerCore > maxCPUs:
		return bad("%d CPUs, more than Linux supports (%d)", cores*s.ThreadsPerCore, maxCPUs)
	case s.NUMANodes < 1 || s.NUMANodes > maxNUMA:
		return bad("%d NUMA nodes", s.NUMANodes)
	case cores%s.NUMANodes != 0:
		return bad("%d cores do not split evenly over %d NUMA nodes", cores, s.NUMANodes)
	case s.MemoryMiBPerNUMA < 1:
		return bad("%d MiB of memory per NUMA node", s.MemoryMiBPerNUMA)
	case s.GPUsPerNUMA < 0 || s.GPUsPerNUMA*s.NUMANodes > maxGPUs:
		return bad("%d GPUs per NUMA node (at most %d GPUs in all)", s.GPUsPerNUMA, maxGPUs)
	case s.NICsPerNUMA < 0 || s.NICsPerNUMA*s.NUMANodes > maxNICs:
		return bad("%d NICs per NUMA node (at most %d NICs in all)", s.NICsPerNUMA, maxNICs)
	case s.NVLinks < 0 || s.NVLinks > maxLinks:
		return bad("%d NVLinks", s.NVLinks)
	}
	if s.GPUsPerNUMA > 0 {
		// Discovery reads the name from CSV: no commas, no control bytes.
		if s.GPUName == "" || len(s.GPUName) > 96 || strings.ContainsFunc(s.GPUName, func(r rune) bool { return r < 0x20 || r == 0x7f || r == ',' }) {
			return bad("GPU name %q", s.GPUName)
		}
		if s.GPUMemoryMiB < 1 || s.GPUMemoryMiB > 1<<24 {
			return bad("%d MiB of GPU memory", s.GPUMemoryMiB)
		}
	}
	if s.Cpuset != "" {
		cpus, err := discover.ParseCPUList(s.Cpuset)
		if err != nil {
			return errors.Mark(errors.Wrap(err, "cpuset"), ErrInvalidShape)
		}
		if len(cpus) == 0 || cpus[len(cpus)-1] >= cores*s.ThreadsPerCore {
			return bad("cpuset %q is not within the %d CPUs", s.Cpuset, cores*s.ThreadsPerCore)
		}
	}
	return nil
}

// CPUs is the number of logical CPUs.
func (s Shape) CPUs() int { return s.Sockets * s.CoresPerSocket * s.ThreadsPerCore }

// GPUs is the number of GPUs.
func (s Shape) GPUs() int { return s.GPUsPerNUMA * s.NUMANodes }

// NICs is the number of RDMA NICs.
func (s Shape) NICs() int { return s.NICsPerNUMA * s.NUMANodes }
