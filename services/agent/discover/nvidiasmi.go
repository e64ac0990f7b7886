package discover

import (
	"bytes"
	"context"
	"encoding/csv"
	"fmt"
	"os/exec"
	"strconv"
	"strings"
	"time"

	"github.com/cockroachdb/errors"
)

// SMI runs nvidia-smi with args and returns its standard output. Tests pass
// a function that returns fixture text.
type SMI func(ctx context.Context, args ...string) ([]byte, error)

// gpuQuery is the nvidia-smi query discovery runs; gpuFields names its
// columns in order, for error messages.
var (
	gpuQuery  = []string{"--query-gpu=index,uuid,name,memory.total,pci.bus_id", "--format=csv,noheader,nounits"}
	gpuFields = []string{"index", "uuid", "name", "memory.total", "pci.bus_id"}
	topoQuery = []string{"topo", "-m"}
)

// smiTimeout bounds one nvidia-smi run when the caller set no deadline: a
// wedged driver can make it hang for minutes.
const smiTimeout = 30 * time.Second

// maxSMIOutput bounds what one nvidia-smi run may print: a few KiB for a
// machine's GPUs, far less than this.
const maxSMIOutput = 4 << 20

// CappedBuffer keeps what a command writes up to a limit and takes the
// rest without keeping it, noting that more came: a chatty command can
// neither fill memory nor block on a full pipe, nor fail on a short write.
type CappedBuffer struct {
	buf   bytes.Buffer
	limit int
	over  bool
}

// NewCappedBuffer keeps at most limit bytes.
func NewCappedBuffer(limit int) *CappedBuffer { return &CappedBuffer{limit: limit} }

func (b *CappedBuffer) Write(p []byte) (int, error) {
	n := len(p)
	if room := b.limit - b.buf.Len(); n > room {
		b.over = true
		p = p[:max(room, 0)]
	}
	b.buf.Write(p)
	return n, nil
}

// Bytes is what was kept.
func (b *CappedBuffer) Bytes() []byte { return b.buf.Bytes() }

// Over says whether more came than was kept.
func (b *CappedBuffer) Over() bool { return b.over }

// CommandSMI runs the nvidia-smi binary at path.
func CommandSMI(path string) SMI {
	return func(ctx context.Context, args ...string) ([]byte, error) {
		if _, ok := ctx.Deadline(); !ok {
			var cancel context.CancelFunc
			ctx, cancel = context.WithTimeout(ctx, smiTimeout)
			defer cancel()
		}
		stdout, stderr := NewCappedBuffer(maxSMIOutput), NewCappedBuffer(maxSMIOutput)
		cmd := exec.CommandContext(ctx, path, args...)
		cmd.Stdout, cmd.Stderr = stdout, stderr
		err := cmd.Run()
		out := stdout.Bytes()
		if err != nil {
			// nvidia-smi explains driver trouble on stdout, not stderr.
			msg := strings.TrimSpace(string(stderr.Bytes()) + " " + string(out))
			return nil, errors.Wrapf(err, "%s %s: %s", path, strings.Join(args, " "), truncate(msg))
		}
		if stdout.Over() {
			// Cut, a CSV would parse into too few GPUs: refuse it whole.
			return nil, errors.Newf("%s %s: more than %d bytes of output", path, strings.Join(args, " "), maxSMIOutput)
		}
		return out, nil
	}
}

// FindSMI returns nvidia-smi at path, or found on PATH when path is "". When
// there is none it returns nil and the reason, for Inventory.Notes.
func FindSMI(path string) (SMI, string) {
	if path == "" {
		p, err := exec.LookPath("nvidia-smi")
		if err != nil {
			return nil, "no GPUs: nvidia-smi not found on PATH"
		}
		return CommandSMI(p), ""
	}
	if _, err := exec.LookPath(path); err != nil {
		return nil, fmt.Sprintf("no GPUs: nvidia-smi %s is not an executable file", path)
	}
	return CommandSMI(path), ""
}

// parseGPUCSV parses `nvidia-smi --query-gpu=index,uuid,name,memory.total,
// pci.bus_id --format=csv,noheader,nounits`. NUMA nodes are filled in later
// from sysfs. Indexes must be 0..n-1 (nvidia-smi numbers GPUs so), which lets
// the topo -m matrix be indexed by them.
func parseGPUCSV(out []byte) ([]GPU, []string, error) {
	r := csv.NewReader(bytes.NewReader(out))
	r.FieldsPerRecord = len(gpuFields)
	r.TrimLeadingSpace = true
	recs, err := r.ReadAll()
	if err != nil {
		return nil, nil, errors.Wrap(err, "nvidia-smi --query-gpu output")
	}
	var notes []string
	gpus := make([]GPU, len(recs))
	for i, rec := range recs {
		g, note, err := parseGPURecord(rec)
		if err != nil {
			return nil, nil, errors.Wrapf(err, "nvidia-smi --query-gpu line %d", i+1)
		}
		if g.Index != i {
			return nil, nil, errors.Newf("nvidia-smi --query-gpu line %d: index %d, want %d (indexes run 0..n-1 in order)", i+1, g.Index, i)
		}
		if note != "" {
			notes = append(notes, note)
		}
		gpus[i] = g
	}
	return gpus, notes, nil
}

func parseGPURecord(rec []string) (GPU, string, error) {
	field := func(i int) string { return strings.TrimSpace(rec[i]) }
	bad := func(i int, why string) error {
		return errors.Newf("field %s: %q %s", gpuFields[i], truncate(field(i)), why)
	}
	var g GPU
	var err error
	if g.Index, err = strconv.Atoi(field(0)); err != nil || g.Index < 0 || g.Index > 1023 {
		return g, "", bad(0, "is not a GPU index")
	}
	if g.UUID = field(1); !validUUID(g.UUID) {
		return g, "", bad(1, "is not a GPU UUID (GPU-…)")
	}
	if g.Name = field(2); g.Name == "" || len(g.Name) > 96 || strings.ContainsFunc(g.Name, isControl) {
		return g, "", bad(2, "is not a GPU name")
	}
	var note string
	switch mem := field(3); {
	case mem == "[N/A]": // unified-memory parts (GB10) have no dedicated total
		note = fmt.Sprintf("GPU %d: nvidia-smi reports no memory.total", g.Index)
	default:
		if g.MemoryMiB, err = strconv.ParseInt(mem, 10, 64); err != nil || g.MemoryMiB <= 0 || g.MemoryMiB > 1<<24 {
			return g, "", bad(3, "is not a size in MiB")
		}
	}
	if g.PCIBusID, err = NormalizeBusID(field(4)); err != nil {
		return g, "", bad(4, err.Error())
	}
	return g, note, nil
}

func validUUID(s string) bool {
	rest, ok := strings.CutPrefix(s, "GPU-")
	return ok && len(rest) >= 8 && len(rest) <= 64 && strings.Trim(rest, "0123456789abcdefABCDEF-") == ""
}

func isControl(r rune) bool { return r < 0x20 || r == 0x7f }

// NormalizeBusID turns nvidia-smi's "00000000:18:00.0" (8-digit domain,
// upper case) into the sysfs directory name "0000:18:00.0" (GPU.PCIBusID's
// form). The kernel prints the domain with %04x, so a VMD domain 0x10000
// stays 5 digits.
func NormalizeBusID(s string) (string, error) {
	domain, rest, ok := strings.Cut(s, ":")
	busDev, fn, ok2 := strings.Cut(rest, ".")
	bus, dev, ok3 := strings.Cut(busDev, ":")
	if !ok || !ok2 || !ok3 {
		return "", errors.New("is not a PCI bus id (domain:bus:device.function)")
	}
	d, err1 := strconv.ParseUint(domain, 16, 32)
	b, err2 := strconv.ParseUint(bus, 16, 8)
	v, err3 := strconv.ParseUint(dev, 16, 8)
	f, err4 := strconv.ParseUint(fn, 16, 8)
	if err := errors.CombineErrors(errors.CombineErrors(err1, err2), errors.CombineErrors(err3, err4)); err != nil ||
		len(domain) > 8 || len(bus) != 2 || len(dev) != 2 || len(fn) != 1 || v > 0x1f || f > 7 {
		return "", errors.New("is not a PCI bus id (domain:bus:device.function)")
	}
	return fmt.Sprintf("%04x:%02x:%02x.%x", d, b, v, f), nil
}
