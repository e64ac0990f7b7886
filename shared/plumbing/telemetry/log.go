package telemetry

import (
	"context"
	"log/slog"

	"go.opentelemetry.io/otel/trace"
)

// logHandler adds, to every line logged with a context, the trace and span
// IDs of the span in it and the job WithJob put there, so a log line can be
// found from a trace and the other way round.
type logHandler struct{ next slog.Handler }

// NewLogHandler wraps h; wrapping twice is a no-op.
func NewLogHandler(h slog.Handler) slog.Handler {
	if _, ok := h.(*logHandler); ok {
		return h
	}
	return &logHandler{next: h}
}

// Logger wraps a logger's handler with NewLogHandler.
func Logger(l *slog.Logger) *slog.Logger {
	if _, ok := l.Handler().(*logHandler); ok {
		return l
	}
	return slog.New(NewLogHandler(l.Handler()))
}

func (h *logHandler) Enabled(ctx context.Context, level slog.Level) bool {
	return h.next.Enabled(ctx, level)
}

func (h *logHandler) Handle(ctx context.Context, r slog.Record) error {
	if sc := trace.SpanContextFromContext(ctx); sc.IsValid() {
		r.AddAttrs(slog.String("trace_id", sc.TraceID().String()), slog.String("span_id", sc.SpanID().String()))
	}
	if id := JobID(ctx); id != "" && !hasAttr(r, "job") {
		r.AddAttrs(slog.String("job", id))
	}
	return h.next.Handle(ctx, r)
}

func hasAttr(r slog.Record, key string) bool {
	found := false
	r.Attrs(func(a slog.Attr) bool {
		found = a.Key == key
		return !found
	})
	return found
}

func (h *logHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	return &logHandler{next: h.next.WithAttrs(attrs)}
}

func (h *logHandler) WithGroup(name string) slog.Handler {
	return &logHandler{next: h.next.WithGroup(name)}
}
