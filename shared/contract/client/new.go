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
	return &Client{bus: b, jobs: js, User: user}, nil
}
