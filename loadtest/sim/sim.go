package sim

import (
	"syscall"
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
	start, cpu0 := time.Now(), cpuTime()
	e := newEngine(cfg)
	e.run()
	r := e.m.result(e)
	r.Wall, r.CPU = time.Since(start).Seconds(), (cpuTime() - cpu0).Seconds()
	if cfg.Progress != nil {
		cfg.Progress(e.total, e.total)
	}
	return r, nil
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
