//go:build !lockstep_client

package main

import (
	"context"
	"io"
	"log/slog"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/lockstep-dev/lockstep/deploy/devcluster"
	"github.com/lockstep-dev/lockstep/shared/plumbing/connection"
	"github.com/lockstep-dev/lockstep/shared/plumbing/testenv"
)

// The commands the dev banner suggests reach the cluster it started: with
// the flags the CLI's precedence needs, and none when nothing is needed.
func TestDevBannerCommandFlags(t *testing.T) {
	other := &devcluster.Cluster{NATSURL: "nats://127.0.0.1:5222"}
	other.Admin.Creds = "/d/creds/admin.creds"
	def := &devcluster.Cluster{NATSURL: "nats://127.0.0.1:4222"}
	env := func(kv ...string) func(string) string {
		return func(k string) string {
			for i := 0; i+1 < len(kv); i += 2 {
				if kv[i] == k {
					return kv[i+1]
				}
			}
			return ""
		}
	}
	for _, tc := range []struct {
		name             string
		getenv           func(string) string
		c                *devcluster.Cluster
		written, current bool
		want             string
	}{
		{"dev context current", env(), other, true, true, ""},
		{"dev context not current", env(), other, true, false, " --context dev"},
		{"no context, non-default --nats-listen", env(), other, false, false, " --nats nats://127.0.0.1:5222 --creds /d/creds/admin.creds"},
		{"no context, default address, no auth", env(), def, false, false, ""},
		{"LOCKSTEP_NATS elsewhere overrides the context", env("LOCKSTEP_NATS", "nats://prod:4222"), other, true, true, " --nats nats://127.0.0.1:5222"},
		{"NATS_URL elsewhere, no context", env("NATS_URL", "nats://prod:4222"), def, false, false, " --nats nats://127.0.0.1:4222"},
	} {
		if got := devCommandFlags(tc.getenv, tc.c, tc.written, tc.current); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
}

// The banner of a dev cluster on a non-default address whose context
// could not be written suggests commands with its --nats.
func TestDevBannerRepeatsNonDefaultNATS(t *testing.T) {
	// A config path under a file cannot be written.
	t.Setenv("LOCKSTEP_CONFIG", filepath.Join(writeFile(t, "not-a-dir", ""), "config.yaml"))
	banner := devBanner(t, "")
	m := regexp.MustCompile(`NATS +(nats://\S+)`).FindStringSubmatch(banner)
	if m == nil || m[1] == connection.DefaultNATS {
		t.Fatalf("banner names no non-default NATS:\n%s", banner)
	}
	for _, want := range []string{"lockstep submit docs/examples/hello.json --wait --nats " + m[1] + "\n", "lockstep queue --nats " + m[1] + "\n",
		"1 node × 8 GPUs over 1 leaf switch"} {
		if !strings.Contains(banner, want) {
			t.Errorf("banner lacks %q:\n%s", want, banner)
		}
	}
}

// devBanner runs a one-node dev cluster (configFile: its --config) until
// it has printed its banner, stops it, and returns what it printed.
func devBanner(t *testing.T, configFile string) string {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var out testenv.LockedBuffer
	env := &cliEnv{stdout: &out, stderr: io.Discard, stdin: strings.NewReader("")}
	done := make(chan error, 1)
	go func() {
		done <- runDevCluster(ctx, env, devcluster.Config{
			DataDir: t.TempDir(), NATSListen: "127.0.0.1:0", EtcdListen: "127.0.0.1:0",
			Nodes: 1, GPUsPerNode: 8, Leaves: 1, NoFsync: true, Log: slog.New(slog.DiscardHandler),
		}, configFile)
	}()
	deadline := time.Now().Add(30 * time.Second)
	for !strings.Contains(out.String(), "Ctrl-C") {
		if time.Now().After(deadline) {
			t.Fatalf("no banner: %q", out.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	return out.String()
}
