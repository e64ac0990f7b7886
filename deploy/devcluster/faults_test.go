package devcluster_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sort"
	"strings"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/lockstep-dev/lockstep/deploy/devcluster"
	"github.com/lockstep-dev/lockstep/shared/contract/client"
	"github.com/lockstep-dev/lockstep/shared/contract/domain"
	"github.com/lockstep-dev/lockstep/shared/contract/events"
	"github.com/lockstep-dev/lockstep/shared/contract/subjects"
	"github.com/lockstep-dev/lockstep/shared/plumbing/invariants"
	"github.com/lockstep-dev/lockstep/shared/plumbing/jobs"
	"github.com/lockstep-dev/lockstep/shared/plumbing/store"
	"github.com/lockstep-dev/lockstep/shared/plumbing/testenv"
)

type harness struct {
	t    *testing.T
	c    *devcluster.Cluster
	cl   *client.Client
	etcd *clientv3.Client
	jobs *jobs.Store
}

func newHarness(t *testing.T, cfg devcluster.Config) *harness {
	t.Helper()
	cfg.DataDir, cfg.NATSListen, cfg.EtcdListen, cfg.NoFsync = t.TempDir(), "127.0.0.1:0", "127.0.0.1:0", true
	if cfg.GPUsPerNode == 0 {
		cfg.GPUsPerNode = 8
	}
	if cfg.Leaves == 0 {
		cfg.Leaves = 1
	}
	if cfg.Log == nil {
		cfg.Log = testenv.FailureLog(t)
	}
	ctx := context.Background()
	c, err := devcluster.Start(ctx, cfg)
	if err != nil {
		t.Fatalf("start: %v", err)
	}
	t.Cleanup(c.Stop)
	cl, err := client.Dial(ctx, c.NATSURL)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	cli, err := store.Connect(ctx, c.EtcdEndpoint)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cli.Close() })
	js, err := jobs.Open(ctx, cl.Bus().JS)
	if err != nil {
		t.Fatal(err)
	}
	return &harness{t: t, c: c, cl: cl, etcd: cli, jobs: js}
}

func (h *harness) submit(spec string) string {
	h.t.Helper()
	id, err := h.cl.Submit(context.Background(), []byte(spec))
	if err != nil {
		h.t.Fatalf("submit: %v", err)
	}
	return id
}

func (h *harness) job(id string) domain.Job {
	h.t.Helper()
	j, err := h.cl.Job(context.Background(), id)
	if err != nil {
		h.t.Fatalf("job %s: %v", id, err)
	}
	return j
}

func (h *harness) waitFor(id string, timeout time.Duration, ok func(domain.Job) bool) domain.Job {
	h.t.Helper()
	var j domain.Job
	testenv.Eventually(h.t, timeout, func() error {
		var err error
		if j, err = h.cl.Job(context.Background(), id); err != nil {
			return err
		}
		if !ok(j) {
			return fmt.Errorf("job %s: state %s attempt %d restarts %d reason %q", id, j.State, j.Attempt, j.Restarts, j.Reason)
		}
		return nil
	})
	return j
}

func (h *harness) events(id string) []events.Event {
	h.t.Helper()
	evs, err := h.cl.Events(context.Background(), id)
	if err != nil {
		h.t.Fatal(err)
	}
	return evs
}

// waitEvent waits for a job's first event of a type.
func (h *harness) waitEvent(id string, typ events.Type) events.Event {
	h.t.Helper()
	var found events.Event
	testenv.Eventually(h.t, 30*time.Second, func() error {
		for _, ev := range h.events(id) {
			if ev.Type == typ {
				found = ev
				return nil
			}
		}
		return fmt.Errorf("no %s event for %s yet", typ, id)
	})
	return found
}

// checkInvariants fails the test on any violation that persists.
func (h *harness) checkInvariants() {
	h.t.Helper()
	vs, err := invariants.Check(context.Background(), h.etcd, h.jobs, time.Second)
	if err != nil {
		h.t.Fatal(err)
	}
	for _, v := range vs {
		h.t.Errorf("invariant violated: %s", v)
	}
}

// keysUnder counts etcd keys under a prefix.
func (h *harness) keysUnder(prefix string) int64 {
	h.t.Helper()
	resp, err := h.etcd.Get(context.Background(), prefix, clientv3.WithPrefix(), clientv3.WithCountOnly())
	if err != nil {
		h.t.Fatal(err)
	}
	return resp.Count
}

func TestNodeLossRequeuesTheGangElsewhere(t *testing.T) {
	h := newHarness(t, devcluster.Config{Nodes: 4, NodeTTL: 2 * time.Second})
	id := h.submit(`{"id":"victim","gang":{"nodes":2,"gpusPerNode":8},"command":["sleep","300"]}`)
	j := h.waitFor(id, 30*time.Second, func(j domain.Job) bool { return j.State == domain.StateRunning })
	lost := j.Placement.Nodes[1].Node
	survivor := j.Placement.Nodes[0].Node

	killed := time.Now()
	h.c.Kill(devcluster.AgentName(lost))
	j = h.waitFor(id, 30*time.Second, func(j domain.Job) bool {
		return j.Attempt == 2 && j.State == domain.StateRunning
	})
	for _, np := range j.Placement.Nodes {
		if np.Node == lost {
			t.Errorf("requeued gang placed on the lost node %s", lost)
		}
	}
	if j.Restarts != 1 {
		t.Errorf("restarts = %d, want 1", j.Restarts)
	}
	var requeued events.Event
	for _, ev := range h.events(id) {
		if ev.Type == events.Requeued {
			requeued = ev
		}
	}
	if !strings.Contains(requeued.Reason, lost) {
		t.Errorf("requeued reason %q should name node %s", requeued.Reason, lost)
	}
	// The node-down event names the node, within the lease TTL (plus slack).
	down := h.nodeEvent(lost, events.NodeDown)
	detect := down.Time.Sub(killed)
	t.Logf("node loss detected after %s (lease TTL 2s)", detect.Round(time.Millisecond))
	if detect > 5*time.Second {
		t.Errorf("node-down after %s, want within the 2s TTL plus slack", detect)
	}
	// The surviving node of the old attempt runs nothing of attempt 1.
	h.assertNoAssignment(survivor, id, 1)

	// The node comes back, re-registers cleanly and gets no stale work.
	h.c.Start(devcluster.AgentName(lost))
	testenv.Eventually(t, 10*time.Second, func() error {
		if _, err := h.etcd.Get(context.Background(), store.NodeKey(lost)); err != nil {
			return err
		}
		if h.keysUnder(store.NodeKey(lost)) != 1 {
			return fmt.Errorf("%s not registered again", lost)
		}
		return nil
	})
	h.assertNoAssignment(lost, id, 1)
	h.checkInvariants()
}

func (h *harness) nodeEvent(node string, typ events.Type) events.Event {
	h.t.Helper()
	var ev events.Event
	testenv.Eventually(h.t, 10*time.Second, func() error {
		evs, err := nodeEvents(h.cl, node)
		if err != nil {
			return err
		}
		for _, e := range evs {
			if e.Type == typ {
				ev = e
				return nil
			}
		}
		return fmt.Errorf("no %s event for %s", typ, node)
	})
	return ev
}

func (h *harness) assertNoAssignment(node, job string, attempt int) {
	h.t.Helper()
	testenv.Eventually(h.t, 10*time.Second, func() error {
		var as domain.Assignment
		found, _, err := store.GetJSON(context.Background(), h.etcd, store.AssignKey(node, job), &as)
		if err != nil {
			return err
		}
		if found && as.Attempt == attempt {
			return fmt.Errorf("%s still holds attempt %d of %s", node, attempt, job)
		}
		return nil
	})
}

func TestLaunchTimeoutReleasesEverything(t *testing.T) {
	h := newHarness(t, devcluster.Config{Nodes: 1, LaunchTimeout: 2 * time.Second})
	// A second node that registers but whose agent never runs anything: a
	// hung agent. Its lease is kept alive by the test.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	lease, err := h.etcd.Grant(ctx, 10)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := h.etcd.KeepAlive(ctx, lease.ID); err != nil {
		t.Fatal(err)
	}
	hung := domain.Node{Name: "hung", Addr: "127.0.0.1", GPUs: 8, Leaf: "leaf-1", Spine: "spine-1", Epoch: int64(lease.ID)}
	if _, err := h.etcd.Txn(ctx).Then(
		clientv3.OpPut(store.NodeKey("hung"), store.MustJSON(hung), clientv3.WithLease(lease.ID)),
		clientv3.OpPut(store.InventoryKey("hung"), store.MustJSON(hung)),
	).Commit(); err != nil {
		t.Fatal(err)
	}
	id := h.submit(`{"id":"stuck","gang":{"nodes":2,"gpusPerNode":8},"command":["sleep","300"],"restartPolicy":{"maxRestarts":0}}`)
	j := h.waitFor(id, 30*time.Second, func(j domain.Job) bool { return j.State.Terminal() })
	if j.State != domain.StateFailed || !strings.Contains(j.Reason, "LaunchTimeout") {
		t.Errorf("want failed with LaunchTimeout, got %s: %s", j.State, j.Reason)
	}
	var types []string
	for _, ev := range h.events(id) {
		types = append(types, string(ev.Type))
	}
	if strings.Contains(strings.Join(types, ","), "running") {
		t.Errorf("a gang that never fully started must never be announced running: %v", types)
	}
	for _, p := range []string{store.ClaimsPrefix, store.AllocPrefix, store.AssignPrefix, store.PortsPrefix} {
		testenv.Eventually(t, 10*time.Second, func() error {
			if n := h.keysUnder(p); n != 0 {
				return fmt.Errorf("%d keys left under %s", n, p)
			}
			return nil
		})
	}
	h.checkInvariants()
}

// TestContentionManyGangsTwoReplicas races many gangs for a small cluster
// with two replicas of every service; all must finish, and the invariant
// checker watches throughout.
func TestContentionManyGangsTwoReplicas(t *testing.T) {
	h := newHarness(t, devcluster.Config{Nodes: 4, Leaves: 2, Replicas: 2})
	rng := rand.New(rand.NewPCG(7, 7))
	var ids []string
	for i := range 24 {
		nodes := 1 + rng.IntN(2)
		gpus := []int{2, 4, 8}[rng.IntN(3)]
		ids = append(ids, h.submit(fmt.Sprintf(`{"id":"c-%d","gang":{"nodes":%d,"gpusPerNode":%d},"command":["sleep","0.%d"]}`,
			i, nodes, gpus, 1+rng.IntN(4))))
	}
	stop := make(chan struct{})
	checked := make(chan int)
	go func() {
		n := 0
		defer func() { checked <- n }()
		for {
			select {
			case <-stop:
				return
			case <-time.After(100 * time.Millisecond):
			}
			s, err := invariants.Collect(context.Background(), h.etcd, h.jobs)
			if err != nil {
				continue
			}
			n++
			for _, v := range invariants.Evaluate(s) {
				if v.Rule == invariants.RuleDoubleClaim || v.Rule == invariants.RuleUnknownNode {
					t.Errorf("mid-run: %s", v)
				}
			}
		}
	}()
	conflicts := 0
	for _, id := range ids {
		j := h.waitFor(id, 90*time.Second, func(j domain.Job) bool { return j.State.Terminal() })
		if j.State != domain.StateSucceeded {
			t.Errorf("%s ended %s: %s", id, j.State, j.Reason)
		}
		conflicts += j.Conflicts
	}
	close(stop)
	t.Logf("24 gangs done; %d reservation conflicts; %d mid-run invariant checks", conflicts, <-checked)
	h.checkInvariants()
}

// TestRandomFaults kills and restarts services and agents at random (fixed
// seed) while a stream of jobs runs, then checks every job is accounted for
// and the invariants hold.
func TestRandomFaults(t *testing.T) {
	if testing.Short() {
		t.Skip("fault injection takes ~1 minute")
	}
	const seed, rounds, jobsN = 2026, 16, 16
	h := newHarness(t, devcluster.Config{
		Nodes: 4, Leaves: 2, Replicas: 2,
		NodeTTL: 2 * time.Second, ReservationTTL: 2 * time.Second, LaunchTimeout: 6 * time.Second,
	})
	rng := rand.New(rand.NewPCG(seed, seed))
	var ids []string
	// Two long jobs get cancelled mid-way (cancel under faults); the rest
	// must succeed however often their gang is lost.
	cancelled := map[string]bool{"f-0": true, "f-1": true}
	for i := range jobsN {
		secs := 1 + rng.IntN(2)
		if cancelled[fmt.Sprintf("f-%d", i)] {
			secs = 300
		}
		ids = append(ids, h.submit(fmt.Sprintf(
			`{"id":"f-%d","gang":{"nodes":%d,"gpusPerNode":%d},"command":["sleep","%d"],"restartPolicy":{"maxRestarts":50}}`,
			i, 1+rng.IntN(2), []int{4, 8}[rng.IntN(2)], secs)))
	}
	services := h.c.Services()
	var log []string
	for r := range rounds {
		if r == rounds/2 {
			for id := range cancelled {
				if err := h.cl.Cancel(context.Background(), id, "fault test"); err != nil {
					t.Fatal(err)
				}
			}
		}
		victim := services[rng.IntN(len(services))]
		time.Sleep(time.Duration(200+rng.IntN(500)) * time.Millisecond)
		h.c.Kill(victim)
		time.Sleep(time.Duration(300+rng.IntN(1200)) * time.Millisecond)
		h.c.Start(victim)
		log = append(log, fmt.Sprintf("%d:%s", r, victim))
	}
	// Last round: everything at once, agents included.
	for _, s := range services {
		h.c.Kill(s)
	}
	time.Sleep(time.Second)
	for _, s := range services {
		h.c.Start(s)
	}
	t.Logf("seed %d, %d single-service fault rounds then one kill-all: %s", seed, rounds, strings.Join(log, " "))

	states := map[domain.State]int{}
	for _, id := range ids {
		j := h.waitFor(id, 120*time.Second, func(j domain.Job) bool { return j.State.Terminal() })
		states[j.State]++
		want := domain.StateSucceeded
		if cancelled[id] {
			want = domain.StateCancelled
		}
		if j.State != want {
			t.Errorf("%s ended %s (%s), want %s", id, j.State, j.Reason, want)
		}
	}
	t.Logf("outcomes: %v", states)
	h.checkInvariants()
	for _, p := range []string{store.ClaimsPrefix, store.AllocPrefix, store.AssignPrefix, store.PortsPrefix} {
		testenv.Eventually(t, 15*time.Second, func() error {
			if n := h.keysUnder(p); n != 0 {
				return fmt.Errorf("%d keys left under %s after every job ended", n, p)
			}
			return nil
		})
	}
	all, err := h.jobs.List(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, j := range all {
		got = append(got, j.ID)
	}
	sort.Strings(got)
	sort.Strings(ids)
	if strings.Join(got, ",") != strings.Join(ids, ",") {
		t.Errorf("job records %v, submitted %v", got, ids)
	}
}

// TestRacingProposalsAreAllOrNothing sends many overlapping proposals at
// once straight to the two gang replicas (placement stopped, so nothing
// else proposes): every gang must end up with all of its GPUs or none, the
// losers see conflicts that name the held slots, and once placement is back
// every job runs.
func TestRacingProposalsAreAllOrNothing(t *testing.T) {
	h := newHarness(t, devcluster.Config{Nodes: 3, Replicas: 2})
	h.c.StopService("placement-1")
	h.c.StopService("placement-2")
	const n = 12
	var ids []string
	for i := range n {
		ids = append(ids, h.submit(fmt.Sprintf(`{"id":"race-%d","gang":{"nodes":2,"gpusPerNode":8},"command":["sleep","0.3"]}`, i)))
	}
	for _, id := range ids {
		h.waitFor(id, 20*time.Second, func(j domain.Job) bool { return j.State == domain.StatePending })
	}
	nodes := []string{"node-01", "node-02", "node-03"}
	ctx := context.Background()
	for i, id := range ids {
		a, b := nodes[i%3], nodes[(i+1)%3]
		p := domain.Placement{MasterAddr: "127.0.0.1", MasterPort: 29500 + i, Nodes: []domain.NodePlacement{
			{Node: a, NodeRank: 0, GPUs: []int{0, 1, 2, 3, 4, 5, 6, 7}, Ranks: ranks(0, 8)},
			{Node: b, NodeRank: 1, GPUs: []int{0, 1, 2, 3, 4, 5, 6, 7}, Ranks: ranks(8, 8)},
		}}
		prop := domain.Proposal{JobID: id, Attempt: 1, Placement: p, ProposedAt: time.Now()}
		if err := h.cl.Bus().PublishJSON(ctx, subjects.Reserve, "race."+id, prop); err != nil {
			t.Fatal(err)
		}
	}
	// Wait until every proposal is answered: reserved (or beyond) or conflict.
	winners := 0
	testenv.Eventually(t, 20*time.Second, func() error {
		winners = 0
		for _, id := range ids {
			j := h.job(id)
			switch {
			case j.State != domain.StatePending:
				winners++
			case j.Conflicts == 0:
				return fmt.Errorf("%s not answered yet", id)
			}
		}
		return nil
	})
	if winners < 1 {
		t.Fatal("no proposal won")
	}
	// All or nothing, checked on etcd directly while the winner holds.
	s, err := invariants.Collect(ctx, h.etcd, h.jobs)
	if err != nil {
		t.Fatal(err)
	}
	held := map[string]int{}
	for _, c := range s.Claims {
		held[c.Job]++
	}
	for job, count := range held {
		if count != 16 {
			t.Errorf("%s holds %d GPUs: a partial gang", job, count)
		}
	}
	for _, v := range invariants.Evaluate(s) {
		if v.Rule == invariants.RuleDoubleClaim {
			t.Error(v)
		}
	}
	for _, id := range ids {
		for _, ev := range h.events(id) {
			if ev.Type == events.Conflict && (len(ev.Conflicts) == 0 || !strings.Contains(ev.Reason, "held by")) {
				t.Errorf("%s conflict event does not name the held slots: %+v", id, ev)
			}
		}
	}
	t.Logf("%d of %d racing proposals won; the rest were told who holds their GPUs", winners, n)

	h.c.Start("placement-1")
	h.c.Start("placement-2")
	for _, id := range ids {
		j := h.waitFor(id, 60*time.Second, func(j domain.Job) bool { return j.State.Terminal() })
		if j.State != domain.StateSucceeded {
			t.Errorf("%s ended %s: %s", id, j.State, j.Reason)
		}
	}
	h.checkInvariants()
}

func ranks(first, n int) []domain.Rank {
	out := make([]domain.Rank, n)
	for i := range out {
		out[i] = domain.Rank{Rank: first + i, LocalRank: i, GPUs: []int{i}}
	}
	return out
}
