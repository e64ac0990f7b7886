package sim

import (
	"time"
)

// Run simulates one policy on the configured stream and cluster. It is
// deterministic: the same Config (seed included) gives the same Result,
// except Wall.
func Run(cfg Config) (Result, error) {
	cfg = cfg.WithDefaults()
	if err := cfg.Validate(); err != nil {
		return Result{}, err
	}
	start := time.Now()
	e := newEngine(cfg)
	e.run()
	r := e.m.result(e)
	r.Wall = time.Since(start).Seconds()
	if cfg.Progress != nil {
		cfg.Progress(e.total, e.total)
	}
	return r, nil
}
