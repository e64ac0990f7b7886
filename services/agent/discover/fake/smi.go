package fake

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/cockroachdb/errors"

	"github.com/lockstep-dev/lockstep/services/agent/discover"
)

// Fault is what is wrong with one simulated GPU; the zero Fault is a
// healthy GPU.
type Fault struct {
	// UncorrectableECC is ecc.errors.uncorrected.volatile.total.
	UncorrectableECC int
	// RemapPending and RemapFailure are remapped_rows.pending / .failure.
	RemapPending, RemapFailure bool
	// Lost makes nvidia-smi unable to reach the GPU, as after Xid 79: it
	// prints "Unable to determine the device handle …" in the GPU's place
	// and exits non-zero.
	Lost bool
}

// SetFault breaks GPU index (or mends it, with the zero Fault).
func (m *Machine) SetFault(index int, f Fault) error {
	if index < 0 || index >= len(m.gpus) {
		return errors.Newf("simulated machine %s has no GPU %d", errors.Safe(m.host), index)
	}
	if f.UncorrectableECC < 0 {
		return errors.Newf("%d uncorrectable ECC errors", f.UncorrectableECC)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if f == (Fault{}) {
		delete(m.faults, index)
	} else {
		m.faults[index] = f
	}
	return nil
}

// column is one --query-gpu field: its value for a GPU and its unit.
type column struct {
	value func(g gpu, f Fault) string
	unit  string
}

// columns are the fields the stub knows: discovery's and the health poll's.
// The values are as a real H100 prints them (see
// ../../health/testdata/README.md): an H100 remaps rows, so it reports no
// retired-page state.
func (m *Machine) columns() map[string]column {
	yesNo := func(b bool) string {
		if b {
			return "Yes"
		}
		return "No"
	}
	return map[string]column{
		"index":                                 {value: func(g gpu, _ Fault) string { return strconv.Itoa(g.index) }},
		"uuid":                                  {value: func(g gpu, _ Fault) string { return g.uuid }},
		"name":                                  {value: func(gpu, Fault) string { return m.shape.GPUName }},
		"memory.total":                          {value: func(gpu, Fault) string { return strconv.FormatInt(m.shape.GPUMemoryMiB, 10) }, unit: "MiB"},
		"pci.bus_id":                            {value: func(g gpu, _ Fault) string { return g.bus.smi() }},
		"ecc.errors.uncorrected.volatile.total": {value: func(_ gpu, f Fault) string { return strconv.Itoa(f.UncorrectableECC) }},
		"retired_pages.pending":                 {value: func(gpu, Fault) string { return "[N/A]" }},
		"remapped_rows.pending":                 {value: func(_ gpu, f Fault) string { return yesNo(f.RemapPending) }},
		"remapped_rows.failure":                 {value: func(_ gpu, f Fault) string { return yesNo(f.RemapFailure) }},
	}
}

// aliases are nvidia-smi's other names for the same fields.
var aliases = map[string]string{"gpu_uuid": "uuid", "gpu_name": "name", "gpu_bus_id": "pci.bus_id"}

// SMI answers like nvidia-smi on this machine (a discover.SMI): the
// --query-gpu fields of discovery and of the health poll in any order with
// --format=csv[,noheader][,nounits], and `topo -m`. Like nvidia-smi it
// returns what it printed together with its error.
func (m *Machine) SMI(_ context.Context, args ...string) ([]byte, error) {
	if len(m.gpus) == 0 {
		return []byte("No devices were found\n"), errors.New("exit status 6")
	}
	m.mu.Lock()
	faults := make(map[int]Fault, len(m.faults))
	for i, f := range m.faults {
		faults[i] = f
	}
	m.mu.Unlock()
	if len(args) == 2 && args[0] == "topo" && args[1] == "-m" {
		return m.topo(faults)
	}
	var query, format string
	for _, a := range args {
		switch {
		case strings.HasPrefix(a, "--query-gpu="):
			query = strings.TrimPrefix(a, "--query-gpu=")
		case strings.HasPrefix(a, "--format="):
			format = strings.TrimPrefix(a, "--format=")
		default:
			return nil, errors.Newf("stub nvidia-smi: unsupported argument %q", a)
		}
	}
	if query == "" || format == "" {
		return nil, errors.Newf("stub nvidia-smi: unsupported arguments %q", args)
	}
	return m.queryGPU(query, format, faults)
}

func (m *Machine) queryGPU(query, format string, faults map[int]Fault) ([]byte, error) {
	opts := map[string]bool{}
	for _, o := range strings.Split(format, ",") {
		opts[o] = true
	}
	if !opts["csv"] {
		return []byte("CSV format is mandatory\n"), errors.New("exit status 2")
	}
	known := m.columns()
	var names []string
	var cols []column
	for _, f := range strings.Split(query, ",") {
		c, ok := known[f]
		if !ok {
			c, ok = known[aliases[f]]
		}
		if !ok {
			return fmt.Appendf(nil, "Field \"%s\" is not a valid field to query.\n\n", f), errors.New("exit status 2")
		}
		names, cols = append(names, f), append(cols, c)
	}
	var b strings.Builder
	if !opts["noheader"] {
		head := make([]string, len(names))
		for i, n := range names {
			head[i] = n
			if cols[i].unit != "" {
				head[i] += " [" + cols[i].unit + "]"
			}
		}
		b.WriteString(strings.Join(head, ", ") + "\n")
	}
	var err error
	for _, g := range m.gpus {
		f := faults[g.index]
		if f.Lost {
			fmt.Fprintf(&b, "Unable to determine the device handle for GPU%s: GPU is lost. Reboot the system to recover this GPU\n", g.bus.smi())
			err = errors.New("exit status 15")
			continue
		}
		cells := make([]string, len(cols))
		for i, c := range cols {
			cells[i] = c.value(g, f)
			if c.unit != "" && !opts["nounits"] {
				cells[i] += " " + c.unit
			}
		}
		b.WriteString(strings.Join(cells, ", ") + "\n")
	}
	return []byte(b.String()), err
}

// topo prints `nvidia-smi topo -m`: the GPU and NIC matrix, each GPU's CPU
// and NUMA affinity, and the legends, in the layout of a real DGX H100's
// (../testdata/dgx-h100/topo-m.txt).
func (m *Machine) topo(faults map[int]Fault) ([]byte, error) {
	for _, g := range m.gpus {
		if faults[g.index].Lost {
			return fmt.Appendf(nil, "Unable to determine the device handle for GPU%s: GPU is lost. Reboot the system to recover this GPU\n", g.bus.smi()), errors.New("exit status 15")
		}
	}
	var b strings.Builder
	var head []string
	for _, g := range m.gpus {
		head = append(head, fmt.Sprintf("GPU%d", g.index))
	}
	for i := range m.nics {
		head = append(head, fmt.Sprintf("NIC%d", i))
	}
	b.WriteString("\t" + strings.Join(head, "\t") + "\tCPU Affinity\tNUMA Affinity\tGPU NUMA ID\n")
	for _, g := range m.gpus {
		var cells []string
		for _, o := range m.gpus {
			cells = append(cells, m.gpuLink(g, o))
		}
		for _, c := range m.nics {
			cells = append(cells, nicLink(g.numa, g.index, c))
		}
		fmt.Fprintf(&b, "GPU%d\t%s\t%s\t%d\t\tN/A\n", g.index, strings.Join(cells, "\t"), discover.FormatCPUList(m.shape.cpusOf(g.numa)), g.numa)
	}
	for i, c := range m.nics {
		var cells []string
		for _, g := range m.gpus {
			cells = append(cells, nicLink(g.numa, g.index, c))
		}
		for j, o := range m.nics {
			switch {
			case i == j:
				cells = append(cells, " X ")
			case o.numa == c.numa:
				cells = append(cells, "NODE")
			default:
				cells = append(cells, "SYS")
			}
		}
		fmt.Fprintf(&b, "NIC%d\t%s\n", i, strings.Join(cells, "\t"))
	}
	b.WriteString(topoLegend)
	if len(m.nics) > 0 {
		b.WriteString("\nNIC Legend:\n\n")
		for i, c := range m.nics {
			fmt.Fprintf(&b, "  NIC%d: %s\n", i, c.name)
		}
	}
	return []byte(b.String()), nil
}

func (m *Machine) gpuLink(a, b gpu) string {
	switch {
	case a.index == b.index:
		return " X "
	case m.shape.NVLinks > 0:
		return fmt.Sprintf("NV%d", m.shape.NVLinks)
	case a.numa == b.numa:
		return "NODE"
	}
	return "SYS"
}

// nicLink is how GPU index on NUMA node numa reaches NIC c: through their
// shared PCIe switch (PXB), within the node (NODE), or across (SYS).
func nicLink(numa, index int, c nic) string {
	switch {
	case c.gpu == index:
		return "PXB"
	case c.numa == numa:
		return "NODE"
	}
	return "SYS"
}

const topoLegend = `
Legend:

  X    = Self
  SYS  = Connection traversing PCIe as well as the SMP interconnect between NUMA nodes (e.g., QPI/UPI)
  NODE = Connection traversing PCIe as well as the interconnect between PCIe Host Bridges within a NUMA node
  PHB  = Connection traversing PCIe as well as a PCIe Host Bridge (typically the CPU)
  PXB  = Connection traversing multiple PCIe bridges (without traversing the PCIe Host Bridge)
  PIX  = Connection traversing at most a single PCIe bridge
  NV#  = Connection traversing a bonded set of # NVLinks
`
