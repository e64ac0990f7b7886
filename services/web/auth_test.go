package web

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/lockstep-dev/lockstep/shared/contract/subjects"
	"github.com/lockstep-dev/lockstep/shared/plumbing/auth"
	"github.com/lockstep-dev/lockstep/shared/plumbing/testenv"
)

// tokenFor signs in as id on the rig's cluster.
func (r *rig) tokenFor(t *testing.T, id auth.Identity) string {
	t.Helper()
	token, err := IssueToken(credsOf(t, r.env.Auth.Authority, id, 0), time.Hour, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	return token
}

func TestSignInWithAToken(t *testing.T) {
	r := startRig(t, testenv.WithAuth())
	code, _, hdr := r.get(t, "/fabric", "")
	if code != http.StatusSeeOther || hdr.Get("Location") != "/signin?next=%2Ffabric" {
		t.Errorf("anonymous /fabric: %d → %q", code, hdr.Get("Location"))
	}
	for _, path := range []string{"/live/queue", "/jobs/x/logs?rank=0"} {
		req, _ := http.NewRequest(http.MethodGet, r.url+path, nil)
		req.Header.Set("Accept", "text/event-stream")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusUnauthorized {
			t.Errorf("anonymous %s: %d", path, resp.StatusCode)
		}
	}
	if code, body, _ := r.get(t, "/signin?next=/queue", ""); code != http.StatusOK || !strings.Contains(body, "lockstep web token") || !strings.Contains(body, `value="/queue"`) {
		t.Errorf("sign-in form: %d", code)
	}
	if code, _, _ := r.post(t, "/signin", "", "", url.Values{"token": {"lst2.bogus.x.y"}}); code != http.StatusUnauthorized {
		t.Errorf("bad token: %d", code)
	}
	alice := r.tokenFor(t, auth.Identity{Name: "alice", Role: auth.RoleUser})
	if code, _, _ := r.post(t, "/signin", "", "http://evil.example", url.Values{"token": {alice}}); code != http.StatusForbidden {
		t.Errorf("sign-in posted from another site: %d", code)
	}
	code, _, resp := r.post(t, "/signin", "", r.url, url.Values{"token": {alice}, "next": {"/queue"}})
	cookie := resp.Cookies()
	if code != http.StatusSeeOther || resp.Header.Get("Location") != "/queue" || len(cookie) != 1 || cookie[0].Value != alice ||
		!cookie[0].HttpOnly || cookie[0].SameSite != http.SameSiteStrictMode {
		t.Fatalf("sign-in: %d → %q, cookies %+v", code, resp.Header.Get("Location"), cookie)
	}
	if code, body, _ := r.get(t, "/fabric", alice); code != http.StatusOK || !strings.Contains(body, "alice (user)") {
		t.Errorf("alice's /fabric: %d", code)
	}
	code, _, resp = r.post(t, "/signout", alice, "", url.Values{"csrf": {csrfFor(alice)}})
	if code != http.StatusSeeOther || len(resp.Cookies()) != 1 || resp.Cookies()[0].MaxAge >= 0 {
		t.Errorf("sign-out: %d %+v", code, resp.Cookies())
	}
}

// TestActionsActAsTheSignedInIdentity: a cancel or checkpoint goes out on
// the viewer's own subject, and only for a job the viewer may act on,
// from a form of the dashboard's own.
func TestActionsActAsTheSignedInIdentity(t *testing.T) {
	r := startRig(t, testenv.WithAuth())
	now := time.Now().UTC()
	r.addJob(t, runningJob("alices", "alice", "n1", now))
	r.addJob(t, runningJob("bobs", "bob", "n2", now))
	requests := make(chan *nats.Msg, 8)
	sub, err := r.env.Bus.NC.ChanSubscribe(subjects.All, requests)
	if err != nil {
		t.Fatal(err)
	}
	// The server must hold the subscription before anything is sent.
	if err := r.env.Bus.NC.Flush(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = sub.Unsubscribe() }()
	alice := r.tokenFor(t, auth.Identity{Name: "alice", Role: auth.RoleUser})
	csrf := url.Values{"csrf": {csrfFor(alice)}}

	refused := []struct {
		name, path, origin string
		form               url.Values
	}{
		{"another user's job", "/jobs/bobs/cancel", r.url, csrf},
		{"no csrf field", "/jobs/alices/cancel", r.url, url.Values{}},
		{"another session's csrf", "/jobs/alices/cancel", r.url, url.Values{"csrf": {csrfFor("someone else")}}},
		{"posted from another site", "/jobs/alices/cancel", "http://evil.example", csrf},
		{"checkpoint of another user's job", "/jobs/bobs/checkpoint", "", csrf},
		// A form body past the bound is not read to the end: its csrf
		// field, right as it is, is never seen.
		{"a 64 KiB form", "/jobs/alices/cancel", r.url, url.Values{"csrf": {csrfFor(alice)}, "pad": {strings.Repeat("x", 64<<10)}}},
	}
	for _, c := range refused {
		if code, body, _ := r.post(t, c.path, alice, c.origin, c.form); code != http.StatusForbidden {
			t.Errorf("%s: %d %s", c.name, code, body)
		}
	}
	if code, _, _ := r.post(t, "/jobs/nope/cancel", alice, "", csrf); code != http.StatusNotFound {
		t.Errorf("cancel of no job: %d", code)
	}
	for _, c := range []struct{ path, subject string }{
		{"/jobs/alices/checkpoint", subjects.DrainAs("alice")},
		{"/jobs/alices/cancel", subjects.CancelAs("alice")},
	} {
		code, body, resp := r.post(t, c.path, alice, r.url, csrf)
		if code != http.StatusSeeOther || resp.Header.Get("Location") != "/jobs/alices" {
			t.Fatalf("%s: %d %s", c.path, code, body)
		}
		msg := nextRequest(t, requests, c.subject)
		var req struct {
			JobID string `json:"jobId"`
		}
		if err := json.Unmarshal(msg.Data, &req); err != nil || req.JobID != "alices" {
			t.Errorf("%s sent %s: %s", c.path, msg.Subject, msg.Data)
		}
	}
	// Nothing was sent for the refused ones.
	select {
	case msg := <-requests:
		t.Errorf("unexpected request on %s: %s", msg.Subject, msg.Data)
	default:
	}

	// Alice sees bob's job but not its events or output; admin sees both.
	if code, body, _ := r.get(t, "/jobs/bobs", alice); code != http.StatusOK || !strings.Contains(body, "Only the job's owner") || strings.Contains(body, "/jobs/bobs/cancel") {
		t.Errorf("alice's view of bob's job: %d", code)
	}
	if code, _, _ := r.get(t, "/jobs/bobs/logs?rank=0", alice); code != http.StatusForbidden {
		t.Errorf("alice reading bob's output: %d", code)
	}
	admin := r.tokenFor(t, auth.Identity{Name: "admin", Role: auth.RoleAdmin})
	if code, body, _ := r.get(t, "/jobs/bobs", admin); code != http.StatusOK || !strings.Contains(body, `id="timeline"`) || !strings.Contains(body, "/jobs/bobs/cancel") {
		t.Errorf("admin's view of bob's job: %d", code)
	}
}

// nextRequest waits for a request on subject (skipping the stream's other
// traffic).
func nextRequest(t *testing.T, ch <-chan *nats.Msg, subject string) *nats.Msg {
	t.Helper()
	timeout := time.After(10 * time.Second)
	for {
		select {
		case msg := <-ch:
			if msg.Subject == subject {
				return msg
			}
		case <-timeout:
			t.Fatalf("no request on %s", subject)
		}
	}
}

func TestRemoteListenNeedsAuthOrConsent(t *testing.T) {
	e := testenv.Start(t)
	err := Run(context.Background(), Config{Base: e.Base(t), Listen: "0.0.0.0:0"})
	if err == nil || !strings.Contains(err.Error(), "not a loopback address") {
		t.Fatalf("remote listen without auth: %v", err)
	}
}

// A live stream is checked once, when it opens; it must end when the
// token it opened with does, not run on after it.
func TestLiveStreamEndsWithItsToken(t *testing.T) {
	r := startRig(t, testenv.WithAuth())
	token, err := IssueToken(credsOf(t, r.env.Auth.Authority, auth.Identity{Name: "alice", Role: auth.RoleUser}, 0), 2*time.Second, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	s := r.stream(t, "/live/queue", token)
	if name, _ := s.next(t); name != "update" {
		t.Fatalf("first event %q, want the page", name)
	}
	ended := make(chan struct{})
	go func() {
		for s.lines.Scan() {
		}
		close(ended)
	}()
	select {
	case <-ended:
	case <-time.After(15 * time.Second):
		t.Fatal("the stream still runs 15 s after its 2 s token expired")
	}
}
