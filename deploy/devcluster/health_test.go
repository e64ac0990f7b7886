package devcluster_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/lockstep-dev/lockstep/deploy/devcluster"
	"github.com/lockstep-dev/lockstep/services/agent"
	"github.com/lockstep-dev/lockstep/services/agent/discover/fake"
	"github.com/lockstep-dev/lockstep/shared/contract/client"
	"github.com/lockstep-dev/lockstep/shared/contract/domain"
	"github.com/lockstep-dev/lockstep/shared/contract/events"
	"github.com/lockstep-dev/lockstep/shared/plumbing/testenv"
)

// A GPU of a running 8-GPU gang's node reports uncorrectable ECC errors:
// the agent withdraws it (gpu-unhealthy, with the reason, on node list),
// the gang is checkpoint-drained and requeued and never placed on that GPU
// again; the GPU stays withdrawn once nvidia-smi is clean again, until an
// operator's node resume returns it (gpu-healthy) and a gang runs on it.
func TestGPUFaultWithdrawsUntilResume(t *testing.T) {
	ctx := context.Background()
	m, hc, err := devcluster.FakeHealth(ctx, "node-01", 100*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	h := newHarness(t, devcluster.Config{Nodes: 2, Health: map[string]agent.HealthConfig{"node-01": hc}, MetricsAddr: "127.0.0.1:0"})
	// lockstep_gpus_unhealthy (alert LockstepGPUUnhealthy) follows the withdrawal.
	unhealthyGauge := func(want float64) {
		testenv.Eventually(t, 10*time.Second, func() error {
			_, body := testenv.HTTPGet(t, "http://"+h.c.MetricsAddr()+"/metrics")
			if got, ok := sample(body, `lockstep_gpus_unhealthy{leaf="leaf-1"}`); !ok || got != want {
				return fmt.Errorf("lockstep_gpus_unhealthy = %v (present %v), want %v", got, ok, want)
			}
			return nil
		})
	}
	unhealthyGauge(0)

	// Two 8-GPU gangs fill both nodes.
	gang := func(id string) string {
		return fmt.Sprintf(`{"id":%q,"gang":{"nodes":1,"gpusPerNode":8},"command":["sleep","300"],"checkpoint":{"gracePeriod":"10s"}}`, id)
	}
	first, second := h.submit(gang("first")), h.submit(gang("second"))
	running := func(j domain.Job) bool { return j.State == domain.StateRunning }
	victim, other := h.waitFor(first, 30*time.Second, running), h.waitFor(second, 30*time.Second, running)
	if victim.Placement.Nodes[0].Node != "node-01" {
		victim, other = other, victim
	}
	if victim.Placement.Nodes[0].Node != "node-01" {
		t.Fatalf("no gang on node-01: %+v %+v", victim.Placement, other.Placement)
	}

	// GPU 3 breaks.
	if err := m.SetFault(3, fake.Fault{UncorrectableECC: 2}); err != nil {
		t.Fatal(err)
	}
	ev := h.nodeEvent("node-01", events.GPUUnhealthy)
	if !slices.Equal(ev.GPUs, []int{3}) || !strings.Contains(ev.Reason, "2 uncorrectable ECC errors") {
		t.Errorf("gpu-unhealthy event: gpus %v reason %q", ev.GPUs, ev.Reason)
	}
	withdrawn := func() []domain.GPUFault {
		nodes, err := h.cl.Nodes(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, n := range nodes {
			if n.Node.Name == "node-01" {
				return n.Node.Unhealthy
			}
		}
		t.Fatal("node-01 is not listed")
		return nil
	}
	testenv.Eventually(t, 10*time.Second, func() error {
		if fs := withdrawn(); len(fs) != 1 || fs[0].GPU != 3 || !strings.Contains(fs[0].Reason, "uncorrectable ECC") {
			return fmt.Errorf("node list shows node-01 unhealthy as %+v", fs)
		}
		return nil
	})
	unhealthyGauge(1)

	// The gang on it is drained and requeued; with node-02 full and 7 GPUs
	// left on node-01 it waits.
	requeued := h.waitEvent(victim.ID, events.Requeued)
	if !strings.Contains(requeued.Reason, "GPU 3 of node node-01 withdrawn") {
		t.Errorf("requeued because %q", requeued.Reason)
	}
	h.waitFor(victim.ID, 30*time.Second, func(j domain.Job) bool { return j.State == domain.StatePending && j.Attempt == 2 })
	h.assertNoAssignment("node-01", victim.ID, 2)

	// The GPU is clean again, but stays withdrawn: only a resume returns it.
	if err := m.SetFault(3, fake.Fault{}); err != nil {
		t.Fatal(err)
	}
	// With node-02 free the requeued gang runs there, not on the GPU.
	if err := h.cl.Cancel(ctx, other.ID, "make room"); err != nil {
		t.Fatal(err)
	}
	j := h.waitFor(victim.ID, 30*time.Second, func(j domain.Job) bool { return j.State == domain.StateRunning && j.Attempt == 2 })
	if n := j.Placement.Nodes[0].Node; n != "node-02" {
		t.Errorf("requeued gang placed on %s", n)
	}
	// A gang of 8 cannot use node-01 (7 GPUs); one of 7 can, without GPU 3.
	eight, seven := h.submit(gang("eight")), h.submit(strings.Replace(gang("seven"), `"gpusPerNode":8`, `"gpusPerNode":7`, 1))
	s := h.waitFor(seven, 30*time.Second, running)
	if np := s.Placement.Nodes[0]; np.Node != "node-01" || slices.Contains(np.GPUs, 3) {
		t.Errorf("7-GPU gang placed on %s GPUs %v", np.Node, np.GPUs)
	}
	if fs := withdrawn(); len(fs) != 1 {
		t.Errorf("a clean poll returned the GPU: %+v", fs)
	}
	if j := h.job(eight); j.State != domain.StatePending {
		t.Errorf("8-GPU gang is %s", j.State)
	}

	// The operator resumes node-01: GPU 3 is back, announced.
	if err := h.cl.Cancel(ctx, seven, "make room"); err != nil {
		t.Fatal(err)
	}
	if err := h.cl.ResumeNode(ctx, "node-01"); err != nil {
		t.Fatal(err)
	}
	back := h.nodeEvent("node-01", events.GPUHealthy)
	if !slices.Equal(back.GPUs, []int{3}) {
		t.Errorf("gpu-healthy event for GPUs %v", back.GPUs)
	}
	testenv.Eventually(t, 10*time.Second, func() error {
		if fs := withdrawn(); len(fs) != 0 {
			return fmt.Errorf("still withdrawn: %+v", fs)
		}
		return nil
	})
	unhealthyGauge(0)
	e := h.waitFor(eight, 30*time.Second, running)
	if np := e.Placement.Nodes[0]; np.Node != "node-01" || !slices.Contains(np.GPUs, 3) {
		t.Errorf("8-GPU gang placed on %s GPUs %v after the resume", np.Node, np.GPUs)
	}
	h.checkInvariants()
}

// With auth on, an agent may announce its own GPUs withdrawn and returned,
// and read the node state a resume writes.
func TestAuthClusterGPUHealth(t *testing.T) {
	ctx := context.Background()
	m, hc, err := devcluster.FakeHealth(ctx, "node-01", 100*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	c, err := devcluster.Start(ctx, devcluster.Config{
		DataDir: openDir(t), NATSListen: "127.0.0.1:0", EtcdListen: "127.0.0.1:0",
		Nodes: 1, GPUsPerNode: 8, Leaves: 1, NoFsync: true, Log: testenv.FailureLog(t),
		Auth: true, Health: map[string]agent.HealthConfig{"node-01": hc},
	})
	if err != nil {
		t.Fatalf("start dev cluster with auth: %v", err)
	}
	t.Cleanup(c.Stop)
	cl, err := client.Dial(ctx, c.NATSURL, c.Admin.BusOptions()...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	wait := func(typ events.Type) events.Event {
		var found events.Event
		testenv.Eventually(t, 15*time.Second, func() error {
			evs, err := cl.NodeEvents(ctx, "node-01")
			if err != nil {
				return err
			}
			for _, ev := range evs {
				if ev.Type == typ {
					found = ev
					return nil
				}
			}
			return fmt.Errorf("no %s event", typ)
		})
		return found
	}
	if err := m.SetFault(5, fake.Fault{Lost: true}); err != nil {
		t.Fatal(err)
	}
	if ev := wait(events.GPUUnhealthy); !slices.Equal(ev.GPUs, []int{5}) || !strings.Contains(ev.Reason, "fell off the bus") {
		t.Errorf("gpu-unhealthy: %v %q", ev.GPUs, ev.Reason)
	}
	if err := m.SetFault(5, fake.Fault{}); err != nil {
		t.Fatal(err)
	}
	// A restarted agent, though its GPUs look clean now, registers GPU 5
	// withdrawn still.
	c.StopService(devcluster.AgentName("node-01"))
	c.Start(devcluster.AgentName("node-01"))
	testenv.Eventually(t, 15*time.Second, func() error {
		evs, err := cl.NodeEvents(ctx, "node-01")
		if err != nil {
			return err
		}
		ups := 0
		for _, ev := range evs {
			if ev.Type == events.NodeUp {
				ups++
			}
		}
		if ups < 2 {
			return fmt.Errorf("%d node-up events", ups)
		}
		nodes, err := cl.Nodes(ctx)
		if err != nil {
			return err
		}
		for _, n := range nodes {
			if n.Node.Name == "node-01" && n.Up && len(n.Node.Unhealthy) == 1 && n.Node.Unhealthy[0].GPU == 5 {
				return nil
			}
		}
		return fmt.Errorf("node-01 not back up with GPU 5 withdrawn: %+v", nodes)
	})
	if err := cl.ResumeNode(ctx, "node-01"); err != nil {
		t.Fatal(err)
	}
	if ev := wait(events.GPUHealthy); !slices.Equal(ev.GPUs, []int{5}) {
		t.Errorf("gpu-healthy: %v", ev.GPUs)
	}
}

// The health-check program withdraws the GPU it names, with its reason.
func TestHealthCheckProgramWithdrawsTheGPUItNames(t *testing.T) {
	ctx := context.Background()
	_, hc, err := devcluster.FakeHealth(ctx, "node-01", 100*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	flag := filepath.Join(dir, "broken")
	hc.Program, err = devcluster.HealthProgram(dir, fmt.Sprintf("#!/bin/sh\nif [ -e %s ]; then echo 'GPU 2: fan stopped'; exit 1; fi\n", flag))
	if err != nil {
		t.Fatal(err)
	}
	h := newHarness(t, devcluster.Config{Nodes: 1, Health: map[string]agent.HealthConfig{"node-01": hc}})
	if err := os.WriteFile(flag, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	ev := h.nodeEvent("node-01", events.GPUUnhealthy)
	if !slices.Equal(ev.GPUs, []int{2}) || !strings.Contains(ev.Reason, "fan stopped") {
		t.Errorf("gpu-unhealthy: gpus %v reason %q", ev.GPUs, ev.Reason)
	}
}
