package main

import "runtime/debug"

// defaultGCPercent is the GOGC every lockstep process runs with unless the
// GOGC environment variable is set. The services allocate in proportion to
// the messages and watch events they decode, while their live heaps are
// small (tens of MiB per service), so the Go default of 100 spends CPU on
// collections that memory is cheap enough to avoid: in the 1,000-node load
// test at 220 jobs/s, GOGC=300 cut the CPU per job by 16 % (9.9 → 8.3 ms)
// for a peak heap of 583 MiB instead of 286 MiB in the one process that
// holds NATS, etcd and every service (docs/benchmarks.md). Set GOGC (and
// GOMEMLIMIT) to trade the other way.
const defaultGCPercent = 400

// tuneGC applies defaultGCPercent unless GOGC is set.
func tuneGC(getenv func(string) string) {
	if getenv("GOGC") == "" {
		debug.SetGCPercent(defaultGCPercent)
	}
}
