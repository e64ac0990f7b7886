package live

import (
	"context"
	"log/slog"
	"maps"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cockroachdb/errors"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/lockstep-dev/lockstep/shared/contract/codec"
	"github.com/lockstep-dev/lockstep/shared/contract/domain"
	"github.com/lockstep-dev/lockstep/shared/contract/subjects"
	"github.com/lockstep-dev/lockstep/shared/plumbing/bus"
	"github.com/lockstep-dev/lockstep/shared/plumbing/store"
)

// agents hosts many virtual nodes: shared leases, one assignment watch,
// a pool of report publishers.
type agents struct {
	etcd *clientv3.Client
	bus  *bus.Bus
	log  *slog.Logger

	nodes map[string]int64 // node -> epoch (its lease)

	mu       sync.Mutex
	launched map[string]launchedAt  // "<node>/<job>" -> what it started
	exits    map[string]*time.Timer // pending exits by the same key
	// launches times each job's latest attempt's starts, for the report's
	// legs of a job's latency (launchStages).
	launches map[string]launch

	reports chan domain.Report
	wg      sync.WaitGroup

	// Counters for the report.
	started, exited, lost, failedPubs atomic.Int64
}

func newAgents(cli *clientv3.Client, b *bus.Bus, log *slog.Logger) *agents {
	return &agents{
		etcd: cli, bus: b, log: log, nodes: map[string]int64{},
		launched: map[string]launchedAt{}, exits: map[string]*time.Timer{}, launches: map[string]launch{},
		reports: make(chan domain.Report, 1<<16),
	}
}

// register puts every node under leases of perLease nodes each, kept
// alive until ctx ends, and starts the publishers.
func (a *agents) register(ctx context.Context, nodes []domain.Node, perLease int, ttl time.Duration) error {
	for start := 0; start < len(nodes); start += perLease {
		group := nodes[start:min(start+perLease, len(nodes))]
		lease, err := a.etcd.Grant(ctx, int64(ttl/time.Second))
		if err != nil {
			return errors.Wrap(err, "grant virtual node lease")
		}
		ka, err := a.etcd.KeepAlive(ctx, lease.ID)
		if err != nil {
			return errors.Wrap(err, "keep virtual node lease alive")
		}
		go func() {
			for range ka {
			}
			if ctx.Err() == nil {
				a.log.Error("virtual node lease lost: its nodes are down", "lease", int64(lease.ID))
			}
		}()
		// Batches of 50 nodes (100 puts) per transaction: etcd allows 128.
		for b := 0; b < len(group); b += 50 {
			var ops []clientv3.Op
			for _, n := range group[b:min(b+50, len(group))] {
				n.Epoch = int64(lease.ID)
				inv := n
				inv.Epoch = 0
				ops = append(ops,
					clientv3.OpPut(store.NodeKey(n.Name), store.MustJSON(n), clientv3.WithLease(lease.ID)),
					clientv3.OpPut(store.InventoryKey(n.Name), store.MustJSON(inv)))
				a.nodes[n.Name] = n.Epoch
			}
			if _, err := a.etcd.Txn(ctx).Then(ops...).Commit(); err != nil {
				return errors.Wrap(err, "register virtual nodes")
			}
		}
	}
	for range 32 {
		a.wg.Add(1)
		go a.publisher(ctx)
	}
	return nil
}

// unregister deletes the nodes' keys (liveness and inventory), so an
// external cluster is left as it was.
func (a *agents) unregister(ctx context.Context) {
	var ops []clientv3.Op
	flush := func() {
		if len(ops) > 0 {
			_, _ = a.etcd.Txn(ctx).Then(ops...).Commit()
			ops = ops[:0]
		}
	}
	for n := range a.nodes {
		ops = append(ops, clientv3.OpDelete(store.NodeKey(n)), clientv3.OpDelete(store.InventoryKey(n)))
		if len(ops) >= 100 {
			flush()
		}
	}
	flush()
}

// follow watches assign/ for every virtual node until ctx ends.
func (a *agents) follow(ctx context.Context, ready chan<- struct{}) error {
	resp, err := a.etcd.Get(ctx, store.AssignPrefix, clientv3.WithPrefix())
	if err != nil {
		return errors.Wrap(err, "list assignments")
	}
	for _, kv := range resp.Kvs {
		a.assigned(string(kv.Key), kv.Value, kv.CreateRevision)
	}
	wch := a.etcd.Watch(clientv3.WithRequireLeader(ctx), store.AssignPrefix, clientv3.WithPrefix(),
		clientv3.WithRev(resp.Header.Revision+1))
	close(ready)
	for wr := range wch {
		if err := wr.Err(); err != nil {
			return errors.Wrap(err, "watch assignments")
		}
		for _, ev := range wr.Events {
			if ev.Type == clientv3.EventTypePut {
				a.assigned(string(ev.Kv.Key), ev.Kv.Value, ev.Kv.CreateRevision)
			} else {
				a.released(string(ev.Kv.Key))
			}
		}
	}
	if ctx.Err() != nil {
		return nil
	}
	return errors.New("assignment watch closed")
}

// splitAssignKey returns node and job of assign/<node>/<job>.
func splitAssignKey(key string) (node, job string, ok bool) {
	rest, found := strings.CutPrefix(key, store.AssignPrefix)
	if !found {
		return "", "", false
	}
	return strings.Cut(rest, "/")
}

// launched is what a virtual agent reads of its assignment
// (domain.Assignment): a real agent's work on the ranks, environment and
// the rest is another machine's, not this process's to measure.
type launched struct {
	JobID   string   `json:"jobId"`
	Attempt int      `json:"attempt"`
	Epoch   int64    `json:"epoch"`
	Command []string `json:"command"`
}

// launchedAt is the attempt a virtual node started for a job, and the
// CreateRevision of the assignment key it started it from.
type launchedAt struct {
	attempt int
	created int64
}

// assigned starts the assignment at key, created at revision created.
// The launch barrier puts every assignment of the gang again, value kept
// (etcd's IgnoreValue): the same key at the same CreateRevision, already
// started, is skipped without decoding, as half of the assignment events
// a job makes are those.
func (a *agents) assigned(key string, raw []byte, created int64) {
	node, job, ok := splitAssignKey(key)
	epoch, mine := a.nodes[node]
	if !ok || !mine {
		return
	}
	k := node + "/" + job
	a.mu.Lock()
	again := a.launched[k].created == created
	a.mu.Unlock()
	if again {
		return
	}
	var as launched
	if err := codec.Decode(raw, &as); err != nil {
		a.log.Warn("undecodable assignment", "key", key, "err", err)
		return
	}
	// As a real agent does (services/agent assignmentIsFor): an assignment filed under
	// one job's key that names another is not started.
	if as.JobID != job {
		a.log.Warn("assignment names another job than its key", "key", key, "job", as.JobID)
		return
	}
	a.mu.Lock()
	if last, ok := a.launched[k]; ok && last.attempt >= as.Attempt {
		a.mu.Unlock()
		return // a replay
	}
	if as.Epoch != epoch {
		a.mu.Unlock()
		a.lost.Add(1)
		a.report(domain.Report{JobID: as.JobID, Attempt: as.Attempt, Node: node, Kind: domain.ReportLost,
			Reason: "virtual agent: assignment for another registration"})
		return
	}
	a.launched[k] = launchedAt{attempt: as.Attempt, created: created}
	if t := a.exits[k]; t != nil {
		t.Stop() // an older attempt still "running" here: superseded
	}
	run := runTime(as.Command)
	a.exits[k] = time.AfterFunc(run, func() {
		a.mu.Lock()
		cur, ok := a.launched[k]
		delete(a.exits, k)
		a.mu.Unlock()
		if ok && cur.attempt == as.Attempt {
			a.exited.Add(1)
			a.report(domain.Report{JobID: as.JobID, Attempt: as.Attempt, Node: node, Kind: domain.ReportExited})
		}
	})
	a.mu.Unlock()
	a.started.Add(1)
	a.report(domain.Report{JobID: as.JobID, Attempt: as.Attempt, Node: node, Kind: domain.ReportStarted})
}

// released handles a deleted assignment: the ranks would be stopped, so
// the pending exit is dropped (the real agent reports nothing for ranks it
// was told to stop).
func (a *agents) released(key string) {
	node, job, ok := splitAssignKey(key)
	if _, mine := a.nodes[node]; !ok || !mine {
		return
	}
	k := node + "/" + job
	a.mu.Lock()
	if t := a.exits[k]; t != nil {
		t.Stop()
		delete(a.exits, k)
	}
	delete(a.launched, k)
	a.mu.Unlock()
}

// runTime is how long `sleep N` runs; other commands run a second.
func runTime(cmd []string) time.Duration {
	if len(cmd) == 2 && cmd[0] == "sleep" {
		if s, err := strconv.ParseFloat(cmd[1], 64); err == nil && s >= 0 {
			return time.Duration(s * float64(time.Second))
		}
	}
	return time.Second
}

func (a *agents) report(r domain.Report) {
	r.Time = time.Now().UTC()
	if r.Kind == domain.ReportStarted {
		a.mu.Lock()
		a.launches[r.JobID] = a.launches[r.JobID].started(r.Attempt, r.Time)
		a.mu.Unlock()
	}
	a.reports <- r
}

// launch is when the last of a job's nodes started its attempt.
type launch struct {
	attempt int
	seen    time.Time
}

// started adds a node's start of attempt, seen at t.
func (l launch) started(attempt int, t time.Time) launch {
	if attempt > l.attempt {
		l = launch{attempt: attempt}
	}
	if attempt == l.attempt && t.After(l.seen) {
		l.seen = t
	}
	return l
}

// launchTimes copies the launches, by job.
func (a *agents) launchTimes() map[string]launch {
	a.mu.Lock()
	defer a.mu.Unlock()
	return maps.Clone(a.launches)
}

// publisher sends reports with the real agent's de-duplication IDs,
// retrying like it does.
func (a *agents) publisher(ctx context.Context) {
	defer a.wg.Done()
	for {
		select {
		case <-ctx.Done():
			return
		case r := <-a.reports:
			msgID := r.MsgID()
			for i := range 10 {
				err := a.bus.PublishJSON(ctx, subjects.ReportFrom(r.Node), msgID, r)
				if err == nil || ctx.Err() != nil {
					break
				}
				if i == 9 {
					a.failedPubs.Add(1)
					a.log.Warn("report not published", "job", r.JobID, "kind", r.Kind, "err", err)
					break
				}
				select {
				case <-ctx.Done():
				case <-time.After(time.Duration(i+1) * 200 * time.Millisecond):
				}
			}
		}
	}
}

// stop cancels pending exits.
func (a *agents) stop() {
	a.mu.Lock()
	for k, t := range a.exits {
		t.Stop()
		delete(a.exits, k)
	}
	a.mu.Unlock()
}
