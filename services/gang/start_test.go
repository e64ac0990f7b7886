package gang_test

import (
	"context"
	"log/slog"
	"sync"
	"testing"

	"github.com/lockstep-dev/lockstep/services/gang"
	"github.com/lockstep-dev/lockstep/shared/config"
	"github.com/lockstep-dev/lockstep/shared/jobs"
	"github.com/lockstep-dev/lockstep/shared/testenv"
)

// startGang runs `replicas` gang replicas with cfg (its Base filled in) on
// env until the test ends, and returns the job records' store.
func startGang(t *testing.T, env *testenv.Env, replicas int, cfg gang.Config) *jobs.Store {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	js, err := jobs.Open(ctx, env.Bus.JS)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	cfg.Base = config.Base{NATSURL: env.NATSURL, Etcd: env.EtcdEndpoint, StreamReplicas: 1, Log: slog.New(slog.DiscardHandler)}
	var wg sync.WaitGroup
	for range replicas {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_ = gang.Run(ctx, cfg)
		}()
	}
	t.Cleanup(func() { cancel(); wg.Wait() })
	return js
}
