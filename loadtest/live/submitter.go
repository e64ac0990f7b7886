package live

import (
	"context"
	"strings"

	"github.com/cockroachdb/errors"

	"github.com/lockstep-dev/lockstep/shared/contract/subjects"
	"github.com/lockstep-dev/lockstep/shared/plumbing/bus"
	"github.com/lockstep-dev/lockstep/shared/plumbing/connection"
)

// connectSubmitter opens the connection the jobs are published on: its own,
// as a pipeline has, presenting SubmitCreds when set and the harness's
// credentials otherwise. It has its own connection with or without auth,
// so that both runs of a comparison differ only in auth.
func connectSubmitter(ctx context.Context, cfg Config) (*bus.Bus, error) {
	creds := cfg.Credentials
	if cfg.SubmitCreds != "" {
		creds.Creds = cfg.SubmitCreds
	}
	b, err := bus.Connect(ctx, cfg.NATSURL, "lockstep-loadtest-submit", creds.BusOptions()...)
	if err != nil {
		return nil, errors.Wrap(err, "connect the submitter")
	}
	return b, nil
}

// submitSubject is where b submits: its user's own subject when its creds
// name one (the only submit subject a cluster with auth lets a user
// publish on, and where admission takes the owner from), the shared one
// without creds. The same rule as shared/contract/client's.
func submitSubject(b *bus.Bus) string {
	if user := b.Identity().Name; user != "" {
		return subjects.SubmitAs(user)
	}
	return subjects.Submit
}

// describeAuth says what c presents, for the report: "" for nothing.
func describeAuth(c connection.Credentials) string {
	var parts []string
	if c.Creds != "" {
		parts = append(parts, "NATS creds")
	}
	if c.TLSCA != "" || c.TLSCert != "" {
		parts = append(parts, "NATS TLS")
	}
	if c.EtcdCert != "" {
		parts = append(parts, "etcd TLS with a client certificate")
	} else if c.EtcdCA != "" {
		parts = append(parts, "etcd TLS")
	}
	return strings.Join(parts, ", ")
}
