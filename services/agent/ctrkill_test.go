package agent

import (
	"github.com/cockroachdb/errors"

	"context"
	"fmt"
	"syscall"
	"testing"
	"time"

	"github.com/lockstep-dev/lockstep/services/agent/containers"
	"github.com/lockstep-dev/lockstep/shared/contract/domain"
	"github.com/lockstep-dev/lockstep/shared/contract/jobspec"
	"github.com/lockstep-dev/lockstep/shared/plumbing/store"
	"github.com/lockstep-dev/lockstep/shared/plumbing/testenv"
)

const ctrKillProbe = "lockstep-probe:agent"

// The containment case for containers: `kill -9` of an agent
// running a container gang leaves the rank containers running (nothing
// of the agent is left to stop them), and the agent, started again,
// removes every container of that attempt before it registers.
func TestAgentKilledWithContainersLeavesNoneAfterRestart(t *testing.T) {
	d, err := containers.ProbeEngine(t.Context(), ctrKillProbe)
	if errors.Is(err, containers.ErrNoEngine) {
		t.Skipf("%v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = d.Close() })
	env := testenv.Start(t)
	spec := testAgentSpec{NATS: env.NATSURL, Etcd: env.EtcdEndpoint, Node: "ck1", DataDir: t.TempDir(),
		Containment: ContainProcess, ContainerRuntime: RuntimeDocker}
	agent, epoch := startAgentProcess(t, env, spec, 0)
	ctx := context.Background()
	t.Cleanup(func() {
		_, _ = containers.Reap(context.Background(), d, spec.Node, spec.DataDir, func(string, int) bool { return false })
	})
	as := domain.Assignment{JobID: "ctrkill", Attempt: 3, Node: spec.Node, Epoch: epoch, NNodes: 1, WorldSize: 2,
		Ranks:   []domain.Rank{{Rank: 0}, {Rank: 1}},
		Command: []string{"/probe", "wait"}, Container: &jobspec.Container{Image: ctrKillProbe, PullPolicy: jobspec.PullNever}}
	if _, err := env.Etcd.Put(ctx, store.AssignKey(spec.Node, as.JobID), store.MustJSON(as)); err != nil {
		t.Fatal(err)
	}
	attempt := func() (n int) {
		owned, err := d.Owned(ctx, spec.Node, spec.DataDir)
		if err != nil {
			t.Fatal(err)
		}
		for _, o := range owned {
			if o.Job == as.JobID && o.Attempt == as.Attempt {
				n++
			}
		}
		return n
	}
	testenv.Eventually(t, 60*time.Second, func() error {
		if n := attempt(); n != 2 {
			return fmt.Errorf("%d containers of the attempt, want 2", n)
		}
		return nil
	})
	if err := agent.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = agent.Wait()
	if n := attempt(); n != 2 {
		t.Fatalf("%d containers left running by the killed agent, want 2: the test set up nothing to reap", n)
	}
	startAgentProcess(t, env, spec, epoch)
	// Registered: the restarted agent reaped before it registered.
	if n := attempt(); n != 0 {
		t.Fatalf("%d containers of attempt %d left after the agent's restart", n, as.Attempt)
	}
}
