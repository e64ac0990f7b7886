//go:build compose

package e2e

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/lockstep-dev/lockstep/shared/contract/client"
	"github.com/lockstep-dev/lockstep/shared/contract/domain"
	"github.com/lockstep-dev/lockstep/shared/contract/events"
	"github.com/lockstep-dev/lockstep/shared/contract/subjects"
	"github.com/lockstep-dev/lockstep/shared/plumbing/connection"
	"github.com/lockstep-dev/lockstep/shared/plumbing/invariants"
	"github.com/lockstep-dev/lockstep/shared/plumbing/jobs"
	"github.com/lockstep-dev/lockstep/shared/plumbing/store"
	"github.com/lockstep-dev/lockstep/shared/plumbing/testenv"
)

// What deploy/docker-compose.yml publishes on the host's loopback, and the
// names it gives things. The test reaches the cluster through these only.
const (
	natsURLs = "nats://127.0.0.1:14222,nats://127.0.0.1:14223,nats://127.0.0.1:14224"
	etcdURLs = "https://127.0.0.1:12379,https://127.0.0.1:12380,https://127.0.0.1:12381"
	// jaegerURL is Jaeger's query API and UI.
	jaegerURL = "http://127.0.0.1:16686"
	network   = "lockstep-net"
	project   = "lockstep"
	// nodeTTL is the agents' --lease-ttl.
	nodeTTL = 5 * time.Second
)

// container is the container name of a compose service.
func container(service string) string { return "lockstep-" + service }

// cluster is the running compose cluster and the test's clients of it.
type cluster struct {
	deploy string // the deploy/ directory
	bin    string // the host-built lockstep CLI
	// adminConfig is the config file deploy/secrets.sh writes for admin, and
	// admin the credentials in it: the test acts as admin, over TLS.
	adminConfig string
	admin       connection.Credentials
	cl          *client.Client
	etcd        *clientv3.Client
	jobs        *jobs.Store
	// jaeger is false with LOCKSTEP_E2E_JAEGER=0: no Jaeger image (its
	// first build takes most of half an hour on two cores), no trace check.
	jaeger bool
	// prometheus is false with LOCKSTEP_E2E_PROMETHEUS=0: no Prometheus
	// image (built from source: about 12 CPU-minutes the first time). Its
	// config and rules are checked without it, in deploy/tools/prometheus.
	prometheus bool

	mu   sync.Mutex
	want map[string]domain.State // every job submitted, and how it must end
}

// startCluster takes down whatever a previous run left, builds the images
// and brings the cluster up with deploy/up.sh, and registers the teardown.
func startCluster(t testing.TB) *cluster {
	t.Helper()
	if err := exec.Command("docker", "info").Run(); err != nil {
		t.Skip("skipped: no Docker engine")
	}
	deploy, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	build := os.Getenv("LOCKSTEP_BUILD_DIR")
	if build == "" {
		build = filepath.Join(deploy, "build")
	}
	c := &cluster{deploy: deploy, bin: filepath.Join(build, "bin", "lockstep"), want: map[string]domain.State{},
		jaeger: os.Getenv("LOCKSTEP_E2E_JAEGER") != "0", prometheus: os.Getenv("LOCKSTEP_E2E_PROMETHEUS") != "0"}

	// A clean slate: no job, volume or container of an earlier run.
	c.script(t, 5*time.Minute, "down.sh")
	t.Cleanup(func() { c.teardown(t) })
	start := time.Now()
	var upArgs []string
	if !c.jaeger {
		upArgs = append(upArgs, "--no-jaeger")
	}
	if !c.prometheus {
		upArgs = append(upArgs, "--no-prometheus")
	}
	c.script(t, 45*time.Minute, "up.sh", upArgs...) // builds first; a cold build takes minutes
	t.Logf("deploy/up.sh %v (build, start, all containers healthy): %s", upArgs, time.Since(start).Round(time.Second))

	c.adminConfig = filepath.Join(deploy, ".secrets", "admin", "config.yaml")
	if c.admin, err = loadCredentials(c.adminConfig); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if c.cl, err = client.Dial(ctx, natsURLs, c.admin.BusOptions()...); err != nil {
		t.Fatalf("dial the cluster's NATS: %v", err)
	}
	t.Cleanup(c.cl.Close)
	// The test's own etcd client gives up on a member that does not answer
	// within 2 s, so a paused member does not hang its reads.
	c.etcd, err = store.ConnectTimeout(ctx, etcdURLs, 2*time.Second, store.WithCredentials(c.admin))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.etcd.Close() })
	if c.jobs, err = jobs.Open(ctx, c.cl.Bus().JS); err != nil {
		t.Fatal(err)
	}
	return c
}

// teardown saves the containers' logs if the test failed, then takes the
// cluster down (unless LOCKSTEP_E2E_KEEP is set).
func (c *cluster) teardown(t testing.TB) {
	if t.Failed() {
		dir := filepath.Join(c.deploy, "build", "e2e-logs")
		_ = os.RemoveAll(dir)
		_ = os.MkdirAll(dir, 0o755)
		names, _ := c.docker(t, "ps", "-a", "--filter", "label=com.docker.compose.project="+project, "--format", "{{.Names}}")
		for _, n := range strings.Fields(names) {
			out, _ := exec.Command("docker", "logs", "--timestamps", n).CombinedOutput()
			_ = os.WriteFile(filepath.Join(dir, n+".log"), out, 0o644)
		}
		t.Logf("container logs saved in %s", dir)
	}
	if os.Getenv("LOCKSTEP_E2E_KEEP") != "" {
		t.Logf("LOCKSTEP_E2E_KEEP is set: the cluster stays up (deploy/down.sh takes it down)")
		return
	}
	start := time.Now()
	c.script(t, 5*time.Minute, "down.sh")
	t.Logf("deploy/down.sh: %s", time.Since(start).Round(time.Second))
}

// script runs one of deploy/'s scripts, its output going to the test's.
func (c *cluster) script(t testing.TB, timeout time.Duration, name string, args ...string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, filepath.Join(c.deploy, name), args...)
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("deploy/%s: %v", name, err)
	}
}

// docker runs a docker command and returns its trimmed output.
func (c *cluster) docker(t testing.TB, args ...string) (string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, "docker", args...).CombinedOutput()
	if err != nil {
		return string(out), fmt.Errorf("docker %s: %v: %s", strings.Join(args, " "), err, bytes.TrimSpace(out))
	}
	return strings.TrimSpace(string(out)), nil
}

func (c *cluster) mustDocker(t testing.TB, args ...string) string {
	t.Helper()
	out, err := c.docker(t, args...)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// waitHealthy waits for a container's health check to pass.
func (c *cluster) waitHealthy(t testing.TB, service string, timeout time.Duration) time.Duration {
	t.Helper()
	start := time.Now()
	testenv.EventuallyEvery(t, timeout, time.Second, func() error {
		st, err := c.docker(t, "inspect", "-f", "{{.State.Status}}/{{.State.Health.Status}}", container(service))
		if err != nil {
			return err
		}
		if st != "running/healthy" {
			return fmt.Errorf("%s is %s", service, st)
		}
		return nil
	})
	return time.Since(start)
}

// heal restarts stopped containers, thaws paused ones and reconnects those
// cut off the network, then waits for all to be healthy: a phase that
// failed half-way must not leave the next one a broken cluster.
func (c *cluster) heal(t testing.TB) {
	t.Helper()
	out := c.mustDocker(t, "ps", "-a", "--filter", "label=com.docker.compose.project="+project,
		"--format", `{{.Names}} {{.State}} {{.Label "com.docker.compose.service"}} {{.Networks}}`)
	var services []string
	for _, line := range strings.Split(out, "\n") {
		f := strings.Fields(line)
		if len(f) < 3 {
			continue
		}
		name, state, service := f[0], f[1], f[2]
		services = append(services, service)
		switch state {
		case "paused":
			c.mustDocker(t, "unpause", name)
		case "exited", "created":
			c.mustDocker(t, "start", name)
		}
		if len(f) < 4 || !strings.Contains(f[3], network) {
			c.mustDocker(t, "network", "connect", "--alias", service, network, name)
		}
	}
	for _, s := range services {
		c.waitHealthy(t, s, 90*time.Second)
	}
}

// spec is one job of the stream: nodes × gpus, sleeping secs.
type spec struct {
	nodes, gpus, secs int
}

// submit submits a job, retrying while the cluster is failing over (the job
// ID is the de-duplication ID, so a retry never makes two jobs), and records
// how it must end.
func (c *cluster) submit(t testing.TB, id string, s spec, want domain.State) string {
	t.Helper()
	raw := fmt.Sprintf(`{"id":%q,"gang":{"nodes":%d,"gpusPerNode":%d},"command":["sleep","%d"],"restartPolicy":{"maxRestarts":20}}`,
		id, s.nodes, s.gpus, s.secs)
	testenv.EventuallyEvery(t, 60*time.Second, 250*time.Millisecond, func() error {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_, err := c.cl.Submit(ctx, []byte(raw))
		return err
	})
	c.mu.Lock()
	c.want[id] = want
	c.mu.Unlock()
	return id
}

// job reads a job record.
func (c *cluster) job(id string) (domain.Job, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	return c.cl.Job(ctx, id)
}

// mustJob reads a job record, retrying through a fault in progress.
func (c *cluster) mustJob(t testing.TB, id string) domain.Job {
	t.Helper()
	var j domain.Job
	testenv.EventuallyEvery(t, 30*time.Second, 250*time.Millisecond, func() error {
		var err error
		j, err = c.job(id)
		return err
	})
	return j
}

// waitJobs polls until cond holds for every job and returns, per job, how
// long after since it first held.
func (c *cluster) waitJobs(t testing.TB, ids []string, since time.Time, timeout time.Duration, cond func(domain.Job) bool) map[string]time.Duration {
	t.Helper()
	got := map[string]time.Duration{}
	testenv.EventuallyEvery(t, timeout, 100*time.Millisecond, func() error {
		var waiting []string
		for _, id := range ids {
			if _, ok := got[id]; ok {
				continue
			}
			j, err := c.job(id)
			switch {
			case err != nil:
				waiting = append(waiting, fmt.Sprintf("%s (%v)", id, err))
			case cond(j):
				got[id] = time.Since(since)
			default:
				waiting = append(waiting, fmt.Sprintf("%s: %s attempt %d %s", id, j.State, j.Attempt, j.Reason))
			}
		}
		if len(waiting) > 0 {
			return fmt.Errorf("waiting for %s", strings.Join(waiting, "; "))
		}
		return nil
	})
	return got
}

func running(j domain.Job) bool { return j.State == domain.StateRunning }

// runningAgain holds once a job runs an attempt after the one it had.
func runningAgain(before map[string]int) func(domain.Job) bool {
	return func(j domain.Job) bool { return j.State == domain.StateRunning && j.Attempt > before[j.ID] }
}

// settle waits for every job submitted so far to end as it must.
func (c *cluster) settle(t testing.TB, timeout time.Duration) {
	t.Helper()
	c.mu.Lock()
	var ids []string
	for id := range c.want {
		ids = append(ids, id)
	}
	c.mu.Unlock()
	sort.Strings(ids)
	c.waitJobs(t, ids, time.Now(), timeout, func(j domain.Job) bool { return j.State.Terminal() })
	for _, id := range ids {
		j := c.mustJob(t, id)
		if want := c.want[id]; j.State != want {
			t.Errorf("%s ended %s (%s), want %s", id, j.State, j.Reason, want)
		}
	}
}

// checkClean runs `lockstep check` from the host against the published
// ports and, with no job left running, wants no claim, allocation,
// assignment or port claim left in etcd.
func (c *cluster) checkClean(t testing.TB) {
	t.Helper()
	// `lockstep check` re-checks what it finds after its own settle (2 s);
	// a violation still there a run later (the agents' stop grace is 5 s)
	// is the cluster's, not a moment of one.
	out, err := c.lockstepCheck()
	if err != nil {
		t.Logf("lockstep check: %v (checking again in 5 s)\n%s", err, out)
		time.Sleep(5 * time.Second)
		if out, err = c.lockstepCheck(); err != nil {
			t.Errorf("lockstep check, twice: %v\n%s", err, out)
		}
	}
	for _, p := range []string{store.ClaimsPrefix, store.AllocPrefix, store.AssignPrefix, store.PortsPrefix} {
		testenv.EventuallyEvery(t, 15*time.Second, 200*time.Millisecond, func() error {
			n, err := c.keysUnder(p)
			if err != nil {
				return err
			}
			if n != 0 {
				return fmt.Errorf("%d keys left under %s after every job ended", n, p)
			}
			return nil
		})
	}
}

// lockstepCheck runs `lockstep check` from the host with admin's creds
// and certificates, as a user of the CLI would give them.
func (c *cluster) lockstepCheck() ([]byte, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, c.bin, "check", "--nats", natsURLs, "--etcd", etcdURLs)
	cmd.Env = append(os.Environ(), "LOCKSTEP_CONFIG="+c.adminConfig)
	return cmd.CombinedOutput()
}

func (c *cluster) keysUnder(prefix string) (int64, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	resp, err := c.etcd.Get(ctx, prefix, clientv3.WithPrefix(), clientv3.WithCountOnly())
	if err != nil {
		return 0, err
	}
	return resp.Count, nil
}

// sampleInvariants checks, twice a second until stopped, the invariants
// that must hold at every instant (not only once things settle): no GPU
// claimed twice, no claim on a node that never registered.
func (c *cluster) sampleInvariants(t testing.TB) (stop func() int) {
	done, finished := make(chan struct{}), make(chan int)
	go func() {
		n := 0
		defer func() { finished <- n }()
		for {
			select {
			case <-done:
				return
			case <-time.After(500 * time.Millisecond):
			}
			ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
			s, err := invariants.Collect(ctx, c.etcd, c.jobs)
			cancel()
			if err != nil {
				continue // a fault in progress; the next sample will do
			}
			n++
			for _, v := range invariants.Evaluate(s) {
				if v.Rule == invariants.RuleDoubleClaim || v.Rule == invariants.RuleUnknownNode {
					t.Errorf("mid-run: %s", v)
				}
			}
		}
	}()
	return func() int { close(done); return <-finished }
}

// timeline lists a job's events as offsets from a fault.
func (c *cluster) timeline(t testing.TB, id string, since time.Time) string {
	t.Helper()
	var evs []events.Event
	var err error
	poll(15*time.Second, 500*time.Millisecond, func() bool {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		evs, err = c.cl.Events(ctx, id)
		return err == nil
	})
	if err != nil {
		return err.Error()
	}
	var parts []string
	for _, e := range evs {
		parts = append(parts, fmt.Sprintf("%s %+.1fs", e.Type, e.Time.Sub(since).Seconds()))
	}
	return strings.Join(parts, ", ")
}

// nodeEventAfter waits for a node event of a type stamped after since.
func (c *cluster) nodeEventAfter(t testing.TB, node string, typ events.Type, since time.Time, timeout time.Duration) events.Event {
	t.Helper()
	var ev events.Event
	testenv.EventuallyEvery(t, timeout, 200*time.Millisecond, func() error {
		evs, err := c.nodeEvents(node)
		if err != nil {
			return err
		}
		for _, e := range evs {
			if e.Type == typ && !e.Time.Before(since) {
				ev = e
				return nil
			}
		}
		return fmt.Errorf("no %s event for %s since %s", typ, node, since.Format(time.TimeOnly))
	})
	return ev
}

func (c *cluster) nodeEvents(node string) ([]events.Event, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	return c.cl.NodeEvents(ctx, node)
}

// nodeDownsSince counts node-down events of every node since a time.
func (c *cluster) nodeDownsSince(t testing.TB, nodes []string, since time.Time) map[string]int {
	t.Helper()
	return c.nodeDownsBetween(t, nodes, since, time.Now().Add(time.Hour))
}

// nodeDownsBetween counts each node's node-down events in [from, to).
func (c *cluster) nodeDownsBetween(t testing.TB, nodes []string, from, to time.Time) map[string]int {
	t.Helper()
	out := map[string]int{}
	for _, n := range nodes {
		var evs []events.Event
		testenv.EventuallyEvery(t, 30*time.Second, 500*time.Millisecond, func() error {
			var err error
			evs, err = c.nodeEvents(n)
			return err
		})
		for _, e := range evs {
			if e.Type == events.NodeDown && !e.Time.Before(from) && e.Time.Before(to) {
				out[n]++
			}
		}
	}
	return out
}

// ranksOn counts the processes in a node's container that are ranks of
// one attempt of a job (by the environment the agent gives every rank).
func (c *cluster) ranksOn(t testing.TB, node, job string, attempt int) (int, error) {
	const script = `n=0
for f in /proc/[0-9]*/environ; do
  e=$(tr '\000' '\n' <"$f" 2>/dev/null) || continue
  echo "$e" | grep -qx "LOCKSTEP_JOB_ID=$1" && echo "$e" | grep -qx "LOCKSTEP_ATTEMPT=$2" && n=$((n+1))
done
echo $n`
	out, err := c.docker(t, "exec", container(node), "sh", "-c", script, "sh", job, strconv.Itoa(attempt))
	if err != nil {
		return 0, err
	}
	return strconv.Atoi(strings.TrimSpace(out))
}

// agentLogTime returns when a node's agent logged msg (for job and
// attempt, when given) since a time; its logs are JSON lines. It is only
// used to time a fault more finely than polling can; ok is false when the
// line is not there (a reworded message).
func (c *cluster) agentLogTime(t testing.TB, node string, since time.Time, msg, job string, attempt int) (at time.Time, ok bool) {
	t.Helper()
	out, err := exec.Command("docker", "logs", "--since", since.Add(-time.Second).Format(time.RFC3339Nano), container(node)).CombinedOutput()
	if err != nil {
		return time.Time{}, false
	}
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(make([]byte, 0, 64*1024), 1<<20)
	for sc.Scan() {
		var line struct {
			Time    time.Time `json:"time"`
			Msg     string    `json:"msg"`
			Job     string    `json:"job"`
			Attempt int       `json:"attempt"`
		}
		if json.Unmarshal(sc.Bytes(), &line) != nil || line.Msg != msg || line.Time.Before(since) {
			continue
		}
		if job == "" || (line.Job == job && line.Attempt == attempt) {
			return line.Time, true
		}
	}
	return time.Time{}, false
}

// eventually polls cond every interval until it holds or timeout passes,
// each try with its own 3 s context: a member that does not answer fails
// that try, not the whole wait.
func eventually(t testing.TB, timeout, interval time.Duration, cond func(ctx context.Context) error) {
	t.Helper()
	testenv.EventuallyEvery(t, timeout, interval, func() error {
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
		defer cancel()
		return cond(ctx)
	})
}

// assertNoAssignment fails if a node still holds an attempt's assignment.
func (c *cluster) assertNoAssignment(t testing.TB, node, job string, attempt int) {
	t.Helper()
	eventually(t, 15*time.Second, 200*time.Millisecond, func(ctx context.Context) error {
		var as domain.Assignment
		found, _, err := store.GetJSON(ctx, c.etcd, store.AssignKey(node, job), &as)
		if err != nil {
			return err
		}
		if found && as.Attempt == attempt {
			return fmt.Errorf("%s still holds attempt %d of %s", node, attempt, job)
		}
		return nil
	})
}

// etcdLeader names the etcd member that leads (etcd-1, -2 or -3).
func (c *cluster) etcdLeader(t testing.TB) string {
	t.Helper()
	var name string
	eventually(t, 30*time.Second, 500*time.Millisecond, func(ctx context.Context) error {
		members, err := c.etcd.MemberList(ctx)
		if err != nil {
			return err
		}
		for _, ep := range c.etcd.Endpoints() {
			st, err := c.etcd.Status(ctx, ep)
			if err != nil {
				continue
			}
			for _, m := range members.Members {
				if m.ID == st.Leader {
					name = m.Name
					return nil
				}
			}
		}
		return fmt.Errorf("no etcd leader known")
	})
	return name
}

// natsJobsLeader names the NATS server leading the job records' stream.
func (c *cluster) natsJobsLeader(t testing.TB) string {
	t.Helper()
	var name string
	eventually(t, 30*time.Second, 500*time.Millisecond, func(ctx context.Context) error {
		s, err := c.cl.Bus().JS.Stream(ctx, "KV_"+subjects.BucketJobs)
		if err != nil {
			return err
		}
		info := s.CachedInfo()
		if info.Cluster == nil || info.Cluster.Leader == "" {
			return fmt.Errorf("stream KV_%s has no leader", subjects.BucketJobs)
		}
		name = info.Cluster.Leader
		return nil
	})
	return name
}

// placementLeader names the placement replica that holds the election.
func (c *cluster) placementLeader(t testing.TB) string {
	t.Helper()
	var name string
	eventually(t, 30*time.Second, 500*time.Millisecond, func(ctx context.Context) error {
		resp, err := c.etcd.Get(ctx, store.ElectionKey("placement"), clientv3.WithFirstCreate()...)
		if err != nil {
			return err
		}
		if len(resp.Kvs) == 0 {
			return fmt.Errorf("no placement leader")
		}
		name = string(resp.Kvs[0].Value)
		return nil
	})
	return name
}

// poll checks cond every interval until it holds (true) or timeout passes
// (false): for what a test measures rather than requires.
func poll(timeout, interval time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(timeout)
	for {
		if cond() {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(interval)
	}
}

// ms rounds a duration for the report.
func ms(d time.Duration) string { return d.Round(100 * time.Millisecond).String() }

// logLines is what the services' logs said since since, in lines that
// contain one of the phrases, each cut to its time, service and message:
// the few that explain a failure, small enough for its summary.
func (c *cluster) logLines(t testing.TB, since time.Time, phrases []string, services ...string) []string {
	t.Helper()
	var out []string
	for _, s := range services {
		logs, err := c.docker(t, "logs", "--since", since.UTC().Format(time.RFC3339Nano), container(s))
		if err != nil {
			out = append(out, fmt.Sprintf("%s: %v", s, err))
			continue
		}
		for _, line := range strings.Split(logs, "\n") {
			var rec struct {
				Time time.Time `json:"time"`
				Msg  string    `json:"msg"`
				Err  string    `json:"err"`
			}
			if json.Unmarshal([]byte(line), &rec) != nil {
				continue
			}
			for _, p := range phrases {
				if strings.Contains(rec.Msg, p) {
					l := fmt.Sprintf("%s %+.1fs %s", s, rec.Time.Sub(since).Seconds(), rec.Msg)
					if rec.Err != "" {
						l += " (" + rec.Err + ")"
					}
					out = append(out, l)
					break
				}
			}
		}
	}
	return out
}
