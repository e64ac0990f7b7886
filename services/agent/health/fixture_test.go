package health

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/cockroachdb/errors"

	"github.com/lockstep-dev/lockstep/services/agent/discover"
)

// dgxGPUs are the GPUs discovery finds on its dgx-h100 fixture: the machine
// the DGX health fixtures describe.
func dgxGPUs(t *testing.T) []discover.GPU {
	t.Helper()
	dir := filepath.Join("..", "discover", "testdata", "dgx-h100")
	smi := func(_ context.Context, args ...string) ([]byte, error) {
		if slices.Equal(args, []string{"topo", "-m"}) {
			return os.ReadFile(filepath.Join(dir, "topo-m.txt"))
		}
		return os.ReadFile(filepath.Join(dir, "query-gpu.csv"))
	}
	inv, err := discover.Discover(context.Background(), discover.Sources{Sys: os.DirFS(filepath.Join(dir, "sys")), SMI: smi})
	if err != nil || len(inv.GPUs) != 8 {
		t.Fatalf("discovering the dgx-h100 fixture: %v, %d GPUs", err, len(inv.GPUs))
	}
	return inv.GPUs
}

func readFixture(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// fixedSMI answers every poll with out and err, counting calls.
func fixedSMI(out []byte, err error, calls *int) discover.SMI {
	return func(context.Context, ...string) ([]byte, error) {
		if calls != nil {
			*calls++
		}
		return out, err
	}
}

var epoch = time.Date(2026, 7, 14, 8, 12, 38, 0, time.UTC)

func newChecker(t *testing.T, gpus []discover.GPU, smi discover.SMI, opts ...Option) *Checker {
	t.Helper()
	c, err := NewChecker(gpus, smi, append([]Option{WithClock(func() time.Time { return epoch })}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func check(t *testing.T, c *Checker) Report {
	t.Helper()
	r, err := c.Check(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if !r.At.Equal(epoch) {
		t.Errorf("report at %v, want the injected clock's %v", r.At, epoch)
	}
	return r
}

// unhealthy maps GPU index to its one-line reason, for the GPUs that have one.
func unhealthy(r Report) map[int]string {
	out := map[int]string{}
	for _, g := range r.Unhealthy() {
		out[g.Index] = g.Reason()
	}
	return out
}

var errExit15 = errors.New("exit status 15")
