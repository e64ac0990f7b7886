package fake

import (
	"fmt"
	"strings"
	"testing/fstest"

	"github.com/lockstep-dev/lockstep/services/agent/discover"
)

// pciAddr is a PCI function address.
type pciAddr struct{ domain, bus, dev, fn int }

// sysfs is the name the kernel gives the device directory: "0000:18:00.0".
func (a pciAddr) sysfs() string {
	return fmt.Sprintf("%04x:%02x:%02x.%x", a.domain, a.bus, a.dev, a.fn)
}

// smi is how nvidia-smi prints it: "00000000:18:00.0".
func (a pciAddr) smi() string {
	return fmt.Sprintf("%08X:%02X:%02X.%X", a.domain, a.bus, a.dev, a.fn)
}

// cpusOf returns NUMA node n's CPUs. Linux numbers the first thread of
// every core, then the second, so core c's threads are c, c+cores, …
func (s Shape) cpusOf(n int) []int {
	cores := s.Sockets * s.CoresPerSocket
	per := cores / s.NUMANodes
	var cpus []int
	for t := range s.ThreadsPerCore {
		for c := n * per; c < (n+1)*per; c++ {
			cpus = append(cpus, t*cores+c)
		}
	}
	return cpus
}

// siblings returns the CPUs sharing cpu's core, cpu among them.
func (s Shape) siblings(cpu int) []int {
	cores := s.Sockets * s.CoresPerSocket
	sib := make([]int, s.ThreadsPerCore)
	for t := range sib {
		sib[t] = t*cores + cpu%cores
	}
	return sib
}

func (m *Machine) sysfs() fstest.MapFS {
	s := m.shape
	fsys := fstest.MapFS{}
	put := func(name, data string) { fsys[name] = &fstest.MapFile{Data: []byte(data), Mode: 0o444} }

	put("devices/system/cpu/online", discover.FormatCPUList(upTo(s.CPUs()))+"\n")
	for cpu := range s.CPUs() {
		put(fmt.Sprintf("devices/system/cpu/cpu%d/topology/thread_siblings_list", cpu), discover.FormatCPUList(s.siblings(cpu))+"\n")
	}
	for n := range s.NUMANodes {
		dir := fmt.Sprintf("devices/system/node/node%d/", n)
		put(dir+"cpulist", discover.FormatCPUList(s.cpusOf(n))+"\n")
		kb := s.MemoryMiBPerNUMA * 1024
		// The kernel's format (drivers/base/node.c): "Node %d MemTotal: %8lu kB".
		put(dir+"meminfo", fmt.Sprintf("Node %d MemTotal:       %8d kB\nNode %d MemFree:        %8d kB\n", n, kb, n, kb-kb/256))
	}
	for _, g := range m.gpus {
		put("bus/pci/devices/"+g.bus.sysfs()+"/numa_node", fmt.Sprintf("%d\n", g.numa))
	}
	for _, c := range m.nics {
		dir := "class/infiniband/" + c.name + "/"
		put(dir+"device/numa_node", fmt.Sprintf("%d\n", c.numa))
		put(dir+"ports/1/state", "4: ACTIVE\n")
	}
	return fsys
}

// procfs holds self/status with the agent's cpuset, as
// /proc/self/status has it.
func (m *Machine) procfs() fstest.MapFS {
	s := m.shape
	allowed := s.Cpuset
	if allowed == "" {
		allowed = discover.FormatCPUList(upTo(s.CPUs()))
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Name:\tlockstep\nState:\tS (sleeping)\n")
	fmt.Fprintf(&b, "Cpus_allowed_list:\t%s\n", allowed)
	fmt.Fprintf(&b, "Mems_allowed_list:\t%s\n", discover.FormatCPUList(upTo(s.NUMANodes)))
	return fstest.MapFS{"self/status": &fstest.MapFile{Data: []byte(b.String()), Mode: 0o444}}
}

// upTo returns 0, 1, …, n-1.
func upTo(n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = i
	}
	return out
}
