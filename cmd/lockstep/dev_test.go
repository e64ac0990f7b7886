package main

import (
	"testing"

	"github.com/lockstep-dev/lockstep/deploy/devcluster"
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
