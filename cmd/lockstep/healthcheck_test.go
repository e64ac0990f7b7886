package main

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/lockstep-dev/lockstep/shared/plumbing/store"
	"github.com/lockstep-dev/lockstep/shared/plumbing/testenv"
)

func TestHealthcheckHealthy(t *testing.T) {
	env := testenv.Start(t)
	out, errOut, code := cli(t, "healthcheck", "--nats", env.NATSURL, "--etcd", env.EtcdEndpoint)
	if code != 0 || !strings.Contains(out, "healthy: nats, etcd") {
		t.Fatalf("healthcheck = %d %q %q, want 0", code, out, errOut)
	}

	// --node: unhealthy until the node is registered.
	_, errOut, code = cli(t, "healthcheck", "--etcd", env.EtcdEndpoint, "--node", "node-01")
	if code != 1 || !strings.Contains(errOut, "node node-01 is not registered") {
		t.Errorf("unregistered node: %d %q, want 1 naming the node", code, errOut)
	}
	if _, err := env.Etcd.Put(context.Background(), store.NodeKey("node-01"), "{}"); err != nil {
		t.Fatal(err)
	}
	if _, errOut, code = cli(t, "healthcheck", "--etcd", env.EtcdEndpoint, "--node", "node-01"); code != 0 {
		t.Errorf("registered node: %d %q, want 0", code, errOut)
	}
	_, _ = env.Etcd.Delete(context.Background(), store.NodeKey("node-01"), clientv3.WithPrefix())
}

func TestHealthcheckUnhealthy(t *testing.T) {
	dead := closedPort(t)
	for name, args := range map[string][]string{
		"nats": {"--nats", "nats://" + dead},
		"etcd": {"--etcd", "http://" + dead},
		"url":  {"--url", "http://" + dead + "/readyz"},
	} {
		t.Run(name, func(t *testing.T) {
			start := time.Now()
			out, errOut, code := cli(t, append([]string{"healthcheck", "--timeout", "1s"}, args...)...)
			if code != 1 || out != "" {
				t.Errorf("exit %d, stdout %q; want 1 and nothing", code, out)
			}
			if !strings.HasPrefix(errOut, "lockstep: unhealthy: ") || strings.Count(errOut, "\n") != 1 {
				t.Errorf("stderr %q: want one line with the reason", errOut)
			}
			if d := time.Since(start); d > 5*time.Second {
				t.Errorf("took %s with --timeout 1s", d)
			}
		})
	}
}

func TestHealthcheckURL(t *testing.T) {
	status := http.StatusServiceUnavailable
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(status) }))
	t.Cleanup(srv.Close)
	if _, errOut, code := cli(t, "healthcheck", "--url", srv.URL); code != 1 || !strings.Contains(errOut, "503") {
		t.Errorf("503: exit %d %q, want 1 naming the status", code, errOut)
	}
	status = http.StatusOK
	if _, errOut, code := cli(t, "healthcheck", "--url", srv.URL); code != 0 {
		t.Errorf("200: exit %d %q, want 0", code, errOut)
	}
}

func TestHealthcheckUsage(t *testing.T) {
	for _, args := range [][]string{{}, {"extra"}, {"--node", "n"}, {"--nats", "nats://x", "--timeout", "0s"}} {
		if _, _, code := cli(t, append([]string{"healthcheck"}, args...)...); code != 2 {
			t.Errorf("healthcheck %q: exit %d, want 2", args, code)
		}
	}
}

// closedPort returns a loopback address nothing listens on.
func closedPort(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	_ = l.Close()
	return addr
}
