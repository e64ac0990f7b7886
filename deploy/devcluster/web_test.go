package devcluster_test

import (
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/lockstep-dev/lockstep/deploy/devcluster"
	"github.com/lockstep-dev/lockstep/services/web"
	"github.com/lockstep-dev/lockstep/shared/plumbing/testenv"
)

// TestDashboardOnADevClusterWithAuth: `lockstep dev` (auth on) serves the
// dashboard, which asks for a sign-in and accepts a token made from the
// creds dev wrote.
func TestDashboardOnADevClusterWithAuth(t *testing.T) {
	c, _ := startShaped(t, devcluster.Config{Nodes: 2, GPUsPerNode: 2, Leaves: 1, Auth: true, WebListen: "127.0.0.1:0"})
	base := "http://" + c.WebAddr()
	noRedirect := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := noRedirect.Get(base + "/fabric")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusSeeOther || !strings.HasPrefix(resp.Header.Get("Location"), "/signin") {
		t.Fatalf("anonymous /fabric: %s → %q", resp.Status, resp.Header.Get("Location"))
	}
	creds, err := os.ReadFile(c.Admin.Creds)
	if err != nil {
		t.Fatal(err)
	}
	token, err := web.IssueToken(creds, time.Hour, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	resp, err = noRedirect.PostForm(base+"/signin", url.Values{"token": {token}})
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusSeeOther || len(resp.Cookies()) != 1 {
		t.Fatalf("sign-in: %s", resp.Status)
	}
	session := resp.Cookies()[0]
	// The replica's caches may still be loading: wait for both nodes.
	testenv.Eventually(t, 10*time.Second, func() error {
		req, _ := http.NewRequest(http.MethodGet, base+"/fabric", nil)
		req.AddCookie(session)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return err
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		for _, want := range []string{"admin (admin)", `data-node="node-01"`, `data-node="node-02"`} {
			if !strings.Contains(string(body), want) {
				return fmt.Errorf("signed-in /fabric lacks %q", want)
			}
		}
		return nil
	})
}

// Without auth, dev refuses to serve the dashboard beyond loopback.
func TestDevRefusesARemoteDashboardWithoutAuth(t *testing.T) {
	_, err := devcluster.Start(t.Context(), devcluster.Config{
		DataDir: t.TempDir(), NATSListen: "127.0.0.1:0", EtcdListen: "127.0.0.1:0", WebListen: "0.0.0.0:0",
		Nodes: 1, GPUsPerNode: 1, Leaves: 1, NoFsync: true,
	})
	if err == nil || !strings.Contains(err.Error(), "not a loopback address") {
		t.Fatalf("dev with --web-listen 0.0.0.0:0 and no auth: %v", err)
	}
}
