package discover

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path"
	"slices"

	"github.com/cockroachdb/errors"
)

// Sources are where discovery reads from.
type Sources struct {
	// Sys is the sysfs tree (os.DirFS("/sys") on a real node). Required.
	Sys fs.FS
	// Proc is the procfs tree whose self/status gives this process's cpuset.
	// Nil when the cpuset does not describe Sys (a fixture tree): then every
	// online CPU counts as usable.
	Proc fs.FS
	// SMI runs nvidia-smi; nil when there is none, and NoSMI says why.
	SMI   SMI
	NoSMI string
}

// HostSources reads this machine: sysfs at sysRoot, and nvidia-smi at
// smiPath or on PATH. The process's cpuset applies only when sysRoot is the
// real /sys, the only tree it describes.
func HostSources(sysRoot, smiPath string) Sources {
	src := Sources{Sys: os.DirFS(sysRoot)}
	if path.Clean(sysRoot) == "/sys" {
		src.Proc = os.DirFS("/proc")
	}
	src.SMI, src.NoSMI = FindSMI(smiPath)
	return src
}

// Discover reads the node's CPUs, NUMA nodes, GPUs, GPU links and RDMA NICs.
// Missing optional sources become Notes; malformed ones are errors.
func Discover(ctx context.Context, src Sources) (Inventory, error) {
	if src.Sys == nil {
		return Inventory{}, errors.AssertionFailedf("discover: Sources.Sys is nil")
	}
	inv := Inventory{GPUs: []GPU{}, NICs: []NIC{}, Notes: []string{}}
	if err := discoverCPUs(src, &inv); err != nil {
		return Inventory{}, errors.Wrap(err, "discovering CPUs")
	}
	if err := discoverGPUs(ctx, src, &inv); err != nil {
		return Inventory{}, errors.Wrap(err, "discovering GPUs")
	}
	nics, notes, err := readNICs(src.Sys)
	if err != nil {
		return Inventory{}, errors.Wrap(err, "discovering RDMA NICs")
	}
	inv.NICs = nics
	inv.Notes = append(inv.Notes, notes...)
	if len(nics) == 0 {
		inv.Notes = append(inv.Notes, "no RDMA NICs: /sys/class/infiniband is empty or absent")
	}
	return inv, nil
}

// discoverCPUs fills CPUs, ThreadsPerCore and NUMANodes: online CPUs within
// the cpuset, grouped by NUMA node.
func discoverCPUs(src Sources, inv *Inventory) error {
	usable, err := readCPUListFile(src.Sys, onlinePath)
	if err != nil {
		return err
	}
	if src.Proc != nil {
		allowed, err := allowedCPUs(src.Proc)
		if err != nil {
			return err
		}
		if len(allowed) < len(usable) {
			inv.Notes = append(inv.Notes, fmt.Sprintf("cpuset: %d of %d online CPUs usable (Cpus_allowed_list %s)", len(intersect(usable, allowed)), len(usable), FormatCPUList(allowed)))
		}
		usable = intersect(usable, allowed)
	}
	if len(usable) == 0 {
		return errors.Newf("no usable CPUs (online %s, within this process's cpuset)", onlinePath)
	}
	inv.CPUs = len(usable)

	core, ok, err := coreOf(src.Sys, usable)
	if err != nil {
		return err
	}
	if !ok {
		inv.Notes = append(inv.Notes, "SMT siblings unknown (no cpu*/topology/thread_siblings_list): each CPU counted as a core")
	}
	inv.ThreadsPerCore = threadsPerCore(usable, core)

	ids, err := numaNodeIDs(src.Sys)
	if err != nil {
		return err
	}
	if ids == nil {
		inv.Notes = append(inv.Notes, "no NUMA information in sysfs: all CPUs reported on node 0, memory unknown")
		inv.NUMANodes = []NUMANode{{ID: 0, CPUs: usable, Cores: countCores(usable, core)}}
		return nil
	}
	seen := map[int]bool{}
	for _, id := range ids {
		name := path.Join(nodeDir, fmt.Sprintf("node%d", id), "cpulist")
		cpus, err := readCPUListFile(src.Sys, name)
		if err != nil {
			return err
		}
		mine := intersect(cpus, usable)
		for _, c := range mine {
			if seen[c] {
				return errors.Newf("%s: cpu%d is on two NUMA nodes", name, c)
			}
			seen[c] = true
		}
		mem, err := nodeMemoryMiB(src.Sys, id)
		if err != nil {
			return err
		}
		inv.NUMANodes = append(inv.NUMANodes, NUMANode{ID: id, CPUs: mine, Cores: countCores(mine, core), MemoryMiB: mem})
	}
	if len(seen) != len(usable) {
		inv.Notes = append(inv.Notes, fmt.Sprintf("%d usable CPUs are on no NUMA node's cpulist", len(usable)-len(seen)))
	}
	return nil
}

// countCores counts distinct physical cores among cpus; without SMT data
// (core nil) every CPU is a core.
func countCores(cpus []int, core map[int]int) int {
	if core == nil {
		return len(cpus)
	}
	distinct := map[int]bool{}
	for _, c := range cpus {
		distinct[core[c]] = true
	}
	return len(distinct)
}

// threadsPerCore is the widest SMT group among the usable CPUs.
func threadsPerCore(cpus []int, core map[int]int) int {
	width := map[int]int{}
	most := 1
	for _, c := range cpus {
		if core == nil {
			break
		}
		width[core[c]]++
		most = max(most, width[core[c]])
	}
	return most
}

// discoverGPUs fills GPUs (with their NUMA nodes from sysfs) and GPULinks.
func discoverGPUs(ctx context.Context, src Sources, inv *Inventory) error {
	if src.SMI == nil {
		inv.Notes = append(inv.Notes, src.NoSMI)
		return nil
	}
	out, err := src.SMI(ctx, gpuQuery...)
	if err != nil {
		// nvidia-smi is here but cannot talk to the driver: a GPU node that
		// is broken, not a CPU node, so it must not register as one.
		return err
	}
	gpus, notes, err := parseGPUCSV(out)
	if err != nil {
		return err
	}
	inv.Notes = append(inv.Notes, notes...)
	if len(gpus) == 0 {
		inv.Notes = append(inv.Notes, "no GPUs: nvidia-smi lists none")
		return nil
	}
	for i := range gpus {
		numa, ok, err := pciNUMANode(src.Sys, path.Join(pciDir, gpus[i].PCIBusID, "numa_node"))
		if err != nil {
			return errors.Wrapf(err, "GPU %d", gpus[i].Index)
		}
		gpus[i].NUMANode = numa
		switch {
		case (!ok || numa == -1) && len(inv.NUMANodes) == 1:
			// A VM, typically, whose kernel knows no NUMA node for the
			// device: with one node there is no choice to make.
			gpus[i].NUMANode = inv.NUMANodes[0].ID
			inv.Notes = append(inv.Notes, fmt.Sprintf("GPU %d: the kernel reports no NUMA node; on node %d, the only one", gpus[i].Index, inv.NUMANodes[0].ID))
		case !ok:
			inv.Notes = append(inv.Notes, fmt.Sprintf("GPU %d: NUMA node unknown (no %s/%s in sysfs)", gpus[i].Index, pciDir, gpus[i].PCIBusID))
		case numa == -1:
			inv.Notes = append(inv.Notes, fmt.Sprintf("GPU %d: NUMA node unknown (the kernel reports -1)", gpus[i].Index))
		case !slices.ContainsFunc(inv.NUMANodes, func(n NUMANode) bool { return n.ID == numa }):
			return errors.Newf("GPU %d: %s/%s/numa_node is %d, which is not a NUMA node in %s", gpus[i].Index, pciDir, gpus[i].PCIBusID, numa, nodeDir)
		}
	}
	inv.GPUs = gpus
	topo, err := src.SMI(ctx, topoQuery...)
	if err != nil || trimmed(topo) {
		// Links only rank GPUs against each other; the GPUs themselves are
		// known, so a failing topo -m (some vGPU setups) is a note.
		why := "no output"
		if err != nil {
			why = err.Error()
		}
		inv.Notes = append(inv.Notes, "GPU links unknown: nvidia-smi topo -m: "+why)
		return nil
	}
	if inv.GPULinks, err = parseTopo(topo, len(gpus)); err != nil {
		return err
	}
	for i, nics := range parseNearNICs(topo, len(gpus)) {
		inv.GPUs[i].NearNICs = nics
	}
	return nil
}
