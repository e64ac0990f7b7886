package health

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"
)

// hostile is output no nvidia-smi prints; each must yield notes or nothing,
// never a panic, an unbounded reason, or a healthy verdict on a GPU whose
// row it failed to read. A readable row with one unreadable value is a note,
// not a withdrawal: a driver that changes a format must not take a fleet's
// GPUs out of service.
var hostile = map[string]string{
	"garbage":        "\x00\x01\xff\xfe garbage, , ,\n",
	"huge line":      strings.Repeat("0, GPU-a1b2c3d4-0000-4000-8000-000000000000, 00000000:18:00.0, 0, No, No, No", 100) + "\n",
	"many lines":     strings.Repeat("nonsense\n", 100000),
	"control chars":  "0, GPU-a1b2c3d4-0000-4000-8000-000000000000, 00000000:18:00.0, \x1b[31m9\x1b[0m, No, No, No\n",
	"crlf":           "0, GPU-a1b2c3d4-0000-4000-8000-000000000000, 00000000:18:00.0, 0, [N/A], No, No\r\n",
	"bad index":      "-1, GPU-a1b2c3d4-0000-4000-8000-000000000000, 00000000:18:00.0, 0, No, No, No\n",
	"bad uuid":       "0, MIG-a1b2c3d4-0000-4000-8000-000000000000, 00000000:18:00.0, 0, No, No, No\n",
	"bad bus":        "0, GPU-a1b2c3d4-0000-4000-8000-000000000000, 00000000:18:00.9, 0, No, No, No\n",
	"negative count": "0, GPU-a1b2c3d4-0000-4000-8000-000000000000, 00000000:18:00.0, -3, No, No, No\n",
	"huge count":     "0, GPU-a1b2c3d4-0000-4000-8000-000000000000, 00000000:18:00.0, 99999999999999999999999, No, No, No\n",
	"lost garbage":   "Unable to determine the device handle for GPU zz:18:00.0: GPU is lost\n",
	"long lost why":  "Unable to determine the device handle for GPU0000:18:00.0: " + strings.Repeat("\x07why ", 500) + "\n",
	"too big":        strings.Repeat("x", maxOutput+10),
}

func TestHostileOutput(t *testing.T) {
	gpus := dgxGPUs(t)[:1] // 0000:18:00.0, GPU-a1b2c3d4-…
	for name, out := range hostile {
		p := ParseHealth([]byte(out), HealthFields)
		if len(p.Notes) > maxNotes+1 {
			t.Errorf("%s: %d notes", name, len(p.Notes))
		}
		r := check(t, newChecker(t, gpus, fixedSMI([]byte(out), nil, nil)))
		for _, s := range append(append(r.Notes, r.Node...), r.GPUs[0].Reason()) {
			if utf8.RuneCountInString(s) > 2*maxReason+100 || strings.ContainsAny(s, "\x00\x07\x1b\r") {
				t.Errorf("%s: unbounded or raw text %q", name, s)
			}
		}
		switch name {
		case "crlf":
			if !r.Healthy() || len(r.Notes) != 0 {
				t.Errorf("%s: %+v", name, r)
			}
		case "negative count", "huge count", "control chars":
			if !r.Healthy() || !strings.Contains(strings.Join(r.Notes, "\n"), "is unreadable; ignored") {
				t.Errorf("%s: %+v", name, r)
			}
		default:
			if r.Healthy() {
				t.Errorf("%s: judged healthy from unreadable output", name)
			}
		}
	}
}

func TestHostileKernelLogAndProgram(t *testing.T) {
	for name, out := range hostile {
		for _, x := range ParseXIDs([]byte(out)) {
			t.Errorf("%s: Xid %+v from no Xid line", name, x)
		}
		v := JudgeProgram(ProgramResult{ExitCode: 1, Output: []byte(out)})
		if utf8.RuneCountInString(v.Node) > maxReason+60 || strings.ContainsAny(v.Node, "\x00\x07\x1b") {
			t.Errorf("%s: node reason %q", name, v.Node)
		}
	}
	// An Xid line too long to be the driver's is skipped, not misread.
	long := []byte("NVRM: Xid (PCI:0000:18:00): 79, " + strings.Repeat("x", maxLine) + "\n")
	if xs := ParseXIDs(long); len(xs) != 0 {
		t.Errorf("%+v", xs)
	}
	if xs := ParseXIDs(bytes.Repeat([]byte("NVRM: Xid (PCI:0000:18:00): 79, GPU has fallen off the bus.\n"), 50000)); len(xs) == 0 {
		t.Error("a long log lost its newest Xids")
	}
}

// FuzzParseHealth: any nvidia-smi output, kernel log or program output is
// read without panicking, and whatever is read is well formed.
func FuzzParseHealth(f *testing.F) {
	for _, name := range []string{"dgx-h100-healthy.csv", "dgx-h100-memory-errors.csv", "dgx-h100-gpu-lost.txt", "driver-gone.txt", "old-driver.txt", "kern.log", "h100-mig.csv"} {
		b, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	for _, s := range hostile {
		if len(s) < 4096 {
			f.Add([]byte(s))
		}
	}
	f.Fuzz(func(t *testing.T, out []byte) {
		p := ParseHealth(out, HealthFields)
		if len(p.Notes) > maxNotes+1 {
			t.Fatalf("%d notes", len(p.Notes))
		}
		for _, row := range p.Rows {
			if !validUUID(row.UUID) || row.Index < 0 || row.Index >= maxGPUs || len(row.Values) != len(HealthFields) {
				t.Fatalf("malformed row %+v", row)
			}
			if again, ok := normalizeBusID(row.PCIBusID); !ok || again != row.PCIBusID {
				t.Fatalf("bus id %q not in sysfs form", row.PCIBusID)
			}
			reasons, _ := Judge(row)
			for _, r := range reasons {
				if utf8.RuneCountInString(r) > 2*maxValue+100 {
					t.Fatalf("reason %q", r)
				}
			}
		}
		for _, l := range p.Lost {
			if _, ok := normalizeBusID(l.PCIBusID); !ok || utf8.RuneCountInString(l.Why) > maxReason+1 {
				t.Fatalf("lost %+v", l)
			}
		}
		for _, x := range ParseXIDs(out) {
			if x.Code < 0 || len(x.Device) < 10 {
				t.Fatalf("xid %+v", x)
			}
		}
		JudgeProgram(ProgramResult{ExitCode: 1, Output: out})
	})
}
