package main

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/lockstep-dev/lockstep/deploy/devcluster"
	"github.com/lockstep-dev/lockstep/services/agent"
	"github.com/lockstep-dev/lockstep/shared/contract/domain"
	"github.com/lockstep-dev/lockstep/shared/plumbing/testenv"
)

func TestUnhealthyColumn(t *testing.T) {
	for _, tc := range []struct {
		faults []domain.GPUFault
		want   string
	}{
		{nil, "-"},
		{[]domain.GPUFault{{GPU: 3, Reason: "gpu 3 (GPU-x): 2 uncorrectable ECC errors"}}, "gpu 3 (GPU-x): 2 uncorrectable ECC errors"},
		{[]domain.GPUFault{{GPU: 1, Reason: "fell off the bus"}, {GPU: 2, Reason: "x"}}, "gpu 1: fell off the bus; gpu 2: x"},
		{[]domain.GPUFault{{GPU: 0, Reason: "evil\x1b[2J\rreason"}}, `gpu 0: evil\x1b[2J\rreason`},
	} {
		if got := unhealthyColumn(domain.Node{Unhealthy: tc.faults}); got != tc.want {
			t.Errorf("%+v: %q, want %q", tc.faults, got, tc.want)
		}
	}
	got := unhealthyColumn(domain.Node{Unhealthy: []domain.GPUFault{{GPU: 0, Reason: strings.Repeat("é", 500)}}})
	if utf8.RuneCountInString(got) != maxUnhealthyColumn || !strings.HasSuffix(got, "…") {
		t.Errorf("not cut to %d: %q", maxUnhealthyColumn, got)
	}
}

// `node list` shows a GPU the agent's health checks withdrew, with the
// reason escaped; `node resume` returns it.
func TestNodeListShowsWithdrawnGPUs(t *testing.T) {
	ctx := context.Background()
	_, hc, err := devcluster.FakeHealth(ctx, "node-01", 100*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	// A hostile program: a terminal escape in its reason.
	hc.Program, err = devcluster.HealthProgram(t.TempDir(), "#!/bin/sh\necho 'gpu 6: fan \033[2J stopped'; exit 1\n")
	if err != nil {
		t.Fatal(err)
	}
	c := startDevClusterWith(t, func(c *devcluster.Config) {
		c.Nodes, c.Health = 1, map[string]agent.HealthConfig{"node-01": hc}
	})
	testenv.Eventually(t, 15*time.Second, func() error {
		out, errOut, code := cli(t, "node", "list", "--nats", c.NATSURL)
		if code != 0 {
			return fmt.Errorf("exit %d: %s", code, errOut)
		}
		if !strings.Contains(out, "UNHEALTHY") || !strings.Contains(out, `gpu 6 (GPU-`) || !strings.Contains(out, "health-check program: fan") || strings.Contains(out, "\x1b") {
			return fmt.Errorf("node list:\n%s", out)
		}
		return nil
	})
	if err := os.WriteFile(hc.Program, []byte("#!/bin/sh\nexit 0\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if _, errOut, code := cli(t, "node", "resume", "node-01", "--nats", c.NATSURL); code != 0 {
		t.Fatalf("node resume: %s", errOut)
	}
	testenv.Eventually(t, 15*time.Second, func() error {
		out, _, _ := cli(t, "node", "list", "--nats", c.NATSURL)
		if strings.Contains(out, "gpu 6") {
			return fmt.Errorf("still withdrawn:\n%s", out)
		}
		return nil
	})
}
