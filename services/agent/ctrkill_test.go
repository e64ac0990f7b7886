package agent

import (
	"context"
	"fmt"
	"syscall"
	"testing"
	"time"

	"github.com/cockroachdb/errors"

	"github.com/lockstep-dev/lockstep/services/agent/containers"
	"github.com/lockstep-dev/lockstep/shared/contract/domain"
	"github.com/lockstep-dev/lockstep/shared/contract/jobspec"
	"github.com/lockstep-dev/lockstep/shared/plumbing/store"
	"github.com/lockstep-dev/lockstep/shared/plumbing/testenv"
)

const ctrKillProbe = "lockstep-probe:agent"

// The containment rule for containers: `kill -9` of an agent running a
// container gang ends the rank containers too, as it ends bare ranks —
// their lifelines to the dead agent are cut — and the agent, started
// again, removes what is left of them before it registers.
func TestAgentKilledWithContainersLeavesNoneAfterRestart(t *testing.T) {
	d, err := containers.ProbeEngine(t.Context(), ctrKillProbe)
	if errors.Is(err, containers.ErrNoEngine) {
		t.Skipf("%v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = d.Close() })
	bin := testenv.LockstepBinary(t)
	if !staticBinary(bin) {
		t.Fatalf("%s built with CGO_ENABLED=0 is not static", bin)
	}
	env := testenv.Start(t)
	spec := testAgentSpec{NATS: env.NATSURL, Etcd: env.EtcdEndpoint, Node: "ck1", DataDir: t.TempDir(),
		Containment: ContainProcess, ContainerRuntime: RuntimeDocker, ShimTarget: bin}
	agent, epoch := startAgentProcess(t, env, spec, 0)
	ctx := context.Background()
	t.Cleanup(func() {
		_, _ = containers.Reap(context.Background(), d, spec.Node, spec.DataDir, func(string, int) bool { return false })
	})
	as := domain.Assignment{JobID: "ctrkill", Attempt: 3, Node: spec.Node, Epoch: epoch, NNodes: 1, WorldSize: 2, MasterAddr: "127.0.0.1", MasterPort: 29500,
		Ranks:   []domain.Rank{{Rank: 0}, {Rank: 1, LocalRank: 1}},
		Command: []string{"/probe", "wait"}, Container: &jobspec.Container{Image: ctrKillProbe, PullPolicy: jobspec.PullNever}}
	if _, err := env.Etcd.Put(ctx, store.AssignKey(spec.Node, as.JobID), store.MustJSON(as)); err != nil {
		t.Fatal(err)
	}
	attempt := func() (all, running int) {
		owned, err := d.Owned(ctx, spec.Node, spec.DataDir)
		if err != nil {
			t.Fatal(err)
		}
		for _, o := range owned {
			if o.Job == as.JobID && o.Attempt == as.Attempt {
				all++
				if o.Running {
					running++
				}
			}
		}
		return all, running
	}
	testenv.Eventually(t, 60*time.Second, func() error {
		if _, n := attempt(); n != 2 {
			return fmt.Errorf("%d containers of the attempt running, want 2", n)
		}
		return nil
	})
	killed := time.Now()
	if err := agent.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = agent.Wait()
	testenv.Eventually(t, 20*time.Second, func() error {
		if _, n := attempt(); n != 0 {
			return fmt.Errorf("%d containers of the attempt still running after the agent was killed", n)
		}
		return nil
	})
	t.Logf("rank containers ended %s after the agent's kill -9", time.Since(killed).Round(10*time.Millisecond))
	if all, _ := attempt(); all != 2 {
		t.Fatalf("%d containers of the attempt after the kill, want the 2 exited ones: the test set up nothing to reap", all)
	}
	startAgentProcess(t, env, spec, epoch)
	// Registered: the restarted agent reaped before it registered.
	if all, _ := attempt(); all != 0 {
		t.Fatalf("%d containers of attempt %d left after the agent's restart", all, as.Attempt)
	}
}
