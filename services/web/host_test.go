package web

import (
	"net/http"
	"testing"
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
