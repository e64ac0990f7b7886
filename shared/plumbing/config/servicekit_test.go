package config

import (
	"testing"
	"time"

	"github.com/lockstep-dev/lockstep/shared/contract/errs"
	"github.com/lockstep-dev/lockstep/shared/plumbing/bus"
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
		{base: withReaders(ok, bus.ServerReaders)},
		{base: withReaders(ok, minReaders)},
		{base: withReaders(ok, minReaders-1), want: "--readers-per-stream: 99 is neither -1 nor between 100 and 1000000"},
		{base: withReaders(ok, -2), want: "--readers-per-stream: -2 is neither -1 nor between 100 and 1000000"},
	}
	for _, c := range cases {
		err := c.base.ValidateWith(c.checks...)
		if got := ""; err != nil && err.Error() != c.want || err == nil && c.want != got {
			t.Errorf("ValidateWith(%v) = %v, want %q", c.checks, err, c.want)
		}
		if err != nil && !errs.IsBadSetting(err) {
			t.Errorf("ValidateWith(%v) = %v, not marked a bad setting", c.checks, err)
		}
	}
}

func withReaders(b Base, n int) Base {
	b.ReadersPerStream = n
	return b
}
