package discover

import (
	"strconv"
	"strings"

	"github.com/cockroachdb/errors"
)

// LinkKind is how two GPUs reach each other, as `nvidia-smi topo -m` names
// it, from closest to farthest.
type LinkKind string

const (
	LinkSelf   LinkKind = "X"    // the same GPU
	LinkNVLink LinkKind = "NV"   // a bonded set of NVLinks (Link.NVLinks of them)
	LinkPIX    LinkKind = "PIX"  // at most one PCIe bridge
	LinkPXB    LinkKind = "PXB"  // several PCIe bridges, no host bridge
	LinkPHB    LinkKind = "PHB"  // through a PCIe host bridge (the CPU)
	LinkNode   LinkKind = "NODE" // between host bridges within a NUMA node
	LinkSys    LinkKind = "SYS"  // across NUMA nodes (QPI/UPI, Infinity Fabric)
)

// linkRank orders kinds from closest (0) to farthest.
var linkRank = map[LinkKind]int{LinkSelf: 0, LinkNVLink: 1, LinkPIX: 2, LinkPXB: 3, LinkPHB: 4, LinkNode: 5, LinkSys: 6}

// Link is one cell of the GPU link matrix.
type Link struct {
	Kind    LinkKind
	NVLinks int // number of bonded NVLinks when Kind is LinkNVLink
}

// Closer reports whether l is a better connection than o: a closer kind,
// or more NVLinks.
func (l Link) Closer(o Link) bool {
	if l.Kind != o.Kind {
		return linkRank[l.Kind] < linkRank[o.Kind]
	}
	return l.NVLinks > o.NVLinks
}

// String is the cell as nvidia-smi prints it: "NV18", "PIX", "X".
func (l Link) String() string {
	if l.Kind == LinkNVLink {
		return "NV" + strconv.Itoa(l.NVLinks)
	}
	return string(l.Kind)
}

// MarshalText makes the JSON matrix read like nvidia-smi's.
func (l Link) MarshalText() ([]byte, error) { return []byte(l.String()), nil }

// UnmarshalText accepts what MarshalText writes.
func (l *Link) UnmarshalText(b []byte) error {
	v, err := ParseLink(string(b))
	*l = v
	return err
}

// ParseLink parses one topo -m cell. SOC is the name drivers before 384 used
// for SYS.
func ParseLink(s string) (Link, error) {
	switch k := LinkKind(s); k {
	case LinkSelf, LinkPIX, LinkPXB, LinkPHB, LinkNode, LinkSys:
		return Link{Kind: k}, nil
	case "SOC":
		return Link{Kind: LinkSys}, nil
	}
	if n, ok := strings.CutPrefix(s, "NV"); ok {
		if c, err := strconv.Atoi(n); err == nil && c > 0 && c < 1000 && strconv.Itoa(c) == n {
			return Link{Kind: LinkNVLink, NVLinks: c}, nil
		}
	}
	return Link{}, errors.Newf("unknown link %q (want X, NV#, PIX, PXB, PHB, NODE or SYS)", truncate(s))
}

// LinkMatrix is the GPU-to-GPU part of `nvidia-smi topo -m`.
type LinkMatrix [][]Link

// Between is how GPU a reaches GPU b (matrix positions, as in Inventory.GPUs).
func (m LinkMatrix) Between(a, b int) Link { return m[a][b] }
