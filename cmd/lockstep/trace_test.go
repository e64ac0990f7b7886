package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lockstep-dev/lockstep/deploy/devcluster"
	"github.com/lockstep-dev/lockstep/shared/plumbing/telemetry"
)

// writeSpans writes a span file as `lockstep dev` does.
func writeSpans(t *testing.T, dir string, spans []telemetry.SpanRecord) {
	t.Helper()
	var b strings.Builder
	for _, s := range spans {
		line, _ := json.Marshal(s)
		b.Write(line)
		b.WriteByte('\n')
	}
	b.WriteString("{cut short\n") // a torn last write is skipped
	if err := os.WriteFile(devcluster.SpanFile(dir), []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestTraceWaterfall(t *testing.T) {
	dir := t.TempDir()
	t0 := time.Date(2026, 12, 2, 11, 0, 0, 0, time.UTC)
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	const tr = "4bf92f3577b34da6a3ce929d0e0e4736"
	job := map[string]any{"lockstep.job.id": "hello-1"}
	writeSpans(t, dir, []telemetry.SpanRecord{
		{TraceID: tr, SpanID: "a1", Name: "process lockstep.v1.jobs.submit", Kind: "consumer", Service: "lockstep-admission", Start: at(0), End: at(5), Attributes: job},
		{TraceID: tr, SpanID: "a2", ParentSpanID: "a1", Name: "send lockstep.v1.events.job.{jobId}.{type}", Kind: "producer", Service: "lockstep-admission", Start: at(4), End: at(5),
			Attributes: map[string]any{"lockstep.event.type": "admitted"}},
		{TraceID: tr, SpanID: "g1", ParentSpanID: "a1", Name: "gang.reserve", Kind: "internal", Service: "lockstep-gang", Start: at(10), End: at(20)},
		{TraceID: tr, SpanID: "n1", ParentSpanID: "g1", Name: "agent.run", Kind: "internal", Service: "lockstep-agent", Instance: "node-01", Start: at(30), End: at(2030),
			Attributes: map[string]any{"lockstep.node": "node-01"}},
		{TraceID: tr, SpanID: "d1", ParentSpanID: "a1", Name: "drain.cancel", Kind: "internal", Service: "lockstep-drain", Start: at(2040), End: at(2050),
			Status: "error", Links: []telemetry.SpanLink{{TraceID: "ffff", SpanID: "r1"}}},
		{TraceID: "ffff", SpanID: "r1", Name: "process lockstep.v1.jobs.cancel", Kind: "consumer", Service: "lockstep-drain", Start: at(2039), End: at(2051)},
		{TraceID: "other", SpanID: "o1", Name: "process lockstep.v1.jobs.submit", Kind: "consumer", Service: "lockstep-admission", Start: at(0), End: at(1),
			Attributes: map[string]any{"lockstep.job.id": "someone-else"}},
	})
	out, errOut, code := cli(t, "trace", "hello-1", "--data-dir", dir, "--width", "20")
	if code != 0 {
		t.Fatalf("trace exit %d: %s", code, errOut)
	}
	lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
	if !strings.HasPrefix(lines[0], "trace "+tr+"  job hello-1  5 spans  2.05s") {
		t.Errorf("header %q", lines[0])
	}
	body := strings.Join(lines[2:], "\n")
	for _, want := range []string{
		"admission      process lockstep.v1.jobs.submit",
		"  send lockstep.v1.events.job.{jobId}.{type} (admitted)",
		"agent node-01",
		"      agent.run",
		"+30.0ms",
		"2.00s",
		"drain.cancel ✗",
		"↔ link: process lockstep.v1.jobs.cancel (trace ffff)",
		"│" + strings.Repeat("█", 1) + strings.Repeat(" ", 19) + "│",
	} {
		if !strings.Contains(body, want) {
			t.Errorf("waterfall lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "someone-else") || strings.Count(body, "process lockstep.v1.jobs.submit") != 1 {
		t.Errorf("another job's trace leaked in:\n%s", out)
	}
	// Depth-first: gang.reserve's child comes before drain.cancel.
	if strings.Index(body, "agent.run") > strings.Index(body, "drain.cancel") {
		t.Errorf("rows not depth-first:\n%s", out)
	}

	out, _, code = cli(t, "trace", "hello-1", "--data-dir", dir, "-o", "json")
	var recs []telemetry.SpanRecord
	if code != 0 || json.Unmarshal([]byte(out), &recs) != nil || len(recs) != 5 {
		t.Errorf("-o json: exit %d, %d spans: %s", code, len(recs), out)
	}
	if _, errOut, code := cli(t, "trace", "nope", "--data-dir", dir); code != 1 || !strings.Contains(errOut, "no spans of job nope") {
		t.Errorf("unknown job: exit %d %q", code, errOut)
	}
	if _, errOut, code := cli(t, "trace", "x", "--data-dir", filepath.Join(dir, "missing")); code == 0 || !strings.Contains(errOut, "no span file") {
		t.Errorf("missing file: exit %d %q", code, errOut)
	}
}
