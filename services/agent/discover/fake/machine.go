package fake

import (
	"crypto/sha256"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"testing/fstest"

	"github.com/cockroachdb/errors"

	"github.com/lockstep-dev/lockstep/services/agent/discover"
)

// Machine is one simulated node: its sysfs and procfs trees, in memory, and
// an nvidia-smi that answers from the same shape. SMI and SetFault may be
// called from several goroutines.
type Machine struct {
	host  string
	shape Shape
	// The trees are fstest.MapFS: an fs.FS over a map, which is all
	// discovery needs and keeps many dev nodes off the disk. (The package
	// imports no testing machinery with it.)
	sys, proc fstest.MapFS
	gpus      []gpu
	nics      []nic

	mu     sync.Mutex
	faults map[int]Fault
}

type gpu struct {
	index, numa int
	uuid        string
	bus         pciAddr
}

type nic struct {
	name string
	numa int
	// gpu is the index of the GPU behind the same PCIe switch, or -1.
	gpu int
}

// New builds the machine called host with shape s. host only seeds the
// GPUs' UUIDs, so that many simulated nodes do not share them.
func New(host string, s Shape) (*Machine, error) {
	if err := s.Validate(); err != nil {
		return nil, errors.Wrapf(err, "simulated machine %s", errors.Safe(host))
	}
	m := &Machine{host: host, shape: s, faults: map[int]Fault{}}
	m.layOut()
	m.sys = m.sysfs()
	m.proc = m.procfs()
	return m, nil
}

// layOut numbers GPUs and NICs: node by node, GPU k and NIC k of a node on
// one PCIe switch, GPUs spread over the PCI bus numbers as on real boards.
func (m *Machine) layOut() {
	s := m.shape
	stride := min(0x20, (0xff-0x18)/max(1, s.GPUs()))
	for n := range s.NUMANodes {
		for range s.GPUsPerNUMA {
			i := len(m.gpus)
			m.gpus = append(m.gpus, gpu{index: i, numa: n, uuid: m.uuid(i), bus: pciAddr{bus: 0x18 + i*stride}})
		}
		for k := range s.NICsPerNUMA {
			g := -1
			if k < s.GPUsPerNUMA {
				g = n*s.GPUsPerNUMA + k
			}
			m.nics = append(m.nics, nic{name: fmt.Sprintf("mlx5_%d", len(m.nics)), numa: n, gpu: g})
		}
	}
}

// uuid derives GPU i's UUID from the host name: stable across restarts of
// `lockstep dev`, distinct between its nodes.
func (m *Machine) uuid(i int) string {
	h := sha256.Sum256(fmt.Appendf(nil, "%s/gpu%d", m.host, i))
	return fmt.Sprintf("GPU-%x-%x-%x-%x-%x", h[0:4], h[4:6], h[6:8], h[8:10], h[10:16])
}

// Host is the name the machine was built with.
func (m *Machine) Host() string { return m.host }

// Shape is the machine's hardware.
func (m *Machine) Shape() Shape { return m.shape }

// Sys is the machine's sysfs tree (what /sys is on a real node).
func (m *Machine) Sys() fs.FS { return m.sys }

// Proc is the machine's procfs tree; self/status holds the agent's cpuset.
func (m *Machine) Proc() fs.FS { return m.proc }

// Sources is what discover.Discover reads for this machine. A machine
// without GPUs has no nvidia-smi, as a CPU node has none.
func (m *Machine) Sources() discover.Sources {
	src := discover.Sources{Sys: m.sys, Proc: m.proc}
	if len(m.gpus) == 0 {
		src.NoSMI = "no GPUs: simulated machine " + m.host + " has no nvidia-smi"
		return src
	}
	src.SMI = m.SMI
	return src
}

// WriteDir writes the trees under dir, as dir/sys and dir/proc, for
// `lockstep agent --sysfs-root dir/sys`.
func (m *Machine) WriteDir(dir string) error {
	for sub, tree := range map[string]fstest.MapFS{"sys": m.sys, "proc": m.proc} {
		for name, f := range tree {
			path := filepath.Join(dir, sub, filepath.FromSlash(name))
			if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
				return errors.Wrapf(err, "writing simulated %s", sub)
			}
			if err := os.WriteFile(path, f.Data, 0o644); err != nil {
				return errors.Wrapf(err, "writing simulated %s", sub)
			}
		}
	}
	return nil
}
