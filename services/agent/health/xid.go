package health

import (
	"bytes"
	"context"
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// KernelLog returns the kernel log text written since its previous call
// (from /dev/kmsg or `journalctl -k`); the Checker reads Xid lines from it.
type KernelLog func(ctx context.Context) ([]byte, error)

// HardwareXIDs are the Xids that withdraw a GPU, with what each means. They
// follow NVIDIA's Xid catalog: errors of the GPU or its memory that need a
// reset, a reboot or service, not errors an application caused (13, 31, 43
// and the like, which the Checker ignores).
var HardwareXIDs = map[int]string{
	48:  "double-bit ECC error",
	63:  "memory page retirement or row remapping pending, reset to activate",
	64:  "memory page retirement or row remapping failed",
	74:  "NVLink error",
	79:  "GPU has fallen off the bus",
	92:  "high single-bit ECC error rate",
	94:  "contained ECC error",
	95:  "uncontained ECC error",
	119: "GSP RPC timeout",
	120: "GSP error",
	140: "unrecovered ECC error",
}

// XID is one Xid line of the kernel log.
type XID struct {
	// Device is the GPU's PCI address without the function, as the driver
	// prints it: "0000:2b:00". It prefixes discover.GPU.PCIBusID.
	Device string
	Code   int
	Text   string // the rest of the line, sanitised
}

// driverLine anchors a driver message at the start of its line, after at
// most the prefixes the kernel log's readers add: dmesg's "[…] ", a syslog
// "Mon DD hh:mm:ss [host] kernel: " and its "[ uptime] ". Unanchored, any
// kernel line quoting text a job chose would count: a segfault line names
// the crashing file, and a file named "NVRM: Xid (PCI:…): 79" would take
// a healthy GPU out of service.
const driverLine = `^(?:\[[^\]]*\]\s*)?(?:[A-Z][a-z]{2}\s+\d{1,2}\s+\d{2}:\d{2}:\d{2}\s+(?:\S+\s+)?kernel:\s*(?:\[[\s\d.]+\]\s*)?)?NVRM: `

var (
	// "NVRM: Xid (PCI:0000:2b:00): 79, pid=…, GPU has fallen off the bus."
	// and the older "NVRM: Xid (0000:01:00): 3, …"; some tools print the
	// function too ("PCI:0000:00:01.0").
	xidLine = regexp.MustCompile(driverLine + `Xid \((?:PCI:)?([0-9A-Fa-f]{1,8}:[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2})(?:\.[0-7])?\): (\d{1,5}),?\s*(.*)$`)
	// Drivers also announce a lost GPU without an Xid: "NVRM: GPU
	// 0000:2b:00.0: GPU has fallen off the bus." or "NVRM: GPU at
	// 0000:01:00.0 has fallen off the bus."
	offBusLine = regexp.MustCompile(driverLine + `GPU (?:at )?(?:PCI:)?([0-9A-Fa-f]{1,8}:[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2})(?:\.[0-7])?:? (?:GPU )?has fallen off the bus`)
)

// ParseXIDs finds the Xid lines in kernel log text; a "fallen off the bus"
// line without an Xid counts as Xid 79. Everything else is ignored.
func ParseXIDs(log []byte) []XID {
	if len(log) > maxOutput {
		log = log[len(log)-maxOutput:] // the newest lines matter most
	}
	var out []XID
	for _, raw := range bytes.Split(log, []byte("\n")) {
		if len(raw) > maxLine || !bytes.Contains(raw, []byte("NVRM: ")) {
			continue
		}
		line := string(raw)
		if m := xidLine.FindStringSubmatch(line); m != nil {
			code, err := strconv.Atoi(m[2])
			dev, ok := normalizeDevice(m[1])
			if err == nil && ok {
				out = append(out, XID{Device: dev, Code: code, Text: clean(m[3])})
			}
			continue
		}
		if m := offBusLine.FindStringSubmatch(line); m != nil {
			if dev, ok := normalizeDevice(m[1]); ok {
				out = append(out, XID{Device: dev, Code: 79, Text: "GPU has fallen off the bus"})
			}
		}
	}
	return out
}

// Reason is how an Xid reads in a GPU's reasons; "" when the Xid does not
// withdraw a GPU.
func (x XID) Reason() string {
	what, ok := HardwareXIDs[x.Code]
	if !ok {
		return ""
	}
	return fmt.Sprintf("Xid %d in the kernel log: %s", x.Code, what)
}

// onGPU reports whether the Xid is about the GPU at sysfs bus id busID.
func (x XID) onGPU(busID string) bool {
	dev, _, _ := strings.Cut(busID, ".")
	return dev == x.Device
}

// normalizeDevice writes "0000:2B:00" as the prefix of a sysfs bus id.
func normalizeDevice(s string) (string, bool) {
	bus, ok := normalizeBusID(s + ".0")
	if !ok {
		return "", false
	}
	dev, _, _ := strings.Cut(bus, ".")
	return dev, true
}
