package client

import (
	"context"

	"github.com/lockstep-dev/lockstep/shared/plumbing/bus"
	"github.com/lockstep-dev/lockstep/shared/plumbing/jobs"
)

// New makes a client on an existing connection, acting as user ("" for
// none): for tests and tools that connect their own way. Close closes b.
func New(ctx context.Context, b *bus.Bus, user string) (*Client, error) {
	js, err := jobs.Open(ctx, b.JS)
	if err != nil {
		return nil, err
	}
	return Over(b, js, user), nil
}

// Over makes a client on a connection and a job-record store already
// open, acting as user: what a service serving people (the dashboard)
// makes per request, without a round trip to the server that could fail.
func Over(b *bus.Bus, js *jobs.Store, user string) *Client {
	return &Client{bus: b, jobs: js, User: user}
}
