package queue

import (
	"encoding/json"
	"math"
	"time"

	"github.com/cockroachdb/errors"
)

// The job-size factor (Config.SizeHandicap, MaxSizeHandicap,
// SizeHandicapBacklog) is on by default, scaled to the load: a job yields a
// day per GPU beyond its first, at most a week, and at most 16 times the
// small-job backlog (Input.SmallBacklog: how long the cluster would take to
// run the pending 1-GPU jobs' time limits). On a cluster overloaded for
// months (the Philly replay on 1,024 GPUs, docs/benchmarks.md) the backlog
// is days and the cap a week: 1-GPU jobs, which fill the gaps gangs leave,
// stop waiting behind every gang submitted before them, and the mean
// queueing delay falls by 40 %. On a cluster sized for the load (2,048
// GPUs) the backlog is minutes to hours, so big jobs yield for hours, not
// a week: a fixed week made gangs wait twice as long there; scaled, they
// wait about as long as with no handicap, and the mean delay is lower.
const (
	// DefaultSizeHandicap is the per-GPU handicap when Config.SizeHandicap
	// is 0: each GPU beyond the first moves a job a day later in the queue
	// order.
	DefaultSizeHandicap = 24 * time.Hour
	// DefaultMaxSizeHandicap caps the handicap at a week, Slurm's default
	// PriorityMaxAge: no job is ever overtaken by a job submitted more
	// than a week after it.
	DefaultMaxSizeHandicap = 7 * 24 * time.Hour
	// DefaultSizeHandicapBacklog is Config.SizeHandicapBacklog's default.
	// On the Philly replay 8 left the mean delay 23 minutes short of
	// per-pod placement's; 16 and 32 met it at both cluster sizes.
	DefaultSizeHandicapBacklog = 16.0
)

// Duration is a time.Duration that reads and writes JSON (and so the
// queue policy file's YAML) as a string such as "24h" or "90m".
type Duration time.Duration

// MarshalJSON writes the duration as a string.
func (d Duration) MarshalJSON() ([]byte, error) {
	return json.Marshal(time.Duration(d).String())
}

// UnmarshalJSON reads a string time.ParseDuration accepts.
func (d *Duration) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return errors.Newf("duration %s: want a string such as \"24h\"", b)
	}
	v, err := time.ParseDuration(s)
	if err != nil {
		return errors.Wrapf(err, "duration %q", s)
	}
	*d = Duration(v)
	return nil
}

// sizeHandicap is how much later than its submission a job of gpus GPUs
// is ordered: (gpus − 1) × SizeHandicap, at most limit (handicapLimit).
// It is Slurm's job-size priority factor with PriorityFavorSmall, expressed
// in queue time so that its bound is plain: a job is never ordered behind
// a job submitted more than limit after it.
func (c Config) sizeHandicap(gpus int, limit time.Duration) time.Duration {
	per := time.Duration(c.SizeHandicap)
	if per == 0 {
		per = DefaultSizeHandicap
	}
	if per < 0 || gpus <= 1 || limit <= 0 {
		return 0
	}
	if gpus-1 >= int(limit/per) {
		return limit
	}
	return time.Duration(gpus-1) * per
}

// handicapLimit is the plan's cap on the size handicap: MaxSizeHandicap
// (0: the default), and at most SizeHandicapBacklog (0: the default;
// negative: no such bound) × the small-job backlog.
func (in Input) handicapLimit() time.Duration {
	limit := time.Duration(in.Config.MaxSizeHandicap)
	if limit <= 0 {
		limit = DefaultMaxSizeHandicap
	}
	k := in.Config.SizeHandicapBacklog
	if k == 0 {
		k = DefaultSizeHandicapBacklog
	}
	if k > 0 {
		if b := float64(in.SmallBacklog()) * k; b < float64(limit) {
			limit = time.Duration(b)
		}
	}
	return limit
}

// JobWork is a job's share of the backlog: GPUs × time limit, in whole
// GPU-seconds; 0 without a time limit. Integer, so that a caller can keep
// a sum of it as jobs arrive and start and get exactly what a sum over
// the pending list gives (the simulator does, for Input.SmallWork).
func JobWork(j PendingJob) int64 {
	if j.TimeLimit <= 0 {
		return 0
	}
	return int64(j.GPUs()) * int64(j.TimeLimit/time.Second)
}

// SmallBacklog is how long the GPUs of the cluster's up nodes
// (Snapshot.Capacity) would take to run the time limits of the pending
// 1-GPU jobs: SmallWork, or when that is 0 the sum of JobWork over the
// 1-GPU jobs of Pending. Jobs without a time limit count nothing: with
// none, the backlog is 0. With work but no GPUs up it is unbounded.
func (in Input) SmallBacklog() time.Duration {
	w := in.SmallWork
	if w == 0 {
		for _, j := range in.Pending {
			if j.GPUs() == 1 {
				w += JobWork(j)
			}
		}
	}
	if w <= 0 {
		return 0
	}
	gpus := 0
	if in.Snapshot != nil {
		gpus, _ = in.Snapshot.Capacity()
	}
	if gpus == 0 {
		return time.Duration(math.MaxInt64)
	}
	return time.Duration(float64(w) / float64(gpus) * float64(time.Second)).Truncate(time.Second)
}

// Validate checks the parts of a configuration with a range.
func (c Config) Validate() error {
	if math.IsNaN(c.SizeHandicapBacklog) || math.IsInf(c.SizeHandicapBacklog, 0) {
		return errors.Newf("sizeHandicapBacklog %v is not a number", c.SizeHandicapBacklog)
	}
	for _, f := range []struct {
		name string
		v    float64
	}{{"stretch.leaf", c.Stretch.Leaf}, {"stretch.spine", c.Stretch.Spine}} {
		if math.IsNaN(f.v) || f.v > 10 {
			return errors.Newf("%s %v: want a slowdown per extra switch of at most 10 (0: the default, negative: none)", f.name, f.v)
		}
	}
	if w := c.Stretch.Weight; math.IsNaN(w) || w < 0 || (w > 0 && w < 1) || w > 10000 {
		return errors.Newf("stretch.weight %v: want 1 to 10000 (how many times its own slowdown a spread placement counts; 0: the default, %d)", w, DefaultSpreadWeight)
	}
	if c.MaxSizeHandicap < 0 {
		return errors.Newf("maxSizeHandicap %s is negative (it bounds how long a big job yields to smaller ones)",
			time.Duration(c.MaxSizeHandicap))
	}
	return nil
}
