package config_test

import (
	"cmp"
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/cockroachdb/errors"

	"github.com/lockstep-dev/lockstep/shared/contract/domain"
	"github.com/lockstep-dev/lockstep/shared/plumbing/config"
	"github.com/lockstep-dev/lockstep/shared/plumbing/telemetry"
	"github.com/lockstep-dev/lockstep/shared/plumbing/testenv"
)

// svcConfig is a service's Config as services declare them.
type svcConfig struct {
	config.Base
	Workers int
}

func (c *svcConfig) Validate() error {
	if err := c.Base.Validate(); err != nil {
		return err
	}
	if c.Workers < 0 {
		return errors.New("--workers: negative")
	}
	return nil
}

func (c *svcConfig) Defaults() { c.Workers = cmp.Or(c.Workers, 7) }

// Start refuses what the service's own Validate refuses, before
// connecting; otherwise it fills in the defaults, connects, binds the jobs
// bucket WithJobs, and declares readiness with Ready. It fills in the
// clock unless one is set.
func TestStart(t *testing.T) {
	env := testenv.Start(t)
	ctx := context.Background()
	base := config.Base{NATSURL: env.NATSURL, Etcd: env.EtcdEndpoint, StreamReplicas: 1,
		Log: slog.New(slog.DiscardHandler), Health: telemetry.NewHealth()}

	bad := svcConfig{Base: base, Workers: -1}
	if _, err := config.Start(ctx, "svc", &bad); err == nil || err.Error() != "--workers: negative" {
		t.Fatalf("Start with invalid settings: %v", err)
	}
	unreachable := svcConfig{Base: base}
	unreachable.NATSURL = "nats://127.0.0.1:1"
	if _, err := config.Start(ctx, "svc", &unreachable); err == nil {
		t.Fatal("Start connected to nothing")
	}

	cfg := svcConfig{Base: base}
	st, err := config.Start(ctx, "svc", &cfg, config.WithJobs())
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if cfg.Workers != 7 {
		t.Errorf("Workers = %d after Start, want the default 7", cfg.Workers)
	}
	if cfg.Now == nil {
		t.Error("no clock after Start, want time.Now")
	}
	if st.Jobs == nil || st.Log == nil || st.Tel == nil {
		t.Fatalf("Started lacks something: %+v", st)
	}
	if err := st.Jobs.Create(ctx, domain.Job{ID: "j", State: domain.StatePending}); err != nil {
		t.Fatal(err)
	}
	if _, err := base.Health.Status(ctx); err == nil {
		t.Fatal("ready before Ready")
	}
	done := st.Ready("/")
	if _, err := base.Health.Status(ctx); err != nil {
		t.Fatalf("not ready after Ready: %v", err)
	}
	done()

	// A clock the caller set is kept.
	at := time.Date(2024, 1, 2, 3, 4, 5, 0, time.UTC)
	cfg.Now = func() time.Time { return at }
	plain, err := config.Start(ctx, "svc", &cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer plain.Close()
	if plain.Jobs != nil {
		t.Fatal("jobs bucket bound without WithJobs")
	}
	if got := cfg.Now(); !got.Equal(at) {
		t.Errorf("clock after Start reads %s, want the one set (%s)", got, at)
	}
}
