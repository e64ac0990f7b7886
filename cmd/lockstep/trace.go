//go:build !lockstep_client

package main

import (
	"fmt"
	"io"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/cockroachdb/errors"
	"github.com/spf13/cobra"

	"github.com/lockstep-dev/lockstep/deploy/devcluster"
	"github.com/lockstep-dev/lockstep/shared/plumbing/telemetry"
)

// trace prints a job's trace from the span file `lockstep dev` writes in
// its data dir: no collector and no running cluster needed. (With services
// exporting over OTLP, the same trace is in the collector's UI.)
func (a *app) trace(cmd *cobra.Command) runE {
	cmd.Long = longHelp(`
		Print a job's trace as a waterfall: every span of every service, from the
		submission to the last rank, with its start offset and duration. Reads the
		spans ` + "`lockstep dev`" + ` keeps in its data dir (spans.jsonl).`)
	dataDir := cmd.Flags().String("data-dir", devcluster.DefaultDataDir(), "`DIR` where lockstep dev keeps its data (its --data-dir)")
	width := cmd.Flags().Int("width", 40, "width of the bars")
	return func(_ *cobra.Command, args []string) error {
		id := args[0]
		if *width < 10 || *width > 200 {
			return usagef("--width: %d is not between 10 and 200", *width)
		}
		file := devcluster.SpanFile(*dataDir)
		all, err := telemetry.ReadSpanFile(file)
		if err != nil {
			return errors.WithHint(err, "spans are recorded by `lockstep dev`; give its --data-dir")
		}
		traces := telemetry.JobTraces(all, id)
		if len(traces) == 0 {
			return &exitError{code: 1, msg: fmt.Sprintf("no spans of job %s in %s (spans are written about a second after they end)", id, file)}
		}
		if a.structured() {
			var spans []telemetry.SpanRecord
			for _, t := range traces {
				spans = append(spans, t.Spans...)
			}
			return a.writeData(spans)
		}
		for i, t := range traces {
			if i > 0 {
				fmt.Fprintln(a.env.stdout)
			}
			printWaterfall(a.env.stdout, id, t, all, *width)
		}
		return nil
	}
}

func printWaterfall(w io.Writer, jobID string, t telemetry.JobTrace, all []telemetry.SpanRecord, width int) {
	rows := t.Rows()
	t0, total := t.Bounds()
	byID := map[string]telemetry.SpanRecord{}
	for _, s := range all {
		byID[s.SpanID] = s
	}
	fmt.Fprintf(w, "trace %s  job %s  %d spans  %s\n\n", clean(t.ID), clean(jobID), len(t.Spans), fmtDur(total))

	type line struct{ svc, name, start, dur, bar string }
	lines := []line{{"SERVICE", "SPAN", "START", "DURATION", ""}}
	for _, r := range rows {
		s := r.Span
		name := strings.Repeat("  ", r.Depth) + s.Name + spanNote(s)
		if s.Status == "error" {
			name += " ✗"
		}
		lines = append(lines, line{svc: clean(serviceOf(s)), name: clean(name), start: "+" + fmtDur(s.Start.Sub(t0)),
			dur: fmtDur(s.End.Sub(s.Start)), bar: bar(s.Start.Sub(t0), s.End.Sub(s.Start), total, width)})
		for _, l := range s.Links {
			if ls, ok := byID[l.SpanID]; ok {
				lines = append(lines, line{svc: clean(serviceOf(ls)), name: clean(strings.Repeat("  ", r.Depth+1) + "↔ link: " + ls.Name + " (trace " + short(l.TraceID) + ")"),
					start: "+" + fmtDur(ls.Start.Sub(t0)), dur: fmtDur(ls.End.Sub(ls.Start))})
			}
		}
	}
	var ws [4]int
	for _, l := range lines {
		for i, c := range []string{l.svc, l.name, l.start, l.dur} {
			ws[i] = max(ws[i], utf8.RuneCountInString(c))
		}
	}
	for _, l := range lines {
		fmt.Fprintf(w, "%s  %s  %s  %s  %s\n", pad(l.svc, ws[0], false), pad(l.name, ws[1], false),
			pad(l.start, ws[2], true), pad(l.dur, ws[3], true), l.bar)
	}
}

// serviceOf is a span's service without the "lockstep-" prefix; agents
// show their node.
func serviceOf(s telemetry.SpanRecord) string {
	svc := strings.TrimPrefix(s.Service, "lockstep-")
	if svc == "agent" {
		if n := s.Attr(string(telemetry.AttrNode)); n != "" {
			return svc + " " + n
		}
		if s.Instance != "" {
			return svc + " " + s.Instance
		}
	}
	return svc
}

// spanNote adds what the name leaves out: the event or report type.
func spanNote(s telemetry.SpanRecord) string {
	for _, k := range []string{string(telemetry.AttrEventType), string(telemetry.AttrReport)} {
		if v := s.Attr(k); v != "" {
			return " (" + v + ")"
		}
	}
	return ""
}

// bar draws a span's extent on a line of width cells.
func bar(start, dur, total time.Duration, width int) string {
	from := int(float64(start) / float64(total) * float64(width))
	n := int(float64(dur)/float64(total)*float64(width) + 0.5)
	from = min(max(from, 0), width-1)
	n = min(max(n, 1), width-from)
	return "│" + strings.Repeat(" ", from) + strings.Repeat("█", n) + strings.Repeat(" ", width-from-n) + "│"
}

func pad(s string, w int, right bool) string {
	gap := strings.Repeat(" ", max(w-utf8.RuneCountInString(s), 0))
	if right {
		return gap + s
	}
	return s + gap
}

func fmtDur(d time.Duration) string {
	switch {
	case d < time.Millisecond:
		return fmt.Sprintf("%.2fms", float64(d)/float64(time.Millisecond))
	case d < time.Second:
		return fmt.Sprintf("%.1fms", float64(d)/float64(time.Millisecond))
	case d < time.Minute:
		return fmt.Sprintf("%.2fs", d.Seconds())
	}
	return d.Round(time.Second).String()
}

func short(id string) string {
	if len(id) > 8 {
		return id[:8] + "…"
	}
	return id
}
