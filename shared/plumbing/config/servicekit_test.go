package config

import (
	"testing"
	"time"

	"github.com/lockstep-dev/lockstep/shared/plumbing/connection"
)

func TestServiceChecks(t *testing.T) {
	ok := Base{NATSURL: connection.DefaultNATS, Etcd: connection.DefaultEtcd, StreamReplicas: 1}
	cases := []struct {
		base   Base
		checks []error
		want   string // "" for none
	}{
		{base: ok},
		{base: ok, checks: []error{nil, LeaseTTL("--ttl", 0), LeaseTTL("--ttl", 3*time.Second)}},
		{base: Base{Etcd: connection.DefaultEtcd, StreamReplicas: 1}, checks: []error{LeaseTTL("--ttl", time.Second)}, want: "--nats: a NATS URL is required"},
		{base: ok, checks: []error{LeaseTTL("--ttl", time.Second)}, want: "--ttl: 1s is below the 2s minimum"},
		{base: ok, checks: []error{LeaseTTL("--ttl", 2500*time.Millisecond)}, want: "--ttl: 2.5s is not whole seconds (etcd leases are)"},
		{base: ok, checks: []error{Require(true, "first"), Require(false, "--n: %d is negative", -1), Require(false, "third")},
			want: "--n: -1 is negative"},
	}
	for _, c := range cases {
		err := c.base.ValidateWith(c.checks...)
		if got := ""; err != nil && err.Error() != c.want || err == nil && c.want != got {
			t.Errorf("ValidateWith(%v) = %v, want %q", c.checks, err, c.want)
		}
	}
}
