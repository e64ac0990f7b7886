package otelsdk

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"sync"

	"github.com/cockroachdb/errors"
	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"

	"github.com/lockstep-dev/lockstep/shared/plumbing/telemetry"
)

// Record converts a finished SDK span.
func Record(s sdktrace.ReadOnlySpan) telemetry.SpanRecord {
	r := telemetry.SpanRecord{
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
		r.Links = append(r.Links, telemetry.SpanLink{TraceID: l.SpanContext.TraceID().String(), SpanID: l.SpanContext.SpanID().String()})
	}
	return r
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
// telemetry.DefaultSpanFileMaxBytes.
func NewFileExporter(path string, maxBytes int64) (*FileExporter, error) {
	if maxBytes <= 0 {
		maxBytes = telemetry.DefaultSpanFileMaxBytes
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
