//go:build compose

package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/lockstep-dev/lockstep/shared/contract/domain"
	"github.com/lockstep-dev/lockstep/shared/contract/events"
	"github.com/lockstep-dev/lockstep/shared/plumbing/testenv"
)

// jobSecs is how long the jobs of each fault's load run: long enough to be
// running when the fault hits, short enough to keep the whole run in
// minutes.
const jobSecs = 20

// load is the gangs running when a fault hits: 44 of the 64 GPUs, so a
// gang requeued off a lost node fits on the nodes left.
var load = []spec{{2, 8, jobSecs}, {2, 8, jobSecs}, {1, 8, jobSecs}, {1, 4, jobSecs}}

// probe is a short job submitted right after a fault: how soon it runs is
// how soon the cluster schedules again.
var probe = spec{1, 4, 1}

var allNodes = []string{"node-01", "node-02", "node-03", "node-04", "node-05", "node-06", "node-07", "node-08"}

// TestComposeFaults runs, in turn, each fault of the compose cluster under
// a stream of jobs, then checks every job ended as it must, `lockstep check`
// is clean and nothing is left claimed. It logs each fault's recovery time.
func TestComposeFaults(t *testing.T) {
	began := time.Now()
	var failed failures
	// Registered before the cluster's teardown, so it runs after it: the
	// failures are the last lines before the verdict.
	t.Cleanup(func() {
		if s := failed.summary(); s != "" {
			t.Log(s)
		}
	})
	c := startCluster(failed.recording(t, "start"))
	stop := c.sampleInvariants(failed.recording(t, "mid-run"))
	var summary []string
	phases := []struct {
		name string
		run  func(t testing.TB, c *cluster, name string) string
	}{
		{"smoke", smoke},
		{"auth", authRefused},
		{"kill-nats", killNATS},
		{"kill-etcd", killEtcd},
		{"kill-services", killServices},
		{"kill-agent", killAgent},
		{"disconnect-agent", disconnectAgent},
		{"pause-etcd", pauseEtcd},
	}
	for i, p := range phases {
		t.Run(p.name, func(tt *testing.T) {
			t := failed.recording(tt, p.name)
			if i > 0 {
				c.heal(t) // undo whatever a failed phase left broken
			}
			start := time.Now()
			line := p.run(t, c, p.name)
			c.settle(t, 3*time.Minute)
			c.checkClean(t)
			summary = append(summary, fmt.Sprintf("%-17s %s (phase %s)", p.name, line, time.Since(start).Round(time.Second)))
		})
	}
	samples := stop()
	c.mu.Lock()
	n := len(c.want)
	c.mu.Unlock()
	t.Logf("recovery times (fault → affected jobs running again):\n  %s\n%d jobs, %d mid-run invariant samples, total %s",
		strings.Join(summary, "\n  "), n, samples, time.Since(began).Round(time.Second))
}

// startLoad submits the load for a phase and waits until it all runs.
func startLoad(t testing.TB, c *cluster, name string) []string {
	t.Helper()
	var ids []string
	for i, s := range load {
		ids = append(ids, c.submit(t, fmt.Sprintf("%s-%d", name, i), s, domain.StateSucceeded))
	}
	c.waitJobs(t, ids, time.Now(), 90*time.Second, running)
	return ids
}

// attempts records each job's current attempt.
func attempts(t testing.TB, c *cluster, ids []string) map[string]int {
	t.Helper()
	out := map[string]int{}
	for _, id := range ids {
		j := c.mustJob(t, id)
		out[id] = j.Attempt
	}
	return out
}

// restarted lists the jobs whose attempt moved on.
func restarted(t testing.TB, c *cluster, before map[string]int) []string {
	t.Helper()
	var out []string
	for id, a := range before {
		j := c.mustJob(t, id)
		if j.Attempt > a {
			out = append(out, id)
		}
	}
	slices.Sort(out)
	return out
}

func runningOrDone(j domain.Job) bool { return j.State == domain.StateRunning || j.State.Terminal() }

// runProbe submits a probe job and returns how long after the fault it ran.
func runProbe(t testing.TB, c *cluster, name string, fault time.Time) time.Duration {
	t.Helper()
	id := c.submit(t, name+"-probe", probe, domain.StateSucceeded)
	d := c.waitJobs(t, []string{id}, fault, 90*time.Second, runningOrDone)[id]
	t.Logf("probe %s: %s", id, c.timeline(t, id, fault))
	return d
}

func smoke(t testing.TB, c *cluster, name string) string {
	ids := startLoad(t, c, name)
	p := runProbe(t, c, name, time.Now())
	if !c.jaeger {
		t.Logf("LOCKSTEP_E2E_JAEGER=0: Jaeger not built or started, its check skipped")
		return fmt.Sprintf("no fault: %d jobs running, probe running in %s", len(ids), ms(p))
	}
	// Every process exports its spans to Jaeger over OTLP.
	var traced []string
	testenv.EventuallyEvery(t, 60*time.Second, time.Second, func() error {
		var err error
		if traced, err = jaegerServices(); err != nil {
			return err
		}
		for _, want := range []string{"lockstep-admission", "lockstep-placement", "lockstep-gang", "lockstep-agent"} {
			if !slices.Contains(traced, want) {
				return fmt.Errorf("jaeger has no spans from %s yet (has %v)", want, traced)
			}
		}
		return nil
	})
	return fmt.Sprintf("no fault: %d jobs running, probe running in %s; Jaeger has spans from %v", len(ids), ms(p), traced)
}

// jaegerServices lists the services Jaeger holds spans of, through its
// query API on the published UI port.
func jaegerServices() ([]string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, jaegerURL+"/api/services", nil)
	if err != nil {
		return nil, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	var body struct {
		Data []string `json:"data"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		return nil, err
	}
	slices.Sort(body.Data)
	return body.Data, nil
}

// killNATS kills the NATS server that leads the job records' stream, then
// restarts it. Streams are R3: the other two keep a quorum.
func killNATS(t testing.TB, c *cluster, name string) string {
	ids := startLoad(t, c, name)
	before := attempts(t, c, ids)
	victim := c.natsJobsLeader(t)
	fault := time.Now()
	c.mustDocker(t, "kill", container(victim))
	p := runProbe(t, c, name, fault)
	c.mustDocker(t, "start", container(victim))
	h := c.waitHealthy(t, victim, 90*time.Second)
	re := restarted(t, c, before)
	return fmt.Sprintf("killed %s (job records' stream leader): probe running %s after; %d of %d running jobs requeued %v; back healthy %s after restart",
		victim, ms(p), len(re), len(ids), re, ms(h))
}

// killEtcd kills the etcd leader, then restarts it.
func killEtcd(t testing.TB, c *cluster, name string) string {
	ids := startLoad(t, c, name)
	before := attempts(t, c, ids)
	victim := c.etcdLeader(t)
	fault := time.Now()
	c.mustDocker(t, "kill", container(victim))
	p := runProbe(t, c, name, fault)
	downs := c.nodeDownsSince(t, allNodes, fault)
	c.mustDocker(t, "start", container(victim))
	h := c.waitHealthy(t, victim, 90*time.Second)
	re := restarted(t, c, before)
	if len(re) > 0 {
		c.waitJobs(t, re, fault, 2*time.Minute, runningAgain(before))
	}
	return fmt.Sprintf("killed %s (leader): probe running %s after; node-down events %v; %d of %d running jobs requeued %v; back healthy %s after restart",
		victim, ms(p), downs, len(re), len(ids), re, ms(h))
}

// killServices kills one replica of each service — admission, the placement
// leader, gang, drain — while a load is being scheduled and a cancel is in
// flight, then restarts them.
func killServices(t testing.TB, c *cluster, name string) string {
	leader := c.placementLeader(t)
	victims := []string{"admission-1", leader, "gang-1", "drain-1"}
	long := c.submit(t, name+"-cancel", spec{1, 4, 300}, domain.StateCancelled)
	c.waitJobs(t, []string{long}, time.Now(), 90*time.Second, running)
	var ids []string
	for i, s := range load {
		ids = append(ids, c.submit(t, fmt.Sprintf("%s-%d", name, i), s, domain.StateSucceeded))
	}
	fault := time.Now()
	for _, v := range victims {
		c.mustDocker(t, "kill", container(v))
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	err := c.cl.Cancel(ctx, long, "compose fault test")
	cancel()
	if err != nil {
		t.Fatal(err)
	}
	got := c.waitJobs(t, ids, fault, 2*time.Minute, running)
	var worst time.Duration
	for _, d := range got {
		worst = max(worst, d)
	}
	p := runProbe(t, c, name, fault)
	cancelled := c.waitJobs(t, []string{long}, fault, time.Minute, func(j domain.Job) bool { return j.State == domain.StateCancelled })[long]
	for _, v := range victims {
		c.mustDocker(t, "start", container(v))
	}
	for _, v := range victims {
		c.waitHealthy(t, v, 90*time.Second)
	}
	if now := c.placementLeader(t); now == leader {
		t.Logf("placement leadership went back to %s after its restart", now)
	}
	return fmt.Sprintf("killed %s during scheduling: load running %s after, probe %s, cancel done %s after",
		strings.Join(victims, ", "), ms(worst), ms(p), ms(cancelled))
}

// victimOf picks a running 2-node gang of the load and the node to lose:
// its second node, so the first survives and must stop its ranks.
func victimOf(t testing.TB, c *cluster, ids []string) (job domain.Job, lost, survivor string) {
	t.Helper()
	for _, id := range ids {
		j := c.mustJob(t, id)
		if j.State == domain.StateRunning && j.Placement != nil && len(j.Placement.Nodes) == 2 {
			return j, j.Placement.Nodes[1].Node, j.Placement.Nodes[0].Node
		}
	}
	t.Fatal("no running 2-node gang in the load")
	return
}

// onNode lists the jobs whose current placement uses node.
func onNode(t testing.TB, c *cluster, ids []string, node string) []string {
	t.Helper()
	var out []string
	for _, id := range ids {
		j := c.mustJob(t, id)
		if j.Placement == nil {
			continue
		}
		for _, np := range j.Placement.Nodes {
			if np.Node == node {
				out = append(out, id)
			}
		}
	}
	return out
}

// killAgent kills a node's container: its gangs must stop on every node and
// be requeued elsewhere, and the node must show down within the lease TTL.
// The node then comes back and must get no stale work.
func killAgent(t testing.TB, c *cluster, name string) string {
	ids := startLoad(t, c, name)
	before := attempts(t, c, ids)
	victim, lost, survivor := victimOf(t, c, ids)
	affected := onNode(t, c, ids, lost)
	fault := time.Now()
	c.mustDocker(t, "kill", container(lost))

	down := c.nodeEventAfter(t, lost, events.NodeDown, fault, 30*time.Second)
	detect := down.Time.Sub(fault)
	if detect > nodeTTL+3*time.Second {
		t.Errorf("node-down %s after the kill, want within the %s lease TTL plus slack", ms(detect), nodeTTL)
	}
	got := c.waitJobs(t, affected, fault, 2*time.Minute, runningAgain(before))
	var worst time.Duration
	for _, d := range got {
		worst = max(worst, d)
	}
	for _, id := range affected {
		if slices.Contains(onNode(t, c, []string{id}, lost), id) {
			t.Errorf("%s was requeued onto the lost node %s", id, lost)
		}
	}
	// The surviving node of the lost gang runs nothing of the old attempt.
	c.assertNoAssignment(t, survivor, victim.ID, victim.Attempt)
	testenv.EventuallyEvery(t, 15*time.Second, 250*time.Millisecond, func() error {
		n, err := c.ranksOn(t, survivor, victim.ID, victim.Attempt)
		if err == nil && n > 0 {
			err = fmt.Errorf("%s still runs %d ranks of %s attempt %d", survivor, n, victim.ID, victim.Attempt)
		}
		return err
	})

	// The node comes back: registered again, and no stale work.
	c.mustDocker(t, "start", container(lost))
	back := c.waitHealthy(t, lost, 60*time.Second)
	for _, id := range affected {
		c.assertNoAssignment(t, lost, id, before[id])
		if n, err := c.ranksOn(t, lost, id, before[id]); err != nil || n > 0 {
			t.Errorf("%s after its return runs %d ranks of %s attempt %d (%v)", lost, n, id, before[id], err)
		}
	}
	return fmt.Sprintf("killed %s (ran %v): node-down after %s (TTL %s); requeued gangs running again after %s; node back %s after restart, no stale work",
		lost, affected, ms(detect), nodeTTL, ms(worst), ms(back))
}

// disconnectAgent cuts a node off the network: once its lease is gone its
// ranks must stop (no split brain: the requeued gang must not run while the
// old ranks still do), and when it returns it must get no stale work.
func disconnectAgent(t testing.TB, c *cluster, name string) string {
	ids := startLoad(t, c, name)
	before := attempts(t, c, ids)
	victim, lost, _ := victimOf(t, c, ids)
	affected := onNode(t, c, ids, lost)
	fault := time.Now()
	c.mustDocker(t, "network", "disconnect", network, container(lost))

	// Watch the cut-off node's ranks from inside (docker exec needs no
	// network) until they are all gone. lastSeen is a moment they surely
	// still ran: the start of the last exec that found them.
	var lastSeen, goneAt time.Time
	testenv.EventuallyEvery(t, nodeTTL+20*time.Second, 200*time.Millisecond, func() error {
		polled := time.Now()
		total := 0
		for _, id := range affected {
			n, err := c.ranksOn(t, lost, id, before[id])
			if err != nil {
				return err
			}
			total += n
		}
		if total > 0 {
			lastSeen = polled
			return fmt.Errorf("%s still runs %d ranks of %v", lost, total, affected)
		}
		goneAt = time.Now()
		return nil
	})
	stopped := goneAt.Sub(fault)
	down := c.nodeEventAfter(t, lost, events.NodeDown, fault, 30*time.Second)
	got := c.waitJobs(t, affected, fault, 2*time.Minute, runningAgain(before))
	var worst time.Duration
	for _, d := range got {
		worst = max(worst, d)
	}

	// Split brain: did the requeued gang start elsewhere while the old
	// ranks still ran? The agents' logs say exactly when the old ranks
	// exited and the first new one started; without them, polling gives a
	// lower bound.
	j := c.mustJob(t, victim.ID)
	var newStart time.Time
	for _, np := range j.Placement.Nodes {
		if at, ok := c.agentLogTime(t, np.Node, fault, "ranks started", victim.ID, j.Attempt); ok && (newStart.IsZero() || at.Before(newStart)) {
			newStart = at
		}
	}
	if newStart.IsZero() {
		newStart = j.ReservedAt // just before the new ranks started
	}
	over, how := lastSeen.Sub(newStart), "at least, by polling"
	if exited, ok := c.agentLogTime(t, lost, fault, "ranks exited", victim.ID, victim.Attempt); ok {
		stopped, over, how = exited.Sub(fault), exited.Sub(newStart), "by the agents' logs"
	}
	overlap := ms(-over) + " margin, " + how
	if over > 0 {
		overlap = ms(over) + " OVERLAP, " + how
		// Known issue (reported, services/agent): the agent notices its
		// lease is gone only on its own deadline check (once a second)
		// after etcd expired it, and the gang may be requeued and started
		// elsewhere in that window. Up to about a second is that; more is
		// a regression.
		msg := fmt.Sprintf("split brain: %s's ranks of %s attempt %d ran %s (%s) after attempt %d started elsewhere",
			lost, victim.ID, victim.Attempt, ms(over), how, j.Attempt)
		if over > 1500*time.Millisecond {
			t.Error(msg)
		} else {
			knownIssue(t, "%s", msg)
		}
	}
	if at, ok := c.agentLogTime(t, lost, fault, "registration lost; stopping ranks and re-registering", "", 0); ok {
		t.Logf("%s: node-down (lease expired in etcd) %s after the cut; agent saw its lease lost %s after; its ranks exited %s after; attempt %d started elsewhere %s after",
			lost, ms(down.Time.Sub(fault)), ms(at.Sub(fault)), ms(stopped), j.Attempt, ms(newStart.Sub(fault)))
	}

	// Reconnect, with the service name as DNS alias (MASTER_ADDR) again.
	c.mustDocker(t, "network", "connect", "--alias", lost, network, container(lost))
	reconnected := time.Now()
	testenv.EventuallyEvery(t, 60*time.Second, 250*time.Millisecond, func() error {
		evs, err := c.nodeEvents(lost)
		if err != nil {
			return err
		}
		for _, e := range evs {
			if e.Type == events.NodeUp && e.Time.After(down.Time) {
				return nil
			}
		}
		return fmt.Errorf("%s has not registered again", lost)
	})
	back := time.Since(reconnected)
	for _, id := range affected {
		c.assertNoAssignment(t, lost, id, before[id])
		if n, err := c.ranksOn(t, lost, id, before[id]); err != nil || n > 0 {
			t.Errorf("%s after reconnecting runs %d ranks of %s attempt %d (%v)", lost, n, id, before[id], err)
		}
	}
	c.waitHealthy(t, lost, 60*time.Second)
	return fmt.Sprintf("cut %s off (ran %v): node-down after %s; its ranks stopped after %s (vs the requeued gang starting elsewhere: %s); requeued gangs running again after %s; re-registered %s after reconnecting, no stale work",
		lost, affected, ms(down.Time.Sub(fault)), ms(stopped), overlap, ms(worst), ms(back))
}

// pauseDuration is how long the etcd leader stays frozen: twice an agent's
// lease TTL, so a client stuck on the frozen member shows.
// LOCKSTEP_E2E_PAUSE (a Go duration) changes it.
func pauseDuration(t testing.TB) time.Duration {
	if v := os.Getenv("LOCKSTEP_E2E_PAUSE"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil {
			t.Fatalf("LOCKSTEP_E2E_PAUSE: %v", err)
		}
		return d
	}
	return 10 * time.Second
}

// pauseEtcd freezes the etcd leader (its connections stay open but nothing
// answers: a hung VM, a stalled disk), then thaws it. The other two keep a
// quorum and elect a leader within seconds, so the cluster should keep
// scheduling; every job must still end succeeded and the invariants hold.
func pauseEtcd(t testing.TB, c *cluster, name string) string {
	pauseDuration := pauseDuration(t)
	ids := startLoad(t, c, name)
	before := attempts(t, c, ids)
	victim := c.etcdLeader(t)
	fault := time.Now()
	c.mustDocker(t, "pause", container(victim))
	paused := true
	defer func() {
		if paused {
			_, _ = c.docker(t, "unpause", container(victim))
		}
	}()
	probeID := c.submit(t, name+"-probe", probe, domain.StateSucceeded)
	scheduled := func() bool {
		j, err := c.job(probeID)
		return err == nil && runningOrDone(j)
	}
	var p time.Duration
	duringPause := poll(time.Until(fault.Add(pauseDuration)), 100*time.Millisecond, scheduled)
	if duringPause {
		p = time.Since(fault)
	}
	time.Sleep(time.Until(fault.Add(pauseDuration))) // the fault lasts this long
	// The member runs again somewhere between these two times: docker's
	// CLI can take a second to return on a loaded machine, and a lease the
	// thawed old leader revokes meanwhile (below) is the thaw's doing, not
	// the pause's.
	unpausing := time.Now()
	c.mustDocker(t, "unpause", container(victim))
	paused = false
	thawed := time.Now()
	if !duringPause {
		p = c.waitJobs(t, []string{probeID}, fault, 2*time.Minute, runningOrDone)[probeID]
		// Known issue (reported): the services' and agents' etcd clients
		// do not ping their connections, so lease keep-alive streams,
		// watches and requests that went to the frozen member hang until it
		// thaws. Safety holds (checked after the phase); availability does
		// not.
		// The probe's events go into the message: the failure summary is
		// what the end of a long CI log keeps.
		knownIssue(t, "with etcd leader %s frozen, nothing was scheduled for the whole %s pause; the probe ran %s after the thaw (its events since the freeze: %s; placement and gang said: %s)",
			victim, pauseDuration, ms(time.Since(thawed)), c.timeline(t, probeID, fault),
			strings.Join(c.logLines(t, fault, []string{"leader elected", "session lost", "campaign failed", "scheduler stopped", "reservation not answered"},
				"placement-1", "placement-2", "gang-1", "gang-2"), "; "))
	}
	t.Logf("probe %s: %s", probeID, c.timeline(t, probeID, fault))
	h := c.waitHealthy(t, victim, 60*time.Second)
	downs := c.nodeDownsBetween(t, allNodes, fault, unpausing)
	if len(downs) > 0 {
		knownIssue(t, "agents lost their leases while one etcd member of three was frozen: %v", downs)
	}
	// etcd's own limit, not Lockstep's: the thawed old leader can revoke
	// every lease it believes expired before it learns it was replaced
	// (etcd v3.7.3 skips its leadership check when its raft ticker has just
	// ticked, which it does first thing after a freeze: see
	// EtcdServer.ensureLeadership). All leases, however recently renewed
	// through the new leader, vanish in the moment after the thaw; the gangs
	// are requeued and must still succeed (checked below), but it is not an
	// availability failure of ours, so it is reported, not failed.
	thawDowns := c.nodeDownsBetween(t, allNodes, unpausing, thawed.Add(3*time.Second))
	if len(thawDowns) > 0 {
		t.Logf("ETCD LIMIT: leases revoked at the thaw by the old etcd leader, nodes down: %v", thawDowns)
	}
	for n, k := range c.nodeDownsSince(t, allNodes, thawed.Add(3*time.Second)) {
		downs[n] += k
	}
	re := restarted(t, c, before)
	var worst time.Duration
	if len(re) > 0 {
		for _, d := range c.waitJobs(t, re, fault, 2*time.Minute, runningAgain(before)) {
			worst = max(worst, d)
		}
	}
	stuck := c.stuckJobs(t, append(ids, probeID))
	for id, why := range stuck {
		// Known issue (reported, services/agent): an agent that lost its
		// lease to the freeze re-registers through another member before
		// etcd expires the old lease, so its node never goes down; it then
		// ignores the old assignment (it remembers having launched it)
		// instead of reporting it lost. The gang stays "running" forever
		// with no rank anywhere. Cancel it so the checks after the phase
		// still mean something.
		knownIssue(t, "%s is stuck: %s", id, why)
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		err := c.cl.Cancel(ctx, id, "compose fault test: stuck after an etcd freeze")
		cancel()
		if err != nil {
			t.Fatal(err)
		}
		c.mu.Lock()
		c.want[id] = domain.StateCancelled
		c.mu.Unlock()
	}
	when := "during the pause"
	if !duringPause {
		when = "only after the thaw"
	}
	return fmt.Sprintf("froze %s (leader) for %s: probe running %s after, %s; node-down events %v (at the thaw, by etcd's old leader: %v); %d of %d running jobs requeued %v (running again after %s); %d stuck; healthy %s after the thaw",
		victim, pauseDuration, ms(p), when, downs, thawDowns, len(re), len(ids), re, ms(worst), len(stuck), ms(h))
}

// stuckJobs waits for jobs to end and returns those that cannot: running
// past their command's end with no rank of theirs left on any node.
func (c *cluster) stuckJobs(t testing.TB, ids []string) map[string]string {
	t.Helper()
	stuck := map[string]string{}
	poll(jobSecs*time.Second+time.Minute, time.Second, func() bool {
		waiting := 0
		for _, id := range ids {
			j, err := c.job(id)
			switch {
			case err != nil:
				waiting++
			case j.State.Terminal():
			case j.State == domain.StateRunning && time.Since(j.RunningAt) > (jobSecs+15)*time.Second:
				n := 0
				var nodes []string
				for _, np := range j.Placement.Nodes {
					k, err := c.ranksOn(t, np.Node, id, j.Attempt)
					if err != nil {
						k = 1 // unknown: not proven stuck
					}
					n += k
					nodes = append(nodes, np.Node)
				}
				if n == 0 {
					stuck[id] = fmt.Sprintf("running attempt %d on %v since %s, but no rank of it runs there",
						j.Attempt, nodes, j.RunningAt.Format(time.TimeOnly))
					continue
				}
				waiting++
			default:
				waiting++
			}
		}
		return waiting == 0
	})
	return stuck
}

// knownIssue reports a service bug this test has found and that is
// reported but not yet fixed: logged, so the run stays useful, or a
// failure with LOCKSTEP_E2E_STRICT=1 (set it once the bug is fixed).
func knownIssue(t testing.TB, format string, args ...any) {
	t.Helper()
	if v := os.Getenv("LOCKSTEP_E2E_STRICT"); v != "" && v != "0" {
		t.Errorf("KNOWN ISSUE (strict): "+format, args...)
		return
	}
	t.Logf("KNOWN ISSUE: "+format, args...)
}
