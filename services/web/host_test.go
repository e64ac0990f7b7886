package web

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/lockstep-dev/lockstep/shared/plumbing/config"
)

// Without auth the dashboard answers only requests naming the loopback: a
// page whose own name was rebound to 127.0.0.1 (DNS rebinding) reads
// nothing through a visitor's browser.
func TestNoAuthDashboardAnswersOnlyLoopbackNames(t *testing.T) {
	r := startRig(t)
	for host, want := range map[string]int{
		"":                  http.StatusOK, // the rig's own 127.0.0.1:port
		"localhost:8080":    http.StatusOK,
		"[::1]:8080":        http.StatusOK,
		"evil.example:8080": http.StatusMisdirectedRequest,
		"evil.example":      http.StatusMisdirectedRequest,
		"10.0.0.5:8080":     http.StatusMisdirectedRequest,
	} {
		req, err := http.NewRequest(http.MethodGet, r.url+"/queue", nil)
		if err != nil {
			t.Fatal(err)
		}
		if host != "" {
			req.Host = host
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != want {
			t.Errorf("Host %q: %d, want %d", host, resp.StatusCode, want)
		}
	}
}

// With --allow-remote and no auth, the dashboard answers for loopback, IP
// addresses and the --public-host names, and for no other name: a
// rebound page's own.
func TestRemoteNoAuthDashboardAnswersOnlyItsNames(t *testing.T) {
	ok := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {})
	h := hostsOnly(ok, []string{"gpu-head.lab"}, true, "its names")
	for host, want := range map[string]int{
		"localhost:8080":    http.StatusOK,
		"10.0.0.5:8080":     http.StatusOK,
		"[fd00::5]:8080":    http.StatusOK,
		"gpu-head.lab:8080": http.StatusOK,
		"GPU-HEAD.lab":      http.StatusOK,
		"evil.example:8080": http.StatusMisdirectedRequest,
		"gpu-head.lab.evil": http.StatusMisdirectedRequest,
	} {
		req := httptest.NewRequest(http.MethodGet, "/queue", nil)
		req.Host = host
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code != want {
			t.Errorf("Host %q: %d, want %d", host, rec.Code, want)
		}
	}
}

func TestPublicHostNeedsAllowRemoteWithoutAuth(t *testing.T) {
	base := config.Base{NATSURL: "nats://x", Etcd: "x", StreamReplicas: 1}
	for name, c := range map[string]Config{
		"without --allow-remote": {Base: base, Listen: "127.0.0.1:8080", PublicHosts: []string{"head"}},
		"with auth":              {Base: withCreds(base), Listen: "0.0.0.0:8080", AllowRemote: true, PublicHosts: []string{"head"}},
		"a name with a port":     {Base: base, Listen: "0.0.0.0:8080", AllowRemote: true, PublicHosts: []string{"head:8080"}},
		"an empty name":          {Base: base, Listen: "0.0.0.0:8080", AllowRemote: true, PublicHosts: []string{"head", ""}},
	} {
		if err := c.Validate(); err == nil || !strings.Contains(err.Error(), "--public-host") {
			t.Errorf("%s: %v, want --public-host refused", name, err)
		}
	}
	good := Config{Base: base, Listen: "0.0.0.0:8080", AllowRemote: true, PublicHosts: []string{"head"}}
	if err := good.Validate(); err != nil {
		t.Errorf("--allow-remote --public-host head: %v", err)
	}
}

func withCreds(b config.Base) config.Base {
	b.Creds = "/nonexistent/web.creds"
	return b
}
