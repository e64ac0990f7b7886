package containers

import (
	"bufio"
	"bytes"
	"os"
	"strconv"
	"strings"

	"github.com/cockroachdb/errors"
)

// MemoryShare is a rank container's memory limit: the host's memory in
// proportion to the rank's GPUs, as Slurm's DefMemPerGPU gives it, so
// that one gang's data loaders cannot push another gang's ranks on the
// same node into the OOM killer. 0 (no limit) for a rank without GPUs or
// when the host's memory is unknown.
func MemoryShare(hostBytes int64, rankGPUs, nodeGPUs int) int64 {
	if hostBytes <= 0 || rankGPUs <= 0 || nodeGPUs <= 0 || rankGPUs > nodeGPUs {
		return 0
	}
	// Divide first (hostBytes × GPUs could overflow), and round down to
	// whole MiB: the kernel keeps the limit in pages, and a limit the
	// container reads back as set is easier to check and to explain.
	const mib = 1 << 20
	return hostBytes / int64(nodeGPUs) * int64(rankGPUs) / mib * mib
}

// HostMemory reads MemTotal from a meminfo file (/proc/meminfo).
func HostMemory(path string) (int64, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, errors.Wrap(err, "read the host's memory size")
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		rest, ok := strings.CutPrefix(sc.Text(), "MemTotal:")
		if !ok {
			continue
		}
		f := strings.Fields(rest)
		if len(f) != 2 || f[1] != "kB" {
			return 0, errors.Newf("%s: MemTotal %q is not \"N kB\"", path, strings.TrimSpace(rest))
		}
		kb, err := strconv.ParseInt(f[0], 10, 64)
		if err != nil || kb <= 0 || kb > 1<<40 {
			return 0, errors.Newf("%s: MemTotal %q is not a size in kB", path, f[0])
		}
		return kb << 10, nil
	}
	return 0, errors.Newf("%s has no MemTotal line", path)
}
