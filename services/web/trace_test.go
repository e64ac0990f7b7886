package web

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lockstep-dev/lockstep/shared/plumbing/telemetry"
	"github.com/lockstep-dev/lockstep/shared/plumbing/testenv"
)

// The job page draws the job's trace from the span file as a waterfall,
// nested as the spans are, and links it in the collector's UI; another
// job's spans stay off it.
func TestJobPageDrawsItsTrace(t *testing.T) {
	spans := filepath.Join(t.TempDir(), "spans.jsonl")
	t0 := time.Now().Add(-time.Minute).UTC()
	span := func(trace, id, parent, name, job string, from, to time.Duration) telemetry.SpanRecord {
		s := telemetry.SpanRecord{TraceID: trace, SpanID: id, ParentSpanID: parent, Name: name, Service: "lockstep-gang",
			Start: t0.Add(from), End: t0.Add(to)}
		if job != "" {
			s.Attributes = map[string]any{string(telemetry.AttrJobID): job}
		}
		return s
	}
	var lines []string
	for _, s := range []telemetry.SpanRecord{
		span("t1", "a", "", "submit traced-1", "traced-1", 0, 900*time.Millisecond),
		span("t1", "b", "a", "gang.reserve", "", 100*time.Millisecond, 300*time.Millisecond),
		span("t1", "c", "b", "gang.pull", "", 120*time.Millisecond, 250*time.Millisecond),
		span("t2", "d", "", "submit someone-else", "someone-else", 0, time.Second),
	} {
		b, err := json.Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		lines = append(lines, string(b))
	}
	if err := os.WriteFile(spans, []byte(strings.Join(lines, "\n")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	r := startRigWith(t, func(c *Config) {
		c.SpanFile = spans
		c.TraceURL = "http://jaeger.example:16686/trace/{trace}"
	})
	j := runningJob("traced-1", "", "n1", t0)
	j.TraceID = "t1"
	r.addJob(t, j)
	testenv.Eventually(t, 10*time.Second, func() error {
		_, body := r.mustGet(t, "/jobs/traced-1")
		if !inOrder(body, `id="waterfall"`, "submit traced-1", `class="depth1">gang.reserve`, `class="depth2">gang.pull`) {
			return errorf("job page lacks the nested waterfall")
		}
		if strings.Contains(body, "someone-else") {
			return errorf("another job's trace is on the page")
		}
		if !strings.Contains(body, `href="http://jaeger.example:16686/trace/t1"`) {
			return errorf("job page lacks the collector link")
		}
		return nil
	})
}

func TestTraceURLIsChecked(t *testing.T) {
	for raw, ok := range map[string]bool{
		"": true, "http://jaeger:16686/trace/{trace}": true, "https://x.example/t/{trace}?a=1": true,
		"http://jaeger:16686/trace/": false, "javascript:alert(1)//{trace}": false, "jaeger/{trace}": false,
	} {
		if err := CheckTraceURL(raw); (err == nil) != ok {
			t.Errorf("CheckTraceURL(%q) = %v, want ok %v", raw, err, ok)
		}
	}
}
