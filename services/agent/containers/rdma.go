package containers

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// RDMADevices returns the device files a rank needs to use these RDMA
// NICs (their names as discovery lists them: "mlx5_0"), as paths on the
// host: each NIC's verbs device (/dev/infiniband/uverbsN, found through
// /sys/class/infiniband/<nic>/device/infiniband_verbs/), then the RDMA
// connection manager /dev/infiniband/rdma_cm. Only files that exist under
// root ("/" on a node; a test's tree otherwise) are returned, so a node
// whose NICs were simulated, or have no verbs driver, passes none. A NIC
// name that is not a plain file name is skipped: it comes from the node's
// own discovery, but never reaches a path outside /sys/class/infiniband.
func RDMADevices(root string, nics []string) []string {
	var out []string
	for _, nic := range nics {
		if nic == "" || nic == "." || nic == ".." || strings.ContainsRune(nic, '/') {
			continue
		}
		ents, err := os.ReadDir(filepath.Join(root, "sys/class/infiniband", nic, "device/infiniband_verbs"))
		if err != nil {
			continue
		}
		for _, e := range ents {
			dev := "/dev/infiniband/" + e.Name()
			if strings.HasPrefix(e.Name(), "uverbs") && exists(filepath.Join(root, dev)) && !slices.Contains(out, dev) {
				out = append(out, dev)
			}
		}
	}
	if len(out) > 0 && exists(filepath.Join(root, "dev/infiniband/rdma_cm")) {
		out = append(out, "/dev/infiniband/rdma_cm")
	}
	return out
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}
