package health

import (
	"context"
	"strings"
	"testing"

	"github.com/cockroachdb/errors"

	"github.com/lockstep-dev/lockstep/services/agent/discover"
)

// TestCaptures: rows captured on real H100, MIG, L40S and GeForce machines
// parse, and judge healthy whatever nvidia-smi cannot report there.
func TestCaptures(t *testing.T) {
	for _, name := range []string{"l40s.csv", "h100-mig.csv", "geforce-rtx-2080-super.csv", "dgx-h100-healthy.csv", "dgx-h100-unknown-error.csv"} {
		p := ParseHealth(readFixture(t, name), HealthFields)
		if len(p.Rows) == 0 || len(p.Notes) != 0 || len(p.Lost) != 0 {
			t.Errorf("%s: %d rows, lost %v, notes %q", name, len(p.Rows), p.Lost, p.Notes)
		}
		for _, row := range p.Rows {
			if reasons, notes := Judge(row); len(reasons) != 0 || len(notes) != 0 {
				t.Errorf("%s: gpu %d judged %q, notes %q", name, row.Index, reasons, notes)
			}
		}
	}
}

func TestCheckerOnFixtures(t *testing.T) {
	gpus := dgxGPUs(t)
	for _, tc := range []struct {
		fixture string
		err     error
		want    map[int]string // GPU index → substring of its reason
		node    string         // substring of the node reason; "" for none
	}{
		{"dgx-h100-healthy.csv", nil, map[int]string{}, ""},
		{"dgx-h100-unknown-error.csv", nil, map[int]string{}, ""},
		{"dgx-h100-memory-errors.csv", nil, map[int]string{
			3: "gpu 3 (GPU-a1b2c3d7-0000-4000-8000-000000000003): 2 uncorrectable ECC errors since the driver loaded (ecc.errors.uncorrected.volatile.total: 2); memory rows wait for remapping at the next GPU reset (remapped_rows.pending: Yes)",
			6: "memory row remapping failed (remapped_rows.failure: Yes)",
		}, ""},
		{"dgx-h100-gpu-lost.txt", errExit15, map[int]string{3: "fell off the bus (nvidia-smi: GPU is lost. Reboot the system to recover this GPU)"}, ""},
		{"dgx-h100-gpu-missing.csv", nil, map[int]string{5: "gpu 5 (GPU-a1b2c3d9-0000-4000-8000-000000000005): fell off the bus (nvidia-smi no longer lists it)"}, ""},
		{"driver-gone.txt", errors.New("exit status 9"), map[int]string{}, "nvidia-smi cannot see the GPUs: NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver"},
	} {
		t.Run(tc.fixture, func(t *testing.T) {
			r := check(t, newChecker(t, gpus, fixedSMI(readFixture(t, tc.fixture), tc.err, nil)))
			got := unhealthy(r)
			if len(got) != len(tc.want) {
				t.Errorf("unhealthy %v, want GPUs %v", got, tc.want)
			}
			for i, want := range tc.want {
				if !strings.Contains(got[i], want) {
					t.Errorf("gpu %d: %q, want it to contain %q", i, got[i], want)
				}
			}
			if !strings.Contains(r.NodeReason(), tc.node) || (tc.node == "") != (r.NodeReason() == "") {
				t.Errorf("node reason %q, want %q", r.NodeReason(), tc.node)
			}
			if r.Healthy() != (len(tc.want) == 0 && tc.node == "") {
				t.Errorf("Healthy() = %v", r.Healthy())
			}
		})
	}
}

// A poll in which nvidia-smi sees nothing withdraws the node but judges no
// GPU afresh: each keeps what the last readable poll said.
func TestCheckerKeepsGPUStateWhenSMIFails(t *testing.T) {
	out := readFixture(t, "dgx-h100-memory-errors.csv")
	var err error
	smi := func(context.Context, ...string) ([]byte, error) { return out, err }
	c := newChecker(t, dgxGPUs(t), smi)
	first := check(t, c)

	out, err = readFixture(t, "driver-gone.txt"), errors.New("exit status 9")
	second := check(t, c)
	ch := Diff(first, second)
	if len(ch.BecameHealthy) != 0 || len(ch.BecameUnhealthy) != 0 || ch.NodeBecameUnhealthy == "" {
		t.Errorf("changes %+v", ch)
	}
	if got := unhealthy(second); len(got) != 2 || got[3] == "" || got[6] == "" {
		t.Errorf("unhealthy after a failed poll: %v", got)
	}

	out, err = readFixture(t, "dgx-h100-healthy.csv"), nil
	third := check(t, c)
	ch = Diff(second, third)
	if len(ch.BecameHealthy) != 2 || !ch.NodeBecameHealthy || len(ch.BecameUnhealthy) != 0 {
		t.Errorf("changes %+v", ch)
	}
}

// A driver without the row remapper rejects the whole query; the Checker
// asks again without the field, and keeps not asking.
func TestCheckerDropsFieldsTheDriverLacks(t *testing.T) {
	healthy := readFixture(t, "dgx-h100-healthy.csv")
	var queries []string
	smi := func(_ context.Context, args ...string) ([]byte, error) {
		queries = append(queries, args[0])
		if strings.Contains(args[0], fieldRemapPending) {
			return readFixture(t, "old-driver.txt"), errors.New("exit status 2")
		}
		// The healthy rows without the remapped_rows.pending column.
		var b strings.Builder
		for _, line := range strings.Split(strings.TrimSpace(string(healthy)), "\n") {
			cells := strings.Split(line, ", ")
			b.WriteString(strings.Join(append(cells[:5:5], cells[6]), ", ") + "\n")
		}
		return []byte(b.String()), nil
	}
	c := newChecker(t, dgxGPUs(t), smi)
	r := check(t, c)
	if !r.Healthy() || len(queries) != 2 || !strings.Contains(strings.Join(r.Notes, "\n"), "does not know remapped_rows.pending") {
		t.Fatalf("healthy %v, queries %q, notes %q", r.Healthy(), queries, r.Notes)
	}
	check(t, c)
	if len(queries) != 3 || strings.Contains(queries[2], fieldRemapPending) {
		t.Errorf("queries %q", queries)
	}
}

func TestCheckerNotes(t *testing.T) {
	gpus := dgxGPUs(t)
	rows := string(readFixture(t, "dgx-h100-healthy.csv"))
	extra := "8, GPU-ffffffff-0000-4000-8000-000000000008, 00000000:E1:00.0, 0, [N/A], No, No\n"
	odd := strings.Replace(rows, "2, GPU-a1b2c3d6-0000-4000-8000-000000000002, 00000000:3A:00.0, 0,", "2, GPU-a1b2c3d6-0000-4000-8000-000000000002, 00000000:3A:00.0, lots,", 1)
	r := check(t, newChecker(t, gpus, fixedSMI([]byte(odd+extra), nil, nil)))
	notes := strings.Join(r.Notes, "\n")
	for _, want := range []string{"discovery did not find", `ecc.errors.uncorrected.volatile.total "lots" is unreadable`} {
		if !strings.Contains(notes, want) {
			t.Errorf("notes lack %q:\n%s", want, notes)
		}
	}
	if !r.Healthy() {
		t.Errorf("an unreadable value withdrew a GPU: %v", unhealthy(r))
	}
}

// A cancelled poll reports nothing rather than a node that looks broken.
func TestCheckerCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	smi := func(context.Context, ...string) ([]byte, error) {
		cancel()
		return nil, context.Canceled
	}
	c := newChecker(t, dgxGPUs(t), smi)
	if _, err := c.Check(ctx); !errors.Is(err, context.Canceled) {
		t.Errorf("err %v", err)
	}
}

func TestCheckerTimesOutSMI(t *testing.T) {
	smi := func(ctx context.Context, _ ...string) ([]byte, error) {
		<-ctx.Done()
		return nil, ctx.Err()
	}
	c := newChecker(t, dgxGPUs(t), smi, WithSMITimeout(10e6))
	r := check(t, c)
	if !strings.Contains(r.NodeReason(), "timed out after 10ms") {
		t.Errorf("node reason %q", r.NodeReason())
	}
}

func TestNewCheckerRejects(t *testing.T) {
	gpus := []discover.GPU{{Index: 0, UUID: "GPU-12345678"}}
	for name, tc := range map[string]struct {
		gpus []discover.GPU
		smi  discover.SMI
		opts []Option
	}{
		"GPUs without nvidia-smi": {gpus, nil, nil},
		"a GPU twice":             {append(gpus, gpus...), fixedSMI(nil, nil, nil), nil},
		"nil program":             {nil, nil, []Option{WithProgram(nil)}},
		"nil kernel log":          {nil, nil, []Option{WithKernelLog(nil)}},
		"nil clock":               {nil, nil, []Option{WithClock(nil)}},
		"zero timeout":            {nil, nil, []Option{WithSMITimeout(0)}},
	} {
		if _, err := NewChecker(tc.gpus, tc.smi, tc.opts...); !errors.Is(err, ErrInvalidOption) {
			t.Errorf("%s: err %v, want ErrInvalidOption", name, err)
		}
	}
	// A CPU node: no GPUs, no nvidia-smi, and a healthy report.
	c := newChecker(t, nil, nil)
	if r := check(t, c); !r.Healthy() || len(r.GPUs) != 0 {
		t.Errorf("%+v", r)
	}
}
