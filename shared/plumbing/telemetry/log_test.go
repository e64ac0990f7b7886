package telemetry

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"testing"

	"go.opentelemetry.io/otel/trace"
)

func TestLogLinesCarryTraceAndJob(t *testing.T) {
	tr, _ := testTracer(t)
	var buf bytes.Buffer
	log := Logger(slog.New(slog.NewJSONHandler(&buf, nil)))
	if Logger(log) != log {
		t.Error("wrapping twice made a new logger")
	}
	ctx, span := tr.Start(context.Background(), "x")
	defer span.End()
	ctx = WithJob(ctx, "job-7")
	log.InfoContext(ctx, "hello")
	log.InfoContext(ctx, "explicit", "job", "job-7")
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	sc := trace.SpanContextFromContext(ctx)
	if !strings.Contains(lines[0], `"trace_id":"`+sc.TraceID().String()+`"`) || !strings.Contains(lines[0], `"span_id":"`) ||
		!strings.Contains(lines[0], `"job":"job-7"`) {
		t.Errorf("line lacks trace or job: %s", lines[0])
	}
	if strings.Count(lines[1], `"job"`) != 1 {
		t.Errorf("job logged twice: %s", lines[1])
	}
}
