package view

import (
	"strings"
	"time"

	"github.com/lockstep-dev/lockstep/shared/plumbing/telemetry"
)

// maxWaterfallRows bounds the job page's waterfall: a long-lived job's
// trace gains spans with every report and event, and a page of thousands
// of bars helps no one (the whole trace is in the collector's UI and
// `lockstep trace`).
const maxWaterfallRows = 300

// SpanBar is one span on the job page's waterfall: where it starts and how
// wide it is, in percent of the trace.
type SpanBar struct {
	Service, Name string
	Depth         int
	Offset, Took  string
	X, W          float64
	Error         bool
}

// Waterfall is a job's trace as the job page draws it.
type Waterfall struct {
	TraceID string
	Total   string
	Bars    []SpanBar
	// Cut is how many spans were left off past maxWaterfallRows.
	Cut int
}

// BuildWaterfall lays out the job's latest trace (nil when there is none).
func BuildWaterfall(traces []telemetry.JobTrace) *Waterfall {
	if len(traces) == 0 {
		return nil
	}
	t := traces[len(traces)-1]
	t0, total := t.Bounds()
	w := &Waterfall{TraceID: t.ID, Total: total.Round(time.Millisecond).String()}
	rows := t.Rows()
	if len(rows) > maxWaterfallRows {
		w.Cut = len(rows) - maxWaterfallRows
		rows = rows[:maxWaterfallRows]
	}
	for _, r := range rows {
		s := r.Span
		start, took := s.Start.Sub(t0), max(s.End.Sub(s.Start), 0)
		w.Bars = append(w.Bars, SpanBar{
			Service: strings.TrimPrefix(s.Service, "lockstep-"), Name: s.Name, Depth: min(r.Depth, 8),
			Offset: "+" + start.Round(time.Millisecond).String(), Took: took.Round(time.Microsecond).String(),
			X: share(start, total), W: max(share(took, total), 0.2), Error: s.Status == "error",
		})
	}
	return w
}

// share is d as a percentage of total, within [0, 100].
func share(d, total time.Duration) float64 {
	return min(max(100*float64(d)/float64(total), 0), 100)
}
