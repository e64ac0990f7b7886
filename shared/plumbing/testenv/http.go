package testenv

import (
	"io"
	"net/http"
	"testing"
)

// HTTPGet fetches url and returns its status code and body; a request that
// fails at all (no answer) fails the test. For the /metrics, /healthz and
// /readyz endpoints a service serves.
func HTTPGet(t testing.TB, url string) (int, string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("read %s: %v", url, err)
	}
	return resp.StatusCode, string(body)
}
