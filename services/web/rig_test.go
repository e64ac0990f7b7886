package web

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/lockstep-dev/lockstep/shared/contract/domain"
	"github.com/lockstep-dev/lockstep/shared/contract/events"
	"github.com/lockstep-dev/lockstep/shared/plumbing/auth"
	"github.com/lockstep-dev/lockstep/shared/plumbing/jobs"
	"github.com/lockstep-dev/lockstep/shared/plumbing/store"
	"github.com/lockstep-dev/lockstep/shared/plumbing/testenv"
)

// rig is a web replica on a real NATS and etcd.
type rig struct {
	env  *testenv.Env
	url  string
	jobs *jobs.Store
}

// startRig starts NATS and etcd (with opts) and a web replica on them,
// connected as admin when the cluster has auth.
func startRig(t *testing.T, opts ...testenv.Option) *rig {
	t.Helper()
	return startRigWith(t, func(*Config) {}, opts...)
}

// startRigWith is startRig with the replica's config adjusted by set.
func startRigWith(t *testing.T, set func(*Config), opts ...testenv.Option) *rig {
	t.Helper()
	e := testenv.Start(t, opts...)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	b := e.Base(t)
	if e.Auth != nil {
		b.Credentials = e.Auth.Credentials(t, auth.Identity{Name: "admin", Role: auth.RoleAdmin})
	}
	cfg := Config{Base: b, Listener: ln}
	set(&cfg)
	testenv.Serve(t, func(ctx context.Context) error { return Run(ctx, cfg) })
	r := &rig{env: e, url: "http://" + ln.Addr().String(), jobs: e.Jobs(t)}
	testenv.Eventually(t, 10*time.Second, func() error {
		resp, err := http.Get(r.url + "/static/app.js")
		if err == nil {
			resp.Body.Close()
		}
		return err
	})
	return r
}

// noRedirect is a client that shows redirects instead of following them.
var noRedirect = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

// get fetches a path (with the session cookie, when given) and returns
// the status and body.
func (r *rig) get(t *testing.T, path, session string) (int, string, http.Header) {
	t.Helper()
	resp, body := r.send(t, http.MethodGet, path, session, "", nil)
	return resp.StatusCode, body, resp.Header
}

// post sends a form (with the session cookie when given and an Origin
// when origin is not "").
func (r *rig) post(t *testing.T, path, session, origin string, form url.Values) (int, string, *http.Response) {
	t.Helper()
	resp, body := r.send(t, http.MethodPost, path, session, origin, form)
	return resp.StatusCode, body, resp
}

// send makes one request without following redirects.
func (r *rig) send(t *testing.T, method, path, session, origin string, form url.Values) (*http.Response, string) {
	t.Helper()
	var payload io.Reader
	if form != nil {
		payload = strings.NewReader(form.Encode())
	}
	req, err := http.NewRequest(method, r.url+path, payload)
	if err != nil {
		t.Fatal(err)
	}
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	if origin != "" {
		req.Header.Set("Origin", origin)
	}
	if session != "" {
		req.AddCookie(&http.Cookie{Name: sessionCookie, Value: session})
	}
	resp, err := noRedirect.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp, string(body)
}

// eventStream reads a Server-Sent Events stream.
type eventStream struct {
	lines *bufio.Scanner
	close func()
}

func (r *rig) stream(t *testing.T, path, session string) *eventStream {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, r.url+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Accept", "text/event-stream")
	if session != "" {
		req.AddCookie(&http.Cookie{Name: sessionCookie, Value: session})
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("%s: %s %s", path, resp.Status, resp.Header.Get("Content-Type"))
	}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	s := &eventStream{lines: sc, close: func() { cancel(); resp.Body.Close() }}
	t.Cleanup(s.close)
	return s
}

// next reads one event: its name and data.
func (s *eventStream) next(t *testing.T) (name, data string) {
	t.Helper()
	var b strings.Builder
	for s.lines.Scan() {
		line := s.lines.Text()
		switch {
		case line == "":
			return name, strings.TrimSuffix(b.String(), "\n")
		case strings.HasPrefix(line, "event: "):
			name = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: "):
			b.WriteString(strings.TrimPrefix(line, "data: ") + "\n")
		}
	}
	t.Fatalf("stream ended: %v", s.lines.Err())
	return "", ""
}

// until reads events until one's data contains want, within timeout.
func (s *eventStream) until(t *testing.T, want string, timeout time.Duration) string {
	t.Helper()
	found := make(chan string, 1)
	go func() {
		for s.lines.Scan() {
			if strings.Contains(s.lines.Text(), want) {
				found <- s.lines.Text()
				return
			}
		}
		close(found)
	}()
	select {
	case line, ok := <-found:
		if !ok {
			t.Fatalf("stream ended before %q", want)
		}
		return line
	case <-time.After(timeout):
		s.close()
		t.Fatalf("no event with %q within %s", want, timeout)
	}
	return ""
}

// addNode registers a live node under a leaf, with its inventory.
func (r *rig) addNode(t *testing.T, name, spine, leaf string, gpus int) {
	t.Helper()
	n := domain.Node{Name: name, Addr: name, GPUs: gpus, Spine: spine, Leaf: leaf}
	for _, key := range []string{store.NodeKey(name), store.InventoryKey(name)} {
		if _, err := r.env.Etcd.Put(context.Background(), key, store.MustJSON(n)); err != nil {
			t.Fatal(err)
		}
	}
}

// addJob writes a job record.
func (r *rig) addJob(t *testing.T, j domain.Job) {
	t.Helper()
	if err := r.jobs.Create(context.Background(), j); err != nil {
		t.Fatal(err)
	}
}

// claim writes a running job's allocation record, and only it: the web
// UI takes the GPUs a job holds from the record, not from the claim keys
// gang writes beside it.
func (r *rig) claim(t *testing.T, j domain.Job) {
	t.Helper()
	a := domain.Allocation{JobID: j.ID, Attempt: j.Attempt, State: domain.AllocRunning, Placement: *j.Placement}
	if _, err := r.env.Etcd.Put(context.Background(), store.AllocKey(j.ID), store.MustJSON(a)); err != nil {
		t.Fatal(err)
	}
}

// event publishes a job event.
func (r *rig) event(t *testing.T, ev events.Event) {
	t.Helper()
	if err := r.env.Bus.PublishEvent(context.Background(), ev); err != nil {
		t.Fatal(err)
	}
}

// pendingJob and runningJob are records as admission and gang write them.
func pendingJob(id, owner string, prio int, submitted time.Time) domain.Job {
	spec := testenv.GangSpec(id, 1, 2, "sleep", "60")
	spec.Name, spec.Priority = id, prio
	return domain.Job{ID: id, Spec: spec, State: domain.StatePending, Reason: "Resources", Detail: "2 GPUs wanted, 0 free",
		SubmittedAt: submitted, PendingSince: submitted, Owner: owner}
}

func runningJob(id, owner, node string, submitted time.Time) domain.Job {
	j := pendingJob(id, owner, 0, submitted)
	j.State, j.Reason, j.Detail, j.Attempt = domain.StateRunning, "", "", 1
	j.ReservedAt, j.RunningAt = submitted.Add(time.Second), submitted.Add(2*time.Second)
	p := testenv.GangPlacement([]string{node}, 2, 29500)
	p.Leaves = []string{"leaf-1"}
	j.Placement = &p
	return j
}

// mustGet fetches a path that must answer 200.
func (r *rig) mustGet(t *testing.T, path string) (int, string) {
	t.Helper()
	code, body, _ := r.get(t, path, "")
	if code != http.StatusOK {
		t.Fatalf("GET %s: %d %s", path, code, body)
	}
	return code, body
}

func errorf(format string, args ...any) error { return fmt.Errorf(format, args...) }

type domainJob = domain.Job
