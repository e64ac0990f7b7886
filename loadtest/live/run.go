package live

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"strconv"
	"time"

	"github.com/cockroachdb/errors"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/lockstep-dev/lockstep/deploy/devcluster"
	"github.com/lockstep-dev/lockstep/loadtest/fabric"
	"github.com/lockstep-dev/lockstep/loadtest/trace"
	"github.com/lockstep-dev/lockstep/services/gang"
	"github.com/lockstep-dev/lockstep/shared/contract/jobspec"
	"github.com/lockstep-dev/lockstep/shared/contract/subjects"
	"github.com/lockstep-dev/lockstep/shared/plumbing/bus"
	"github.com/lockstep-dev/lockstep/shared/plumbing/connection"
	"github.com/lockstep-dev/lockstep/shared/plumbing/jobs"
	"github.com/lockstep-dev/lockstep/shared/plumbing/store"
)

// Config is one live load test.
type Config struct {
	// NATSURL and Etcd point at an existing cluster; both empty starts an
	// embedded devcluster on free loopback ports.
	NATSURL, Etcd string
	// Credentials are what the harness presents to NATS and etcd (the
	// zero value: anonymous, plain text). On a cluster with auth they must
	// be an admin's: the virtual agents report for every virtual node, and
	// the harness registers nodes in etcd and reads every job's events.
	// With an embedded cluster they are set from it.
	Credentials connection.Credentials
	// SubmitCreds is the creds file of the user the jobs are submitted as,
	// on their own subject (subjects.SubmitAs), as a user's pipeline does;
	// "" submits with Credentials' creds (their user's subject) or, with
	// none, on the shared subject.
	SubmitCreds string
	// Auth runs the embedded cluster with authentication, as `lockstep dev`
	// does by default: NATS in operator mode with one identity per service
	// and node, etcd over TLS with client certificates. The harness connects
	// as admin and submits as dev's user alice unless SubmitCreds is set.
	Auth bool
	// DataDir holds the embedded cluster's data (default: a temporary
	// directory, removed after).
	DataDir string
	// MetricsURL is the services' /metrics, read before and after the
	// load for placement's cycles ("": not read). With an embedded
	// cluster it is set from it.
	MetricsURL string
	// NoFsync turns the embedded etcd's fsync off (not for benchmarks).
	NoFsync bool
	// Cluster is the virtual nodes' layout.
	Cluster *fabric.Cluster
	// Jobs is the stream, sorted by Submit; durations are the virtual run
	// times.
	Jobs []trace.Job
	// TimeLimit is every job's timeLimit (0: none). The policy's
	// reservations, backfill and topology holds count on it.
	TimeLimit time.Duration
	// NodesPerLease virtual nodes share one etcd lease of LeaseTTL.
	NodesPerLease int
	LeaseTTL      time.Duration
	// RawTxns reservation transactions measure the raw etcd rate, from
	// RawWorkers concurrent clients, before and after the load (0 skips
	// it). RawWorkers defaults to the gang service's default worker count,
	// so the ratio compares the same concurrency: etcd batches concurrent
	// transactions into one fsync, so its rate grows with them.
	RawTxns, RawWorkers int
	// Drain bounds the wait, after the last submission, for every job to
	// end; Deadline bounds the whole load phase.
	Drain, Deadline time.Duration
	// Queue is the jobs' queue.
	Queue string
	// CPUProfile, when set, receives a CPU profile of the load phase.
	CPUProfile string
	// AllocProfile, when set, receives the heap profile at the end of the
	// load phase, and AllocProfile+".base" the one at its start: with
	// `go tool pprof -sample_index=alloc_space -base`, what the load
	// phase allocated and where.
	AllocProfile string
	Log          *slog.Logger
	// Progress, when set, is called about once a second with the share of
	// the stream submitted and the share ended.
	Progress func(submitted, ended float64)
}

func (c *Config) defaults() {
	if c.NodesPerLease <= 0 {
		c.NodesPerLease = 250
	}
	if c.LeaseTTL == 0 {
		c.LeaseTTL = store.DefaultNodeTTL
	}
	if c.RawWorkers <= 0 {
		c.RawWorkers = gang.DefaultWorkers
	}
	if c.Drain == 0 {
		c.Drain = 2 * time.Minute
	}
	if c.Deadline == 0 {
		c.Deadline = 30 * time.Minute
	}
	if c.Queue == "" {
		c.Queue = jobspec.DefaultQueue
	}
	if c.Log == nil {
		c.Log = slog.New(slog.DiscardHandler)
	}
}

func (c *Config) validate() error {
	switch {
	case (c.NATSURL == "") != (c.Etcd == ""):
		return errors.New("give both --nats and --etcd for an existing cluster, or neither for an embedded one")
	case c.Auth && c.NATSURL != "":
		return errors.New("Auth starts an embedded cluster with auth; an existing cluster's auth comes with its credentials")
	case c.Cluster == nil || len(c.Cluster.Nodes) == 0:
		return errors.New("no virtual nodes")
	case len(c.Jobs) == 0:
		return errors.New("no jobs to submit")
	}
	return nil
}

// Run drives one load test and measures it.
func Run(ctx context.Context, cfg Config) (*Result, error) {
	cfg.defaults()
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	runID := newRunID()
	res := &Result{RunID: runID, Mode: "external", NATS: cfg.NATSURL, Etcd: cfg.Etcd, Nodes: len(cfg.Cluster.Nodes),
		GPUs: cfg.Cluster.GPUs(), NodesPerLease: cfg.NodesPerLease}
	if cfg.NATSURL == "" {
		res.Mode = "embedded"
		stop, err := startEmbedded(ctx, &cfg)
		if err != nil {
			return nil, err
		}
		defer stop()
		res.NATS, res.Etcd = cfg.NATSURL, cfg.Etcd
	}
	b, err := bus.Connect(ctx, cfg.NATSURL, "lockstep-loadtest", cfg.Credentials.BusOptions()...)
	if err != nil {
		return nil, errors.WithHint(err, "a cluster with auth needs admin's credentials: --context, --creds and --etcd-ca/--etcd-cert/--etcd-key")
	}
	defer b.Close()
	if _, err := b.JS.Stream(ctx, subjects.StreamJobs); err != nil {
		return nil, errors.WithHint(errors.Wrap(err, "find the jobs stream"), "are Lockstep's services running against this NATS?")
	}
	sb, err := connectSubmitter(ctx, cfg)
	if err != nil {
		return nil, err
	}
	defer sb.Close()
	res.Auth = describeAuth(cfg.Credentials)
	res.SubmitSubject = submitSubject(sb)
	res.SubmittedAs = sb.Identity().Name
	cli, err := store.Connect(ctx, cfg.Etcd, store.WithCredentials(cfg.Credentials))
	if err != nil {
		return nil, err
	}
	defer cli.Close()

	actx, stopAgents := context.WithCancel(ctx)
	ag := newAgents(cli, b, cfg.Log)
	defer func() {
		stopAgents()
		ag.stop()
		uctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		ag.unregister(uctx)
	}()
	if err := ag.register(actx, cfg.Cluster.Nodes, cfg.NodesPerLease, cfg.LeaseTTL); err != nil {
		return nil, err
	}
	ready := make(chan struct{})
	watchErr := make(chan error, 1)
	go func() { watchErr <- ag.follow(actx, ready) }()
	select {
	case <-ready:
	case err := <-watchErr:
		return nil, err
	}

	shape := commonShape(cfg.Jobs)
	if cfg.RawTxns > 0 {
		raw, err := rawTxnRate(ctx, cli, shape, cfg.RawTxns, cfg.RawWorkers, runID+"-before")
		if err != nil {
			return nil, errors.Wrap(err, "raw etcd baseline")
		}
		res.RawBefore = &raw
	}

	f := newFollower(jobPrefix(runID))
	stopFollow, err := f.start(ctx, b)
	if err != nil {
		return nil, err
	}
	defer stopFollow()

	// The metrics are read outside the profiles and the measured CPU.
	cycles := startCycles(ctx, &cfg)
	if err := writeAllocProfile(cfg.AllocProfile, ".base"); err != nil {
		return nil, err
	}
	if cfg.CPUProfile != "" {
		pf, err := os.Create(cfg.CPUProfile)
		if err != nil {
			return nil, errors.Wrap(err, "cpu profile")
		}
		if err := pprof.StartCPUProfile(pf); err != nil {
			_ = pf.Close()
			return nil, errors.Wrap(err, "cpu profile")
		}
		defer func() { pprof.StopCPUProfile(); _ = pf.Close() }()
	}
	seqs := streamSeqs(ctx, b.JS)
	revBefore, revErr := etcdRevision(ctx, cli)
	usage := startUsage()
	lctx, cancel := context.WithTimeout(ctx, cfg.Deadline)
	defer cancel()
	t0 := time.Now()
	sub := submit(lctx, sb, f, cfg, runID, t0)
	res.DeadlineHit = waitEnded(lctx, f, cfg, sub) && lctx.Err() != nil && ctx.Err() == nil
	res.Usage = usage.stop(res.Mode == "embedded")
	res.Streams = streamDelta(seqs, streamSeqs(ctx, b.JS))
	if !res.DeadlineHit {
		waitReleased(ctx, cli, jobPrefix(runID), 5*time.Second)
	}
	revAfter, err := etcdRevision(ctx, cli)
	if cfg.CPUProfile != "" {
		pprof.StopCPUProfile()
	}
	if err := writeAllocProfile(cfg.AllocProfile, ""); err != nil {
		return nil, err
	}
	res.Placement = cycles.stop(ctx)
	if revErr == nil && err == nil {
		// Read from etcd's history now that the load is measured.
		if res.EtcdWrites, err = etcdWritesBetween(ctx, cli, revBefore, revAfter); err != nil {
			cfg.Log.Warn("etcd writes not counted", "err", err)
		}
	}
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}

	if cfg.RawTxns > 0 {
		raw, err := rawTxnRate(ctx, cli, shape, cfg.RawTxns, cfg.RawWorkers, runID+"-after")
		if err != nil {
			return nil, errors.Wrap(err, "raw etcd baseline")
		}
		res.RawAfter = &raw
	}
	records, err := conflictsRecorded(ctx, b, jobPrefix(runID))
	if err != nil {
		cfg.Log.Warn("job records not read", "err", err)
	}
	res.Agents = AgentStats{Started: ag.started.Load(), Exited: ag.exited.Load(), Lost: ag.lost.Load(), PublishFailures: ag.failedPubs.Load()}
	res.compute(cfg, t0, sub, f, records, ag.launchTimes())
	return res, nil
}

func newRunID() string {
	var b [3]byte
	_, _ = rand.Read(b[:])
	return time.Now().UTC().Format("0102-1504") + "-" + hex.EncodeToString(b[:])
}

// jobPrefix starts every job ID of a run, so its events are told apart
// from other work on a shared cluster.
func jobPrefix(runID string) string { return "lt-" + runID + "-" }

// devUser is the user of `lockstep dev` (one of the two it issues creds
// for) the jobs are submitted as on an embedded cluster with auth.
const devUser = "alice"

// startEmbedded starts a devcluster and stops its one real agent.
func startEmbedded(ctx context.Context, cfg *Config) (func(), error) {
	dir, tmp := cfg.DataDir, false
	if dir == "" {
		d, err := os.MkdirTemp("", "lockstep-loadtest-")
		if err != nil {
			return nil, errors.Wrap(err, "data dir")
		}
		dir, tmp = d, true
	}
	real := devcluster.SimulatedNodes(1, 8, 1)[0]
	c, err := devcluster.Start(ctx, devcluster.Config{
		DataDir: dir, NATSListen: "127.0.0.1:0", EtcdListen: "127.0.0.1:0",
		Nodes: 1, GPUsPerNode: 8, Leaves: 1, NoFsync: cfg.NoFsync, Log: cfg.Log, NoSpanFile: true, Auth: cfg.Auth,
		MetricsAddr: "127.0.0.1:0",
	})
	if err != nil {
		if tmp {
			_ = os.RemoveAll(dir)
		}
		return nil, err
	}
	// The devcluster needs one real node; every job should land on
	// virtual ones, so its agent goes (and its node with it).
	c.StopService(devcluster.AgentName(real.Name))
	cfg.NATSURL, cfg.Etcd = c.NATSURL, c.EtcdEndpoint
	cfg.MetricsURL = "http://" + c.MetricsAddr() + "/metrics"
	if cfg.Auth {
		cfg.Credentials = c.Admin
		if cfg.SubmitCreds == "" {
			cfg.SubmitCreds = filepath.Join(c.CredsDir, devUser+".creds")
		}
	}
	return func() {
		c.Stop()
		if tmp {
			_ = os.RemoveAll(dir)
		}
	}, nil
}

// commonShape is the stream's most frequent multi-node shape (2×8 when it
// has none): the raw baseline's transaction shape.
func commonShape(jobs []trace.Job) trace.Shape {
	count := map[trace.Shape]int{}
	best, n := trace.Shape{Nodes: 2, GPUsPerNode: 8}, 0
	for _, j := range jobs {
		s := trace.Shape{Nodes: j.Nodes, GPUsPerNode: j.GPUsPerNode}
		if s.Nodes < 2 {
			continue
		}
		count[s]++
		if count[s] > n || (count[s] == n && s.String() < best.String()) {
			best, n = s, count[s]
		}
	}
	return best
}

// submission is what the submitter did.
type submission struct {
	submitted, acked, failed int
	last                     time.Time
	ids                      []string
}

// specJSON is the part of the v1 job spec the load test sets.
type specJSON struct {
	ID       string         `json:"id"`
	Queue    string         `json:"queue"`
	Gang     map[string]int `json:"gang"`
	Command  []string       `json:"command"`
	Topology *topologyJSON  `json:"topology,omitempty"`
	// TimeLimit is a Go duration ("2m0s"), as the spec takes it.
	TimeLimit string `json:"timeLimit,omitempty"`
}

type topologyJSON struct {
	MaxSwitches     int    `json:"maxSwitches"`
	WaitForSwitches string `json:"waitForSwitches,omitempty"`
}

// switchWait is a trace job's SwitchWait as the spec's waitForSwitches, in
// the format the schema accepts (jobspec.DurationOf: "500us" where
// time.Duration prints "500µs", which the pattern refuses). A trace job
// without one leaves the field out, for the default wait: "0s" was refused
// as not positive.
func switchWait(d time.Duration) string { return jobspec.DurationOf(d).String() }

// submit publishes the stream open loop: job i at t0 + its offset,
// whether or not earlier jobs were handled. Specs are encoded up front.
func submit(ctx context.Context, b *bus.Bus, f *follower, cfg Config, runID string, t0 time.Time) *submission {
	prefix := jobPrefix(runID)
	subject := submitSubject(b)
	msgs := make([]*nats.Msg, len(cfg.Jobs))
	ids := make([]string, len(cfg.Jobs))
	for i, j := range cfg.Jobs {
		id := prefix + strconv.Itoa(i)
		spec := specJSON{ID: id, Queue: cfg.Queue, Gang: map[string]int{"nodes": j.Nodes, "gpusPerNode": j.GPUsPerNode},
			Command: []string{"sleep", strconv.FormatFloat(j.Duration.Seconds(), 'f', -1, 64)}}
		if cfg.TimeLimit > 0 {
			spec.TimeLimit = cfg.TimeLimit.String()
		}
		if j.MaxSwitches > 0 {
			spec.Topology = &topologyJSON{MaxSwitches: j.MaxSwitches, WaitForSwitches: switchWait(j.SwitchWait)}
		}
		data, _ := json.Marshal(spec)
		m := nats.NewMsg(subject)
		m.Data = data
		m.Header.Set(subjects.HeaderMsgID, id)
		msgs[i], ids[i] = m, id
	}
	s := &submission{ids: ids}
	acks := make(chan struct {
		id  string
		fut jetstream.PubAckFuture
	}, 4096)
	ackDone := make(chan struct{})
	go func() {
		defer close(ackDone)
		for a := range acks {
			select {
			case <-a.fut.Ok():
				f.acked(a.id, time.Now())
				s.acked++
			case <-a.fut.Err():
				s.failed++
			case <-ctx.Done():
				s.failed++
			}
		}
	}()
	for i, j := range cfg.Jobs {
		if d := time.Until(t0.Add(j.Submit)); d > 0 {
			select {
			case <-ctx.Done():
			case <-time.After(d):
			}
		}
		if ctx.Err() != nil {
			break
		}
		now := time.Now()
		f.submitted(ids[i], now)
		fut, err := b.JS.PublishMsgAsync(msgs[i])
		s.submitted++
		s.last = now
		if err != nil {
			s.failed++
			continue
		}
		acks <- struct {
			id  string
			fut jetstream.PubAckFuture
		}{ids[i], fut}
		if cfg.Progress != nil && i%64 == 0 {
			cfg.Progress(float64(i+1)/float64(len(cfg.Jobs)), float64(f.done())/float64(len(cfg.Jobs)))
		}
	}
	close(acks)
	<-ackDone
	s.ids = ids[:s.submitted]
	return s
}

// waitEnded waits until every submitted job has ended, the drain time is
// over or ctx ends; it reports whether it stopped early.
func waitEnded(ctx context.Context, f *follower, cfg Config, s *submission) bool {
	drain := time.After(cfg.Drain)
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for {
		if f.done() >= s.submitted {
			return false
		}
		select {
		case <-ctx.Done():
			return true
		case <-drain:
			return true
		case <-f.changed:
		case <-tick.C:
			if cfg.Progress != nil {
				cfg.Progress(1, float64(f.done())/float64(max(s.submitted, 1)))
			}
		}
	}
}

// conflictsRecorded reads the run's job records' Conflicts counts.
func conflictsRecorded(ctx context.Context, b *bus.Bus, prefix string) (map[string]int, error) {
	js, err := jobs.Open(ctx, b.JS)
	if err != nil {
		return nil, err
	}
	all, err := js.List(ctx)
	if err != nil {
		return nil, err
	}
	out := map[string]int{}
	for _, j := range all {
		if len(j.ID) >= len(prefix) && j.ID[:len(prefix)] == prefix {
			out[j.ID] = j.Conflicts
		}
	}
	return out, nil
}

// writeAllocProfile writes the heap profile, whose allocation counts are
// cumulative since the process started, to path+suffix (nothing when path
// is empty). It collects garbage first, as go test -memprofile does: the
// profile is as of the last collection, which could otherwise leave out
// the allocations of the load's last moments. Both calls are outside the
// measured span.
func writeAllocProfile(path, suffix string) error {
	if path == "" {
		return nil
	}
	runtime.GC()
	f, err := os.Create(path + suffix)
	if err != nil {
		return errors.Wrap(err, "allocation profile")
	}
	if err := pprof.Lookup("allocs").WriteTo(f, 0); err != nil {
		_ = f.Close()
		return errors.Wrap(err, "allocation profile")
	}
	return errors.Wrap(f.Close(), "allocation profile")
}
