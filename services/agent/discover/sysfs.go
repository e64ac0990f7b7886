package discover

import (
	"bufio"
	"bytes"
	"io"
	"io/fs"
	"path"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/cockroachdb/errors"
)

// Paths inside the sysfs and procfs trees (relative, as fs.FS wants them).
const (
	onlinePath   = "devices/system/cpu/online"
	nodeDir      = "devices/system/node"
	pciDir       = "bus/pci/devices"
	ibDir        = "class/infiniband"
	statusPath   = "self/status"
	maxSysfsFile = 64 << 10 // sysfs attributes are one page; meminfo a few lines
)

var nodeName = regexp.MustCompile(`^node([0-9]{1,4})$`)

// readSmall reads a sysfs file, refusing anything larger than a sysfs file
// can be (a fixture or a bind mount gone wrong).
func readSmall(fsys fs.FS, name string) (string, error) {
	f, err := fsys.Open(name)
	if err != nil {
		return "", err
	}
	defer f.Close()
	// Read no more than the bound and a byte: a FIFO or device where a
	// file should be must not be read into memory whole first.
	b, err := io.ReadAll(io.LimitReader(f, maxSysfsFile+1))
	if err != nil {
		return "", err
	}
	if len(b) > maxSysfsFile {
		return "", errors.Newf("%s: more than a sysfs file holds (%d bytes)", name, maxSysfsFile)
	}
	return string(b), nil
}

// readCPUListFile reads and parses a cpulist file, naming it on error.
func readCPUListFile(fsys fs.FS, name string) ([]int, error) {
	s, err := readSmall(fsys, name)
	if err != nil {
		return nil, errors.Wrapf(err, "reading %s", name)
	}
	cpus, err := ParseCPUList(s)
	return cpus, errors.Wrapf(err, "%s", name)
}

// allowedCPUs reads Cpus_allowed_list from /proc/self/status: the cpuset
// this process (a containerised agent, a taskset) may run on.
func allowedCPUs(proc fs.FS) ([]int, error) {
	s, err := readSmall(proc, statusPath)
	if err != nil {
		return nil, errors.Wrapf(err, "reading %s", statusPath)
	}
	sc := bufio.NewScanner(strings.NewReader(s))
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "Cpus_allowed_list:"); ok {
			cpus, err := ParseCPUList(v)
			return cpus, errors.Wrapf(err, "%s Cpus_allowed_list", statusPath)
		}
	}
	return nil, errors.Newf("%s has no Cpus_allowed_list line", statusPath)
}

// numaNodeIDs lists node directories in sysfs, sorted; nil when the kernel
// has no NUMA support (no devices/system/node).
func numaNodeIDs(sys fs.FS) ([]int, error) {
	ents, err := fs.ReadDir(sys, nodeDir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, errors.Wrapf(err, "listing %s", nodeDir)
	}
	var ids []int
	for _, e := range ents {
		if m := nodeName.FindStringSubmatch(e.Name()); m != nil {
			id, _ := strconv.Atoi(m[1]) // the pattern guarantees digits
			ids = append(ids, id)
		}
	}
	slices.Sort(ids)
	return ids, nil
}

// nodeMemoryMiB reads "Node N MemTotal: K kB" from node*/meminfo.
func nodeMemoryMiB(sys fs.FS, id int) (int64, error) {
	name := path.Join(nodeDir, "node"+strconv.Itoa(id), "meminfo")
	s, err := readSmall(sys, name)
	if err != nil {
		return 0, errors.Wrapf(err, "reading %s", name)
	}
	sc := bufio.NewScanner(strings.NewReader(s))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		// Node 0 MemTotal:       263862128 kB
		if len(f) == 5 && f[0] == "Node" && f[2] == "MemTotal:" {
			kb, err := strconv.ParseInt(f[3], 10, 64)
			if err != nil || kb < 0 || f[4] != "kB" || f[1] != strconv.Itoa(id) {
				return 0, errors.Newf("%s: bad MemTotal line %q", name, truncate(sc.Text()))
			}
			return kb / 1024, nil
		}
	}
	return 0, errors.Newf("%s has no MemTotal line", name)
}

// coreOf maps each usable CPU to the lowest-numbered CPU among its SMT
// siblings: CPUs with the same value share a physical core. ok is false when
// sysfs has no topology for some CPU (then each CPU is its own core).
func coreOf(sys fs.FS, cpus []int) (map[int]int, bool, error) {
	core := make(map[int]int, len(cpus))
	for _, c := range cpus {
		name := path.Join("devices/system/cpu", "cpu"+strconv.Itoa(c), "topology/thread_siblings_list")
		sib, err := readCPUListFile(sys, name)
		if errors.Is(err, fs.ErrNotExist) {
			return nil, false, nil
		}
		if err != nil {
			return nil, false, err
		}
		if !slices.Contains(sib, c) {
			return nil, false, errors.Newf("%s does not list cpu%d itself", name, c)
		}
		core[c] = sib[0]
	}
	return core, true, nil
}

// pciNUMANode reads the NUMA node of a PCI device: -1 when the kernel does
// not know it (single-node machines, many VMs). ok is false when sysfs has
// no such device (a container with /sys/bus masked).
func pciNUMANode(sys fs.FS, name string) (node int, ok bool, err error) {
	s, err := readSmall(sys, name)
	if errors.Is(err, fs.ErrNotExist) {
		return -1, false, nil
	}
	if err != nil {
		return 0, false, errors.Wrapf(err, "reading %s", name)
	}
	n, err := strconv.Atoi(strings.TrimSpace(s))
	if err != nil || n < -1 || n > 4095 {
		return 0, false, errors.Newf("%s: %q is not a NUMA node", name, truncate(strings.TrimSpace(s)))
	}
	return n, true, nil
}

// readNICs lists /sys/class/infiniband: each device's port 1 state and NUMA
// node. No directory means no RDMA devices, which is not an error.
func readNICs(sys fs.FS) ([]NIC, []string, error) {
	ents, err := fs.ReadDir(sys, ibDir)
	if errors.Is(err, fs.ErrNotExist) {
		return []NIC{}, nil, nil
	}
	if err != nil {
		return nil, nil, errors.Wrapf(err, "listing %s", ibDir)
	}
	nics := []NIC{}
	var notes []string
	for _, e := range ents {
		name := e.Name()
		if strings.HasPrefix(name, ".") {
			continue
		}
		nic := NIC{Name: name, State: "UNKNOWN"}
		numa, ok, err := pciNUMANode(sys, path.Join(ibDir, name, "device/numa_node"))
		if err != nil {
			return nil, nil, err
		}
		if !ok {
			notes = append(notes, "NIC "+name+": NUMA node unknown (no device/numa_node)")
		}
		nic.NUMANode = numa
		state, err := portState(sys, path.Join(ibDir, name, "ports/1/state"))
		if err != nil {
			return nil, nil, err
		}
		if state != "" {
			nic.State = state
		} else {
			notes = append(notes, "NIC "+name+": no port 1 state")
		}
		nics = append(nics, nic)
	}
	slices.SortFunc(nics, func(a, b NIC) int { return naturalCompare(a.Name, b.Name) })
	return nics, notes, nil
}

// naturalCompare orders mlx5_2 before mlx5_10, as people and NCCL_IB_HCA
// lists expect.
func naturalCompare(a, b string) int {
	pa, na := splitNumber(a)
	pb, nb := splitNumber(b)
	if c := strings.Compare(pa, pb); c != 0 || na == nb {
		if c == 0 {
			return strings.Compare(a, b)
		}
		return c
	}
	if na < nb {
		return -1
	}
	return 1
}

// splitNumber splits "mlx5_10" into "mlx5_" and 10 (-1 without a number).
func splitNumber(s string) (string, int) {
	i := len(s)
	for i > 0 && s[i-1] >= '0' && s[i-1] <= '9' {
		i--
	}
	n, err := strconv.Atoi(s[i:])
	if err != nil || len(s)-i > 6 {
		return s, -1
	}
	return s[:i], n
}

// portState parses "4: ACTIVE" into "ACTIVE"; "" when the file is missing.
func portState(sys fs.FS, name string) (string, error) {
	s, err := readSmall(sys, name)
	if errors.Is(err, fs.ErrNotExist) {
		return "", nil
	}
	if err != nil {
		return "", errors.Wrapf(err, "reading %s", name)
	}
	num, state, ok := strings.Cut(strings.TrimSpace(s), ": ")
	if _, err := strconv.Atoi(num); !ok || err != nil || !validStateName(state) {
		return "", errors.Newf("%s: %q is not a port state like \"4: ACTIVE\"", name, truncate(strings.TrimSpace(s)))
	}
	return state, nil
}

func validStateName(s string) bool {
	return s != "" && len(s) <= 32 && strings.Trim(s, "ABCDEFGHIJKLMNOPQRSTUVWXYZ_") == ""
}

// trimmed reports whether b is only whitespace; used for empty tool output.
func trimmed(b []byte) bool { return len(bytes.TrimSpace(b)) == 0 }
