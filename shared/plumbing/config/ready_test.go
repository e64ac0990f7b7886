package config_test

import (
	"context"
	"testing"

	"github.com/lockstep-dev/lockstep/shared/plumbing/auth"
	"github.com/lockstep-dev/lockstep/shared/plumbing/bus"
	"github.com/lockstep-dev/lockstep/shared/plumbing/config"
	"github.com/lockstep-dev/lockstep/shared/plumbing/store"
	"github.com/lockstep-dev/lockstep/shared/plumbing/telemetry"
	"github.com/lockstep-dev/lockstep/shared/plumbing/testenv"
)

// With etcd's RBAC on, a node may read only its own keys: its readiness
// probe reads its own node key and passes, where a probe of every node's
// keys (what the services read) is refused and would keep the agent
// unready for ever (the compose cluster once did).
func TestAgentReadinessUnderRBAC(t *testing.T) {
	env := testenv.Start(t, testenv.WithAuth())
	ctx := context.Background()
	id := auth.Identity{Name: "node-1", Role: auth.RoleNode}
	creds := env.Auth.Credentials(t, id)
	b, err := bus.Connect(ctx, env.NATSURL, id.Name, creds.BusOptions()...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(b.Close)
	cli, err := store.Connect(ctx, env.EtcdEndpoint, store.WithCredentials(creds))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cli.Close() })

	for _, tc := range []struct {
		probe string
		ready bool
	}{
		{store.NodeKey(id.Name), true},
		{store.NodesPrefix, false},
	} {
		base := config.Base{Health: telemetry.NewHealth()}
		done := base.Ready("agent", b, cli, tc.probe)
		_, err := base.Health.Status(ctx)
		done()
		if (err == nil) != tc.ready {
			t.Errorf("probe %s: readiness error %v, want ready=%v", tc.probe, err, tc.ready)
		}
	}
}
