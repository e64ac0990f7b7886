package containers

import (
	"context"
	"time"

	"github.com/cockroachdb/errors"
)

// ErrNoEngine says no container engine answers here: tests that need one
// skip on it.
var ErrNoEngine = errors.New("no container engine answers")

// ProbeEngine connects to the local engine ($DOCKER_HOST, else the
// engine's default socket) and builds the probe image as tag
// (BuildProbe): what the tests of container jobs start from. An error
// marked ErrNoEngine means there is no engine to test against; any other
// is a failure. The caller closes the engine.
func ProbeEngine(ctx context.Context, tag string) (*Docker, error) {
	d, err := NewDocker("")
	if err != nil {
		return nil, errors.Mark(err, ErrNoEngine)
	}
	pctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if err := d.Ping(pctx); err != nil {
		_ = d.Close()
		return nil, errors.Mark(err, ErrNoEngine)
	}
	bctx, cancel := context.WithTimeout(ctx, 3*time.Minute)
	defer cancel()
	if err := BuildProbe(bctx, d, tag); err != nil {
		_ = d.Close()
		return nil, err
	}
	return d, nil
}
