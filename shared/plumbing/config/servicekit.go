package config

import (
	"context"
	"time"

	"github.com/cockroachdb/errors"

	"github.com/lockstep-dev/lockstep/shared/contract/errs"
)

// Serve is the whole of a service's Run: it starts the service (Start,
// with opts), hands what it started to serve, and closes it once serve
// returns. Start's error comes back as it is.
func Serve(ctx context.Context, service string, cfg Settings, serve func(st *Started) error, opts ...StartOption) error {
	st, err := Start(ctx, service, cfg, opts...)
	if err != nil {
		return err
	}
	defer st.Close()
	return serve(st)
}

// ValidateWith is a service's Validate: the common fields first (Validate),
// then the service's own checks, each nil when its setting is fine (see
// Require); the first problem is the error.
func (b *Base) ValidateWith(checks ...error) error {
	if err := b.Validate(); err != nil {
		return err
	}
	for _, err := range checks {
		if err != nil {
			return errs.MarkBadSetting(err)
		}
	}
	return nil
}

// Require is one check for ValidateWith: nil when ok, else the error
// format and args say.
func Require(ok bool, format string, args ...any) error {
	if ok {
		return nil
	}
	return errors.Newf(format, args...)
}

// LeaseTTL checks a flag that sets an etcd lease's TTL: 0 (the default),
// or whole seconds (etcd leases are) of at least 2s.
func LeaseTTL(flag string, ttl time.Duration) error {
	if ttl != 0 && ttl < 2*time.Second {
		return errors.Newf("%s: %s is below the 2s minimum", flag, ttl)
	}
	return Require(ttl%time.Second == 0, "%s: %s is not whole seconds (etcd leases are)", flag, ttl)
}

// LaunchTimeout checks a gang launch deadline given under flag: 0 (the
// default) or at least a second. dev checks its own flag with it before
// anything starts, and gang its --launch-timeout.
func LaunchTimeout(flag string, d time.Duration) error {
	return Require(d == 0 || d >= time.Second, "%s: %s is below the 1s minimum", flag, d)
}
