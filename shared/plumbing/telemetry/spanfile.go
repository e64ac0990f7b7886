package telemetry

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/cockroachdb/errors"
	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"
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

// Record converts a finished SDK span.
func Record(s sdktrace.ReadOnlySpan) SpanRecord {
	r := SpanRecord{
		TraceID: s.SpanContext().TraceID().String(), SpanID: s.SpanContext().SpanID().String(),
		Name: s.Name(), Kind: s.SpanKind().String(), Start: s.StartTime(), End: s.EndTime(),
	}
	if p := s.Parent(); p.IsValid() {
		r.ParentSpanID = p.SpanID().String()
	}
	for _, kv := range s.Resource().Attributes() {
		switch kv.Key {
		case semconv.ServiceNameKey:
			r.Service = kv.Value.AsString()
		case semconv.ServiceInstanceIDKey:
			r.Instance = kv.Value.AsString()
		}
	}
	if st := s.Status(); st.Code == codes.Error {
		r.Status, r.StatusMessage = "error", st.Description
	}
	if attrs := s.Attributes(); len(attrs) > 0 {
		r.Attributes = make(map[string]any, len(attrs))
		for _, kv := range attrs {
			r.Attributes[string(kv.Key)] = kv.Value.AsInterface()
		}
	}
	for _, l := range s.Links() {
		r.Links = append(r.Links, SpanLink{TraceID: l.SpanContext.TraceID().String(), SpanID: l.SpanContext.SpanID().String()})
	}
	return r
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

// FileExporter appends spans to a JSON-lines file; `lockstep dev` uses it
// so traces need no collector.
type FileExporter struct {
	path string
	max  int64

	mu   sync.Mutex
	f    *os.File
	w    *bufio.Writer
	size int64
}

var _ sdktrace.SpanExporter = (*FileExporter)(nil)

// NewFileExporter opens (appends to) path; maxBytes ≤ 0 means
// DefaultSpanFileMaxBytes.
func NewFileExporter(path string, maxBytes int64) (*FileExporter, error) {
	if maxBytes <= 0 {
		maxBytes = DefaultSpanFileMaxBytes
	}
	e := &FileExporter{path: path, max: maxBytes}
	if err := e.open(); err != nil {
		return nil, err
	}
	return e, nil
}

func (e *FileExporter) open() error {
	if err := os.MkdirAll(filepath.Dir(e.path), 0o755); err != nil {
		return errors.Wrap(err, "span file directory")
	}
	f, err := os.OpenFile(e.path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return errors.Wrap(err, "open span file")
	}
	st, err := f.Stat()
	if err != nil {
		_ = f.Close()
		return errors.Wrap(err, "stat span file")
	}
	e.f, e.w, e.size = f, bufio.NewWriter(f), st.Size()
	return nil
}

// ExportSpans appends one line per span and flushes.
func (e *FileExporter) ExportSpans(_ context.Context, spans []sdktrace.ReadOnlySpan) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.f == nil {
		return errors.New("span file closed")
	}
	for _, s := range spans {
		line, err := json.Marshal(Record(s))
		if err != nil {
			continue
		}
		if e.size+int64(len(line))+1 > e.max {
			if err := e.rotate(); err != nil {
				return err
			}
		}
		n, _ := e.w.Write(append(line, '\n'))
		e.size += int64(n)
	}
	return errors.Wrap(e.w.Flush(), "write span file")
}

// rotate keeps the current file as path.1 and starts a new one.
func (e *FileExporter) rotate() error {
	if err := e.w.Flush(); err != nil {
		return errors.Wrap(err, "write span file")
	}
	_ = e.f.Close()
	if err := os.Rename(e.path, e.path+".1"); err != nil {
		return errors.Wrap(err, "rotate span file")
	}
	return e.open()
}

// Shutdown flushes and closes the file.
func (e *FileExporter) Shutdown(context.Context) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.f == nil {
		return nil
	}
	err := e.w.Flush()
	err = errors.CombineErrors(err, e.f.Close())
	e.f = nil
	return errors.Wrap(err, "close span file")
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
