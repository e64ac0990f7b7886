package telemetry

import (
	"bufio"
	"encoding/json"
	"io"
	"os"
	"strings"
	"time"

	"github.com/cockroachdb/errors"
	"go.opentelemetry.io/otel/trace"
)

// SpanFileName is the span file in `lockstep dev`'s data directory.
const SpanFileName = "spans.jsonl"

// DefaultSpanFileMaxBytes is when the span file is rotated (the previous
// one is kept as SpanFileName + ".1").
const DefaultSpanFileMaxBytes = 64 << 20

// SpanRecord is one finished span as the span file stores it: one JSON
// object per line.
type SpanRecord struct {
	TraceID       string         `json:"traceId"`
	SpanID        string         `json:"spanId"`
	ParentSpanID  string         `json:"parentSpanId,omitempty"`
	Name          string         `json:"name"`
	Kind          string         `json:"kind"`
	Service       string         `json:"service"`
	Instance      string         `json:"instance,omitempty"`
	Start         time.Time      `json:"start"`
	End           time.Time      `json:"end"`
	Status        string         `json:"status,omitempty"`
	StatusMessage string         `json:"statusMessage,omitempty"`
	Attributes    map[string]any `json:"attributes,omitempty"`
	Links         []SpanLink     `json:"links,omitempty"`
}

// SpanLink is a link to a span of (usually) another trace.
type SpanLink struct {
	TraceID string `json:"traceId"`
	SpanID  string `json:"spanId"`
}

// Attr returns a string attribute ("" when absent).
func (r SpanRecord) Attr(key string) string {
	switch v := r.Attributes[key].(type) {
	case string:
		return v
	case nil:
		return ""
	default:
		b, _ := json.Marshal(v)
		return strings.Trim(string(b), `"`)
	}
}

// ReadSpanFile reads every span of a span file and its rotated
// predecessor, oldest first. Lines it cannot parse (a write cut short) are
// skipped. A missing file is an error only when neither exists.
func ReadSpanFile(path string) ([]SpanRecord, error) {
	var out []SpanRecord
	found := false
	for _, p := range []string{path + ".1", path} {
		f, err := os.Open(p)
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, errors.Wrap(err, "open span file")
		}
		found = true
		out, err = readSpans(f, out)
		_ = f.Close()
		if err != nil {
			return nil, errors.Wrapf(err, "read %s", p)
		}
	}
	if !found {
		return nil, errors.Newf("no span file at %s", path)
	}
	return out, nil
}

func readSpans(r io.Reader, out []SpanRecord) ([]SpanRecord, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), 4<<20)
	for sc.Scan() {
		var rec SpanRecord
		if json.Unmarshal(sc.Bytes(), &rec) == nil && rec.SpanID != "" {
			out = append(out, rec)
		}
	}
	return out, sc.Err()
}

// IsRoot reports whether a record has no parent.
func (r SpanRecord) IsRoot() bool { return r.ParentSpanID == "" }

// Kind names as trace.SpanKind prints them.
var (
	KindProducer = trace.SpanKindProducer.String()
	KindConsumer = trace.SpanKindConsumer.String()
)
