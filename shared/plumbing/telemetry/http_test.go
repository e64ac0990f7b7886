package telemetry

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"testing"

	"go.opentelemetry.io/otel/trace"
)

func get(t *testing.T, url string) (int, string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body)
}

func TestEndpoints(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	tel, err := Setup(ctx, Config{Service: "test"})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = tel.Shutdown(context.Background()) }()
	h := NewHealth()
	h.Require("gang", "drain")
	addr, err := Serve(ctx, "127.0.0.1:0", Handler(tel, h))
	if err != nil {
		t.Fatal(err)
	}
	base := "http://" + addr
	if code, _ := get(t, base+"/healthz"); code != 200 {
		t.Errorf("/healthz = %d", code)
	}
	if code, body := get(t, base+"/readyz"); code != 503 || !strings.Contains(body, "no service") {
		t.Errorf("/readyz with nothing serving = %d %q", code, body)
	}
	natsUp := true
	remove := h.Add("gang/r1", func(context.Context) error {
		if !natsUp {
			return errors.New("nats: CONNECTING")
		}
		return nil
	})
	if code, body := get(t, base+"/readyz"); code != 503 || !strings.Contains(body, "[-] drain: not serving yet") {
		t.Errorf("/readyz with drain missing = %d %q", code, body)
	}
	removeDrain := h.Add("drain", func(context.Context) error { return nil })
	defer removeDrain()
	if code, body := get(t, base+"/readyz"); code != 200 || !strings.Contains(body, "[+] gang/r1 ok") {
		t.Errorf("/readyz serving = %d %q", code, body)
	}
	natsUp = false
	if code, body := get(t, base+"/readyz"); code != 503 || !strings.Contains(body, "nats: CONNECTING") {
		t.Errorf("/readyz disconnected = %d %q", code, body)
	}
	remove()

	svc := tel.Service("admission", "r1")
	svc.Metrics.Submissions.Add(ctx, 3)
	svc.Metrics.GangWait.Record(ctx, 1.5)
	_, body := get(t, base+"/metrics")
	for _, want := range []string{"lockstep_submissions_total 3", "lockstep_gang_wait_seconds_count 1", "go_goroutines"} {
		if !strings.Contains(body, want) {
			t.Errorf("/metrics lacks %q", want)
		}
	}
	if tel.Service("admission", "r1") != svc {
		t.Error("Service is not cached per instance")
	}
}

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
