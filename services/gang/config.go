package gang

import (
	"cmp"
	"time"

	"github.com/lockstep-dev/lockstep/shared/plumbing/bus"
	"github.com/lockstep-dev/lockstep/shared/plumbing/config"
	"github.com/lockstep-dev/lockstep/shared/plumbing/store"
)

// Config configures a gang replica.
type Config struct {
	config.Base
	// ReservationTTL is the TTL of this replica's reservation lease: every
	// gang it reserved and that has not yet passed the launch barrier is
	// released this long after the replica dies.
	ReservationTTL time.Duration
	// LaunchTimeout bounds reserved → every rank running.
	LaunchTimeout time.Duration
	// Workers is how many proposals (and, separately, reports) one replica
	// handles at once. A reservation is latency-bound, not CPU-bound: an
	// etcd transaction (raft and fsync; etcd batches concurrent ones into
	// one commit), a job-record compare-and-set and an event publish. So
	// throughput is workers ÷ latency (Little's law), and the latency grows
	// with load: 300 reservations/s at a few hundred milliseconds each
	// needs over a hundred in flight.
	Workers int
	// ReconcileInterval is how often etcd and job records are re-checked.
	ReconcileInterval time.Duration
	// ReportGather bounds how long the first reports of a gang wait for
	// the rest before they are recorded as progress (gather.go; default
	// DefaultReportGather).
	ReportGather time.Duration
}

// Defaults fills in the settings left zero (config.Start calls it, after
// Validate).
func (c *Config) Defaults() {
	c.ReservationTTL = cmp.Or(c.ReservationTTL, store.DefaultReservationTTL)
	c.LaunchTimeout = cmp.Or(c.LaunchTimeout, store.DefaultLaunchTimeout)
	c.Workers = cmp.Or(c.Workers, DefaultWorkers)
	c.ReconcileInterval = cmp.Or(c.ReconcileInterval, config.ReconcileInterval)
	c.ReportGather = cmp.Or(c.ReportGather, DefaultReportGather)
}

// Validate checks the gang-specific settings.
func (c *Config) Validate() error {
	return c.Base.ValidateWith(
		config.LeaseTTL("--reservation-ttl", c.ReservationTTL),
		config.Require(c.Workers >= 0 && c.Workers <= MaxWorkers, "--workers: %d is outside 1..%d", c.Workers, MaxWorkers),
		config.LaunchTimeout("--launch-timeout", c.LaunchTimeout),
		config.Require(c.ReportGather >= 0 && c.ReportGather <= time.Second, "report gather: %s is outside 0..1s", c.ReportGather),
	)
}

// DefaultWorkers is the default of Config.Workers. On the CI machine
// (docs/benchmarks.md, session 5) 8 workers held 1,000 virtual nodes to
// about 130 reservations/s with the CPU half idle; 128 reached 300/s.
const DefaultWorkers = 128

// MaxWorkers bounds Config.Workers: the work consumer lets at most
// bus.MaxAckPending messages be in flight across all replicas.
const MaxWorkers = bus.MaxAckPending / 2
