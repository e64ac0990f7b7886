package trace

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"time"

	"github.com/cockroachdb/errors"
)

// Shape is a gang shape: Nodes × GPUsPerNode.
type Shape struct {
	Nodes, GPUsPerNode int
}

func (s Shape) String() string { return fmt.Sprintf("%dx%d", s.Nodes, s.GPUsPerNode) }

// Weighted is one entry of a mix.
type Weighted[T any] struct {
	Value  T
	Weight float64
}

// Synthetic describes a generated job stream: open-loop arrivals at a
// fixed rate, bounded in count and in time.
type Synthetic struct {
	// Rate is arrivals per second.
	Rate float64
	// Count bounds the number of jobs; Span bounds the last submission
	// (0: no bound; at least one of them must be set).
	Count int
	Span  time.Duration
	// Poisson draws exponential inter-arrival times with mean 1/Rate;
	// otherwise arrivals are exactly 1/Rate apart.
	Poisson bool
	// Sizes and Durations are the gang-shape and run-time mixes.
	Sizes     []Weighted[Shape]
	Durations []Weighted[time.Duration]
	// ConstrainedShare of multi-node jobs ask for MaxSwitches=1 (one leaf),
	// waiting up to SwitchWait for it.
	ConstrainedShare float64
	SwitchWait       time.Duration
	// Prefix starts every job ID; IDs are <prefix>-<n>.
	Prefix string
	Seed   uint64
}

// Generate draws the stream. The same Synthetic (seed included) always
// gives the same jobs.
func (s Synthetic) Generate() ([]Job, error) {
	switch {
	case s.Rate <= 0:
		return nil, errors.Newf("rate %g: must be positive", s.Rate)
	case s.Count <= 0 && s.Span <= 0:
		return nil, errors.New("a synthetic stream needs a job count or a time span")
	case len(s.Sizes) == 0 || len(s.Durations) == 0:
		return nil, errors.New("a synthetic stream needs a size mix and a duration mix")
	}
	r := rand.New(rand.NewPCG(s.Seed, 0x10adbeef))
	prefix := s.Prefix
	if prefix == "" {
		prefix = "lt"
	}
	var jobs []Job
	t := 0.0
	for i := 0; s.Count <= 0 || i < s.Count; i++ {
		at := time.Duration(t * float64(time.Second))
		if s.Span > 0 && at > s.Span {
			break
		}
		shape := pick(r, s.Sizes)
		j := Job{
			ID: fmt.Sprintf("%s-%06d", prefix, i), Submit: at, Duration: pick(r, s.Durations),
			Nodes: shape.Nodes, GPUsPerNode: shape.GPUsPerNode,
		}
		if j.Nodes > 1 && r.Float64() < s.ConstrainedShare {
			j.MaxSwitches, j.SwitchWait = 1, s.SwitchWait
		}
		jobs = append(jobs, j)
		if s.Poisson {
			t += r.ExpFloat64() / s.Rate
		} else {
			t += 1 / s.Rate
		}
	}
	return jobs, nil
}

func pick[T any](r *rand.Rand, mix []Weighted[T]) T {
	total := 0.0
	for _, w := range mix {
		total += w.Weight
	}
	x := r.Float64() * total
	for _, w := range mix {
		if x < w.Weight {
			return w.Value
		}
		x -= w.Weight
	}
	return mix[len(mix)-1].Value
}

// ParseSizes reads a size mix: "1x8:50,2x8:30,4x8:20" (nodes x GPUs per
// node : weight; a missing weight is 1).
func ParseSizes(s string) ([]Weighted[Shape], error) {
	return parseMix(s, func(v string) (Shape, error) {
		a, b, ok := strings.Cut(v, "x")
		n, err1 := strconv.Atoi(a)
		g, err2 := strconv.Atoi(b)
		if !ok || err1 != nil || err2 != nil || n < 1 || g < 1 || g > 64 {
			return Shape{}, errors.Newf("size %q: want NODESxGPUS, e.g. 2x8", v)
		}
		return Shape{Nodes: n, GPUsPerNode: g}, nil
	})
}

// ParseDurations reads a duration mix: "1s:50,2s:30,5s:20".
func ParseDurations(s string) ([]Weighted[time.Duration], error) {
	return parseMix(s, func(v string) (time.Duration, error) {
		d, err := time.ParseDuration(v)
		if err != nil || d <= 0 {
			return 0, errors.Newf("duration %q: want a positive Go duration, e.g. 2s", v)
		}
		return d, nil
	})
}

func parseMix[T any](s string, parse func(string) (T, error)) ([]Weighted[T], error) {
	var out []Weighted[T]
	for _, item := range strings.Split(s, ",") {
		item = strings.TrimSpace(item)
		if item == "" {
			continue
		}
		v, w, hasW := strings.Cut(item, ":")
		val, err := parse(v)
		if err != nil {
			return nil, err
		}
		weight := 1.0
		if hasW {
			if weight, err = strconv.ParseFloat(w, 64); err != nil || weight < 0 || math.IsInf(weight, 0) {
				return nil, errors.Newf("weight %q of %q: want a non-negative number", w, v)
			}
		}
		out = append(out, Weighted[T]{Value: val, Weight: weight})
	}
	if len(out) == 0 {
		return nil, errors.Newf("empty mix %q", s)
	}
	return out, nil
}
