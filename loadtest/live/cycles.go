package live

import (
	"context"
	"io"
	"net/http"
	"regexp"
	"strconv"
	"time"

	"github.com/cockroachdb/errors"
)

// PlacementCycles is what the placement leader's cycle histogram
// (lockstep_placement_cycle_duration_seconds) counted during the load
// phase: how often it planned, and for how long each time.
type PlacementCycles struct {
	Cycles int `json:"cycles"`
	// Seconds is the cycles' wall time added up.
	Seconds float64 `json:"seconds"`
	// WallSeconds is the load phase's wall time the cycles were counted over.
	WallSeconds float64 `json:"wallSeconds"`
}

// PerSecond is how many cycles ran a second of the load phase.
func (p PlacementCycles) PerSecond() float64 {
	if p.WallSeconds <= 0 {
		return 0
	}
	return float64(p.Cycles) / p.WallSeconds
}

// MeanMs is a cycle's mean wall time.
func (p PlacementCycles) MeanMs() float64 {
	if p.Cycles == 0 {
		return 0
	}
	return p.Seconds / float64(p.Cycles) * 1000
}

// cycleSeries matches the histogram's count and sum, with any labels.
var cycleSeries = regexp.MustCompile(`(?m)^lockstep_placement_cycle_duration_seconds_(count|sum)(?:\{[^}]*\})? (\S+)$`)

// errNoCycles is cycleTotals' answer for an exposition without the
// histogram: no cycle recorded yet (the series appears with the first),
// or not a Lockstep process.
var errNoCycles = errors.New("placement cycles: no lockstep_placement_cycle_duration_seconds in the metrics")

// cycleTotals reads the histogram's count and sum from a Prometheus text
// exposition (summed over its series, should it have labels).
func cycleTotals(exposition string) (count, sum float64, err error) {
	found := false
	for _, m := range cycleSeries.FindAllStringSubmatch(exposition, -1) {
		v, perr := strconv.ParseFloat(m[2], 64)
		if perr != nil {
			return 0, 0, errors.Wrapf(perr, "placement cycles: %s", m[0])
		}
		if m[1] == "count" {
			count += v
		} else {
			sum += v
		}
		found = true
	}
	if !found {
		return 0, 0, errNoCycles
	}
	return count, sum, nil
}

// scrapeCycles reads the histogram's totals from a /metrics URL.
func scrapeCycles(ctx context.Context, url string) (count, sum float64, err error) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return 0, 0, errors.Wrap(err, "placement cycles")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, 0, errors.Wrap(err, "placement cycles")
	}
	defer func() { _ = resp.Body.Close() }()
	if resp.StatusCode != http.StatusOK {
		return 0, 0, errors.Newf("placement cycles: %s answered %s", url, resp.Status)
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
	if err != nil {
		return 0, 0, errors.Wrap(err, "placement cycles")
	}
	return cycleTotals(string(body))
}

// cyclesSpan reads placement's cycle totals at the start of the load
// phase and, by stop, the difference at its end. A cluster whose metrics
// cannot be read reports none, with a warning: the load test goes on.
type cyclesSpan struct {
	cfg        *Config
	count, sum float64
	at         time.Time
	ok         bool
}

func startCycles(ctx context.Context, cfg *Config) *cyclesSpan {
	c := &cyclesSpan{cfg: cfg, at: time.Now()}
	if cfg.MetricsURL == "" {
		return c
	}
	var err error
	// A cluster just started may have planned nothing yet: its totals
	// are zero until the first cycle records one.
	if c.count, c.sum, err = scrapeCycles(ctx, cfg.MetricsURL); err != nil && !errors.Is(err, errNoCycles) {
		cfg.Log.Warn("placement cycles not counted", "err", err)
		return c
	}
	c.ok = true
	return c
}

func (c *cyclesSpan) stop(ctx context.Context) *PlacementCycles {
	if !c.ok {
		return nil
	}
	wall := time.Since(c.at).Seconds()
	count, sum, err := scrapeCycles(ctx, c.cfg.MetricsURL)
	if err != nil {
		c.cfg.Log.Warn("placement cycles not counted", "err", err)
		return nil
	}
	if count < c.count {
		// Another process answered (a restart): the totals started again.
		c.cfg.Log.Warn("placement cycles not counted: the totals went down", "before", c.count, "after", count)
		return nil
	}
	return &PlacementCycles{Cycles: int(count - c.count), Seconds: sum - c.sum, WallSeconds: wall}
}
