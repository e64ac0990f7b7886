package queue

import (
	"encoding/json"
	"time"

	"github.com/cockroachdb/errors"
)

// The job-size factor (Config.SizeHandicap, MaxSizeHandicap) is off by
// default. On the Philly replay (docs/benchmarks.md) a day per GPU, at
// most a week, cuts the mean queueing delay of a cluster overloaded for
// months (a backlog of days) by a third, but on a cluster sized for the
// same load (a backlog of hours) it makes gangs wait about twice as long
// and the mean delay a third longer: a setting for the first kind of
// cluster, chosen by its operator, not a default.
const (
	// SuggestedSizeHandicap is the per-GPU handicap measured on the
	// overloaded replay: each GPU beyond the first moves a job a day later
	// in the queue order, so a 1-GPU job goes ahead of an 8-GPU one
	// submitted up to a week before it.
	SuggestedSizeHandicap = 24 * time.Hour
	// DefaultMaxSizeHandicap caps the handicap, when on, at a week,
	// Slurm's default PriorityMaxAge: no job is ever overtaken by a job
	// submitted more than a week after it.
	DefaultMaxSizeHandicap = 7 * 24 * time.Hour
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
// is ordered: (gpus − 1) × SizeHandicap, at most MaxSizeHandicap. It is
// Slurm's job-size priority factor with PriorityFavorSmall, expressed in
// queue time so that its bound is plain: a job is never ordered behind a
// job submitted more than MaxSizeHandicap after it.
func (c Config) sizeHandicap(gpus int) time.Duration {
	per, limit := time.Duration(c.SizeHandicap), time.Duration(c.MaxSizeHandicap)
	if per <= 0 || gpus <= 1 {
		return 0
	}
	if limit <= 0 {
		limit = DefaultMaxSizeHandicap
	}
	if gpus-1 >= int(limit/per) {
		return limit
	}
	return time.Duration(gpus-1) * per
}

// Validate checks the parts of a configuration with a range.
func (c Config) Validate() error {
	if c.MaxSizeHandicap < 0 {
		return errors.Newf("maxSizeHandicap %s is negative (it bounds how long a big job yields to smaller ones)",
			time.Duration(c.MaxSizeHandicap))
	}
	return nil
}
