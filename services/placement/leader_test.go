package placement_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/lockstep-dev/lockstep/services/placement"
	"github.com/lockstep-dev/lockstep/shared/plumbing/config"
	"github.com/lockstep-dev/lockstep/shared/plumbing/store"
	"github.com/lockstep-dev/lockstep/shared/plumbing/testenv"
)

// The leader's election key lives on a lease of --leader-ttl: that TTL is
// how long a standby waits after the leader stops renewing.
func TestLeaderHoldsTheElectionForItsTTL(t *testing.T) {
	for _, c := range []struct {
		ttl, want time.Duration
	}{{0, store.DefaultNodeTTL}, {3 * time.Second, 3 * time.Second}} {
		t.Run(fmt.Sprint(c.ttl), func(t *testing.T) {
			env := testenv.Start(t)
			cfg := placement.Config{Base: env.Base(t), LeaderTTL: c.ttl}
			cfg.Instance = "p-1"
			testenv.Serve(t, func(ctx context.Context) error { return placement.Run(ctx, cfg) })
			testenv.Eventually(t, 20*time.Second, func() error {
				ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
				defer cancel()
				resp, err := env.Etcd.Get(ctx, store.ElectionKey("placement"), clientv3.WithFirstCreate()...)
				if err != nil || len(resp.Kvs) == 0 {
					return fmt.Errorf("no leader yet (%v)", err)
				}
				if v := string(resp.Kvs[0].Value); v != "p-1" {
					return fmt.Errorf("leader %q", v)
				}
				ttl, err := env.Etcd.TimeToLive(ctx, clientv3.LeaseID(resp.Kvs[0].Lease))
				if err != nil {
					return err
				}
				if got := time.Duration(ttl.GrantedTTL) * time.Second; got != c.want {
					t.Fatalf("the election key's lease was granted for %s, want %s", got, c.want)
				}
				return nil
			})
		})
	}
}

func TestConfigRefusesALeaderTTLEtcdCannotGrant(t *testing.T) {
	for ttl, want := range map[time.Duration]string{
		time.Second:             "--leader-ttl: 1s is below the 2s minimum",
		2500 * time.Millisecond: "--leader-ttl: 2.5s is not whole seconds",
	} {
		c := placement.Config{Base: config.Base{NATSURL: "nats://x", Etcd: "x", StreamReplicas: 1}, LeaderTTL: ttl}
		if err := c.Validate(); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("--leader-ttl %s: Validate = %v, want %q", ttl, err, want)
		}
	}
	c := placement.Config{Base: config.Base{NATSURL: "nats://x", Etcd: "x", StreamReplicas: 1}, LeaderTTL: 3 * time.Second}
	if err := c.Validate(); err != nil {
		t.Errorf("--leader-ttl 3s: %v", err)
	}
}
