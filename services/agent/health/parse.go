package health

import (
	"bytes"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/lockstep-dev/lockstep/services/agent/discover"
)

// Identity columns come first in every poll; HealthFields after them.
var identityFields = []string{"index", "uuid", "pci.bus_id"}

// HealthFields are the --query-gpu columns judged by Judge, in query order.
var HealthFields = []string{
	fieldECC,
	fieldRetiredPending,
	fieldRemapPending,
	fieldRemapFailure,
}

const (
	fieldECC            = "ecc.errors.uncorrected.volatile.total"
	fieldRetiredPending = "retired_pages.pending"
	fieldRemapPending   = "remapped_rows.pending"
	fieldRemapFailure   = "remapped_rows.failure"
)

// Bounds on what one poll may make us hold; nvidia-smi prints one short line
// per GPU, so anything near these is broken or hostile.
const (
	maxOutput = 1 << 20 // bytes of nvidia-smi output read
	maxLine   = 4 << 10 // bytes in one line
	maxNotes  = 16      // notes kept per parse
	maxValue  = 64      // characters of a value quoted in a reason or note
	maxReason = 200     // characters of free text (a tool's message) in a reason
	maxGPUs   = 1024    // GPU index bound, as in discovery
)

// QueryArgs is the nvidia-smi command line for a poll asking for the
// identity columns and then fields.
func QueryArgs(fields []string) []string {
	all := append(append([]string{}, identityFields...), fields...)
	return []string{"--query-gpu=" + strings.Join(all, ","), "--format=csv,noheader,nounits"}
}

// Row is one GPU's line of a poll.
type Row struct {
	Index int
	UUID  string
	// PCIBusID is in sysfs form, as discover.GPU.PCIBusID: "0000:18:00.0".
	PCIBusID string
	// Values holds each health field's value as printed (trimmed, with
	// control characters replaced, at most maxValue characters).
	Values map[string]string
}

// Lost is a GPU nvidia-smi names but cannot reach: "Unable to determine the
// device handle for GPU 0000:2A:00.0: GPU is lost. Reboot the system to
// recover this GPU".
type Lost struct {
	PCIBusID string // sysfs form
	Why      string // nvidia-smi's words after the bus id
}

// Poll is what one nvidia-smi --query-gpu run printed.
type Poll struct {
	Rows []Row
	Lost []Lost
	// InvalidField is set when nvidia-smi rejected a field of the query:
	// `Field "remapped_rows.pending" is not a valid field to query.`
	InvalidField string
	// Other is the first line that was neither a row nor a lost GPU: what
	// nvidia-smi says when it cannot work at all ("NVIDIA-SMI has failed
	// because it couldn't communicate with the NVIDIA driver. …").
	Other string
	// Notes describe lines that were neither rows nor lost GPUs.
	Notes []string
}

var (
	// "Unable to determine the device handle for GPU 0000:02:00.0: …" (older
	// drivers), "…for GPU0000:65:00.0: Unknown Error" (newer), and "Unable to
	// detect …" as some Windows builds print it.
	lostLine = regexp.MustCompile(`^Unable to (?:determine|detect) the device handle for (?:GPU)?\s*([0-9A-Fa-f]{1,8}:[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2}\.[0-7]):\s*(.*)$`)
	// `Field "cuda_version" is not a valid field to query.`
	invalidField = regexp.MustCompile(`^Field "([a-z0-9_.]{1,64})" is not a valid field to query`)
)

// ParseHealth reads the output of nvidia-smi run with QueryArgs(fields).
// It never fails: what it cannot read becomes a note, and a GPU without a
// readable row is judged by its absence.
func ParseHealth(out []byte, fields []string) Poll {
	var p Poll
	if len(out) > maxOutput {
		p.note(fmt.Sprintf("nvidia-smi printed %d bytes; only the first %d were read", len(out), maxOutput))
		out = out[:maxOutput]
	}
	want := len(identityFields) + len(fields)
	for n, raw := range bytes.Split(out, []byte("\n")) {
		line := strings.TrimSpace(string(bytes.TrimSuffix(raw, []byte("\r"))))
		switch {
		case line == "":
			continue
		case len(raw) > maxLine:
			p.note(fmt.Sprintf("line %d: %d bytes, too long for nvidia-smi; ignored", n+1, len(raw)))
			continue
		}
		if m := lostLine.FindStringSubmatch(line); m != nil {
			if bus, ok := normalizeBusID(m[1]); ok {
				p.Lost = append(p.Lost, Lost{PCIBusID: bus, Why: cleanN(m[2], maxReason)})
				continue
			}
		}
		if m := invalidField.FindStringSubmatch(line); m != nil {
			p.InvalidField = m[1]
			continue
		}
		cells := strings.Split(line, ",")
		if len(cells) != want && p.Other == "" {
			p.Other = cleanN(line, maxReason)
		}
		if len(cells) != want {
			p.note(fmt.Sprintf("line %d: %q is not a GPU row of %d fields", n+1, clean(line), want))
			continue
		}
		row, why := parseRow(cells, fields)
		if why != "" {
			p.note(fmt.Sprintf("line %d: %s", n+1, why))
			continue
		}
		p.Rows = append(p.Rows, row)
	}
	return p
}

func parseRow(cells, fields []string) (Row, string) {
	for i := range cells {
		cells[i] = strings.TrimSpace(cells[i])
	}
	var r Row
	idx, err := strconv.Atoi(cells[0])
	if err != nil || idx < 0 || idx >= maxGPUs {
		return r, fmt.Sprintf("index %q is not a GPU index", clean(cells[0]))
	}
	if !validUUID(cells[1]) {
		return r, fmt.Sprintf("uuid %q is not a GPU UUID (GPU-…)", clean(cells[1]))
	}
	bus, ok := normalizeBusID(cells[2])
	if !ok {
		return r, fmt.Sprintf("pci.bus_id %q is not a PCI bus id", clean(cells[2]))
	}
	r = Row{Index: idx, UUID: cells[1], PCIBusID: bus, Values: make(map[string]string, len(fields))}
	for i, f := range fields {
		r.Values[f] = clean(cells[len(identityFields)+i])
	}
	return r, ""
}

func (p *Poll) note(s string) {
	switch {
	case len(p.Notes) < maxNotes:
		p.Notes = append(p.Notes, s)
	case len(p.Notes) == maxNotes:
		p.Notes = append(p.Notes, "more unreadable nvidia-smi lines were ignored")
	}
}

func validUUID(s string) bool {
	rest, ok := strings.CutPrefix(s, "GPU-")
	return ok && len(rest) >= 8 && len(rest) <= 64 && strings.Trim(rest, "0123456789abcdefABCDEF-") == ""
}

// normalizeBusID is discover.NormalizeBusID as a yes/no: rows and lost
// lines match discovered GPUs whatever the domain width or case.
func normalizeBusID(s string) (string, bool) {
	bus, err := discover.NormalizeBusID(s)
	return bus, err == nil
}

// clean makes a value from a tool safe to quote: control characters become
// '?', and it is cut to maxValue characters.
func clean(s string) string { return cleanN(s, maxValue) }

// cleanN is clean for longer text, cut to n characters.
func cleanN(s string, n int) string {
	s = strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) {
			return '?'
		}
		return r
	}, strings.TrimSpace(s))
	if r := []rune(s); len(r) > n {
		return string(r[:n]) + "…"
	}
	return s
}
