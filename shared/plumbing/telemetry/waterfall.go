package telemetry

import (
	"slices"
	"sort"
	"time"
)

// JobTrace is the spans of one trace that involves a job, oldest first.
type JobTrace struct {
	ID    string
	Spans []SpanRecord
}

// JobTraces finds the traces with a span tagged with the job's ID (one,
// unless the trace was cut, e.g. a sampler dropped part of it), each with
// every span of that trace, oldest trace first. `lockstep trace` and the
// dashboard's job page draw their waterfalls from it.
func JobTraces(all []SpanRecord, jobID string) []JobTrace {
	ids := map[string]bool{}
	for _, s := range all {
		if s.Attr(string(AttrJobID)) == jobID {
			ids[s.TraceID] = true
		}
	}
	byTrace := map[string][]SpanRecord{}
	seen := map[string]bool{}
	for _, s := range all {
		if ids[s.TraceID] && !seen[s.SpanID] {
			seen[s.SpanID] = true
			byTrace[s.TraceID] = append(byTrace[s.TraceID], s)
		}
	}
	out := make([]JobTrace, 0, len(byTrace))
	for id, spans := range byTrace {
		sort.SliceStable(spans, func(i, j int) bool { return spans[i].Start.Before(spans[j].Start) })
		out = append(out, JobTrace{ID: id, Spans: spans})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Spans[0].Start.Before(out[j].Spans[0].Start) })
	return out
}

// Bounds is when the trace's first span started and how long it lasts to
// its last span's end (at least a microsecond, so shares of it are finite).
func (t JobTrace) Bounds() (start time.Time, total time.Duration) {
	if len(t.Spans) == 0 {
		return time.Time{}, time.Microsecond
	}
	t0, t1 := t.Spans[0].Start, t.Spans[0].End
	for _, s := range t.Spans {
		if s.Start.Before(t0) {
			t0 = s.Start
		}
		if s.End.After(t1) {
			t1 = s.End
		}
	}
	return t0, max(t1.Sub(t0), time.Microsecond)
}

// SpanRow is one line of a waterfall: a span and how deep it nests.
type SpanRow struct {
	Span  SpanRecord
	Depth int
}

// Rows orders the trace's spans depth-first, children by start time.
// Spans whose parent is not in the trace (the submitter's own span) are
// roots.
func (t JobTrace) Rows() []SpanRow {
	spans := slices.Clone(t.Spans)
	slices.SortStableFunc(spans, func(a, b SpanRecord) int { return a.Start.Compare(b.Start) })
	present := map[string]bool{}
	for _, s := range spans {
		present[s.SpanID] = true
	}
	children := map[string][]SpanRecord{}
	var roots []SpanRecord
	for _, s := range spans {
		if s.ParentSpanID == "" || !present[s.ParentSpanID] {
			roots = append(roots, s)
			continue
		}
		children[s.ParentSpanID] = append(children[s.ParentSpanID], s)
	}
	rows := make([]SpanRow, 0, len(spans))
	var walk func(s SpanRecord, depth int)
	walk = func(s SpanRecord, depth int) {
		rows = append(rows, SpanRow{Span: s, Depth: depth})
		for _, c := range children[s.SpanID] {
			walk(c, depth+1)
		}
	}
	for _, r := range roots {
		walk(r, 0)
	}
	return rows
}
