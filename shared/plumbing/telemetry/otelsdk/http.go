package otelsdk

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/cockroachdb/errors"

	"github.com/lockstep-dev/lockstep/shared/plumbing/telemetry"
)

// Handler serves /metrics (Prometheus), /healthz (the process is up) and
// /readyz (every service of the process is connected to NATS and etcd with
// its consumers running; 503 with the failing checks otherwise).
func Handler(t *Telemetry, h *telemetry.Health) http.Handler {
	mux := http.NewServeMux()
	if t != nil {
		mux.Handle("/metrics", t.MetricsHandler())
	}
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		fmt.Fprintln(w, "ok")
	})
	mux.HandleFunc("/readyz", func(w http.ResponseWriter, r *http.Request) {
		ctx, cancel := context.WithTimeout(r.Context(), 2*time.Second)
		defer cancel()
		lines, err := h.Status(ctx)
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		if err != nil {
			w.WriteHeader(http.StatusServiceUnavailable)
		}
		body := strings.Join(lines, "\n")
		if err == nil {
			body += "\nready"
		} else {
			body += "\n" + err.Error()
		}
		fmt.Fprintln(w, strings.TrimPrefix(body, "\n"))
	})
	return mux
}

// Serve listens on addr (":0" picks a port) and serves h until ctx ends.
// It returns the address it listens on; a port already in use is an error
// here, not later.
func Serve(ctx context.Context, addr string, h http.Handler) (string, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return "", errors.Wrapf(err, "listen for metrics on %s", addr)
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	go func() {
		<-ctx.Done()
		sctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		_ = srv.Shutdown(sctx)
	}()
	return ln.Addr().String(), nil
}
