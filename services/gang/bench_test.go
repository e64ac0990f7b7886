package gang_test

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.opentelemetry.io/otel"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/embedded"
	"go.opentelemetry.io/otel/trace/noop"

	"github.com/lockstep-dev/lockstep/services/gang"
	"github.com/lockstep-dev/lockstep/shared/contract/domain"
	"github.com/lockstep-dev/lockstep/shared/contract/subjects"
	"github.com/lockstep-dev/lockstep/shared/plumbing/config"
	"github.com/lockstep-dev/lockstep/shared/plumbing/store"
	"github.com/lockstep-dev/lockstep/shared/plumbing/telemetry"
	"github.com/lockstep-dev/lockstep/shared/plumbing/telemetry/otelsdk"
	"github.com/lockstep-dev/lockstep/shared/plumbing/testenv"
)

// gangShape is the benchmark's gang: 2 nodes × 8 GPUs.
const nodesPerGang, gpusPerNode = 2, 8

// setup registers 2n nodes and returns their revisions.
func setup(b *testing.B, env *testenv.Env, prefix string, n int) (map[string]int64, clientv3.LeaseID) {
	lease := env.Lease(b, 10*time.Minute)
	names := make([]string, n*nodesPerGang)
	for i := range names {
		names[i] = fmt.Sprintf("%s%05d", prefix, i)
	}
	return env.RegisterNodes(b, lease, gpusPerNode, names...), lease
}

// placementFor places gang i on the nodes setup registered under prefix.
func placementFor(prefix string, i int) domain.Placement {
	nodes := make([]string, nodesPerGang)
	for k := range nodes {
		nodes[k] = fmt.Sprintf("%s%05d", prefix, i*nodesPerGang+k)
	}
	return testenv.GangPlacement(nodes, gpusPerNode, 29500)
}

// benchWorkers is the concurrency of both sides: gang's workers and the
// raw clients. 8, not gang.DefaultWorkers, keeps the figures comparable
// with docs/benchmarks.md's table (issue 3); -args -workers 128 measures
// the default.
var benchWorkers = flag.Int("workers", 8, "gang workers and raw etcd clients in the reservation benchmarks")

// BenchmarkReservation measures gang reservations per second through the
// real gang service (proposal consumed from JetStream, one etcd Txn, the job
// record updated, reserved event published) beside the raw rate of the
// same-shaped etcd Txn issued directly, on the same embedded etcd with fsync
// on and the same concurrency (-workers). The two are
// measured in alternating rounds so that disk-latency drift hits both alike.
//
// tracing=off runs the service without telemetry (no-op tracer, as in
// tests); tracing=on with telemetry as in production at 100% sampling
// (AlwaysSample), spans going through the batch span processor to an
// in-memory exporter, proposals carrying a traceparent as placement's do,
// and metrics recorded. BenchmarkTracingOverhead compares the two in one
// run.
//
//	go test -run '^$' -bench Reservation -benchtime 2000x ./services/gang/
func BenchmarkReservation(b *testing.B) {
	b.Logf("%d gang workers and as many raw clients", *benchWorkers)
	b.Run("tracing=off", func(b *testing.B) { benchReservation(b, false) })
	b.Run("tracing=on", func(b *testing.B) { benchReservation(b, true) })
}

func benchReservation(b *testing.B, tracing bool) {
	f := newBenchFixture(b, b.N, b.N)
	stop := f.startGang(b, tracing)
	defer stop()
	n, rounds := b.N, min(5, b.N)
	b.ResetTimer()
	var rawTime, svcTime time.Duration
	for r := range rounds {
		lo, hi := r*n/rounds, (r+1)*n/rounds
		rawTime += f.raw(b, lo, hi)
		svcTime += f.svc(b, lo, hi, tracing)
	}
	b.StopTimer()
	raw := float64(n) / rawTime.Seconds()
	ours := float64(n) / svcTime.Seconds()
	b.ReportMetric(raw, "raw-txn/s")
	b.ReportMetric(ours, "reservations/s")
	b.ReportMetric(ours/raw, "ratio")
	f.checkSpans(b, tracing, n)
}

// BenchmarkTracingOverhead measures what tracing costs a reservation: one
// gang service, batches alternating between tracing off (no-op tracer) and
// on (every span sampled, through the batch span processor to an in-memory
// exporter, proposals carrying a placement traceparent), 10 rounds with the
// order swapped every round, so that load drift on a shared machine hits
// both alike. The switch is the process's global tracer provider, which a
// service uses when given no telemetry; metrics stay off in both.
// "overhead" is how much slower the traced batches were (0.05 = 5%),
// "cpu-overhead" how much more CPU the process used for them (the traced
// batches' spans exported before their window closes).
//
//	go test -run '^$' -bench TracingOverhead -benchtime 2000x ./services/gang/
func BenchmarkTracingOverhead(b *testing.B) {
	const warm = 100
	n, rounds := b.N, min(10, b.N)
	f := newBenchFixture(b, 2*n+warm, 0)
	tp := &switchProvider{sdk: f.tel.Service("gang", "bench").TracerProvider}
	prev := otel.GetTracerProvider()
	otel.SetTracerProvider(tp)
	defer otel.SetTracerProvider(prev)
	stop := f.startGang(b, false)
	defer stop()
	// Warm up untimed: the service's first reconcile pass, caches, pulls.
	f.svc(b, 2*n, 2*n+warm, false)

	b.ResetTimer()
	var off, on, offCPU, onCPU time.Duration
	for r := range rounds {
		lo, hi := r*n/rounds, (r+1)*n/rounds
		for _, tracing := range []bool{r%2 == 1, r%2 == 0} {
			tp.on.Store(tracing)
			cpu := cpuTime()
			if tracing {
				on += f.svc(b, n+lo, n+hi, true)
				// Count the export of this batch's spans here, not in
				// the next batch.
				if err := f.tel.ForceFlush(context.Background()); err != nil {
					b.Fatal(err)
				}
				onCPU += cpuTime() - cpu
			} else {
				off += f.svc(b, lo, hi, false)
				offCPU += cpuTime() - cpu
			}
		}
	}
	b.StopTimer()
	b.ReportMetric(float64(n)/off.Seconds(), "off-reservations/s")
	b.ReportMetric(float64(n)/on.Seconds(), "on-reservations/s")
	b.ReportMetric(on.Seconds()/off.Seconds()-1, "overhead")
	b.ReportMetric(onCPU.Seconds()/offCPU.Seconds()-1, "cpu-overhead")
	b.ReportMetric(float64(offCPU.Microseconds())/float64(n), "cpu-µs/reservation")
	f.checkSpans(b, true, n)
}

// cpuTime is the CPU time this process (gang, NATS, etcd and the
// publisher) has used so far: less sensitive than wall time to the other
// load on a shared machine.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// switchProvider traces with the SDK while on, with a no-op tracer while
// off.
type switchProvider struct {
	embedded.TracerProvider
	on  atomic.Bool
	sdk trace.TracerProvider
}

func (p *switchProvider) Tracer(name string, opts ...trace.TracerOption) trace.Tracer {
	return &switchTracer{p: p, sdk: p.sdk.Tracer(name, opts...), off: noop.NewTracerProvider().Tracer(name)}
}

type switchTracer struct {
	embedded.Tracer
	p        *switchProvider
	sdk, off trace.Tracer
}

func (t *switchTracer) Start(ctx context.Context, name string, opts ...trace.SpanStartOption) (context.Context, trace.Span) {
	if t.p.on.Load() {
		return t.sdk.Start(ctx, name, opts...)
	}
	return t.off.Start(ctx, name, opts...)
}

// benchFixture holds n pending jobs with proposals on their own nodes, and
// nodes for raw allocations.
type benchFixture struct {
	env      *testenv.Env
	rawRevs  map[string]int64
	rawLease clientv3.LeaseID
	props    []domain.Proposal
	reserved atomic.Int64
	sent     int64
	// tel traces the service when tracing; traced holds each proposal's
	// context, a placement span.
	tel    *otelsdk.Telemetry
	spans  *tracetest.InMemoryExporter
	traced []context.Context
}

func newBenchFixture(b *testing.B, n, raw int) *benchFixture {
	env := testenv.Start(b, testenv.WithFsync())
	ctx := context.Background()
	f := &benchFixture{env: env}
	f.rawRevs, f.rawLease = setup(b, env, "raw-", raw)
	setup(b, env, "svc-", n)
	js := env.Jobs(b)
	f.props = make([]domain.Proposal, n)
	for i := range n {
		spec := testenv.GangSpec(fmt.Sprintf("svc-%d", i), nodesPerGang, gpusPerNode, "true")
		job := domain.Job{ID: spec.ID, Spec: spec, State: domain.StatePending, Attempt: 1}
		if err := js.Create(ctx, job); err != nil {
			b.Fatal(err)
		}
		_, rev, err := js.Get(ctx, job.ID)
		if err != nil {
			b.Fatal(err)
		}
		// As placement sends it: the job, attempt and placement, and the
		// revision of the record it decided on (gang holds that record).
		f.props[i] = domain.Proposal{JobID: job.ID, Attempt: 1, Placement: placementFor("svc-", i), JobRevision: rev}
	}
	f.spans = tracetest.NewInMemoryExporter()
	var err error
	f.tel, err = otelsdk.Setup(ctx, otelsdk.Config{Service: "gang", Instance: "bench",
		Sampler: sdktrace.AlwaysSample(), SpanExporters: []sdktrace.SpanExporter{f.spans}})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = f.tel.Shutdown(context.Background()) })
	tr := f.tel.Service("placement", "bench").Tracer
	f.traced = make([]context.Context, n)
	for i := range f.traced {
		var span trace.Span
		f.traced[i], span = tr.Start(ctx, telemetry.SpanPropose)
		span.End()
	}
	sub, err := env.Bus.NC.Subscribe(subjects.JobEvent(subjects.AnyOwner, "*", "reserved"), func(*nats.Msg) { f.reserved.Add(1) })
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = sub.Unsubscribe() })
	return f
}

// startGang runs a gang service, traced or not, and returns once it serves.
func (f *benchFixture) startGang(b *testing.B, tracing bool) (stop func()) {
	base := config.Base{NATSURL: f.env.NATSURL, Etcd: f.env.EtcdEndpoint, StreamReplicas: 1,
		Log: slog.New(slog.DiscardHandler), Health: telemetry.NewHealth()}
	if tracing {
		base.Telemetry = f.tel
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = gang.Run(ctx, gang.Config{Base: base, ReconcileInterval: time.Hour, Workers: *benchWorkers})
	}()
	testenv.Eventually(b, 30*time.Second, func() error {
		_, err := base.Health.Status(ctx)
		return err
	})
	return func() { cancel(); <-done }
}

// raw runs allocations [lo, hi) as direct etcd transactions.
func (f *benchFixture) raw(b *testing.B, lo, hi int) time.Duration {
	ctx := context.Background()
	start := time.Now()
	var next atomic.Int64
	next.Store(int64(lo))
	var wg sync.WaitGroup
	for range *benchWorkers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1)) - 1
				if i >= hi {
					return
				}
				p := placementFor("raw-", i)
				a := domain.Allocation{JobID: fmt.Sprintf("raw-%d", i), Attempt: 1, State: domain.AllocReserved, Placement: p}
				ok, _, err := store.Reserve(ctx, f.env.Etcd, a, assignmentsOf(a), f.rawRevs, f.rawLease)
				if err != nil || !ok {
					b.Errorf("raw txn %d: ok=%v err=%v", i, ok, err)
					return
				}
			}
		}()
	}
	wg.Wait()
	return time.Since(start)
}

// svc publishes proposals [lo, hi) and waits for their reserved events.
func (f *benchFixture) svc(b *testing.B, lo, hi int, tracing bool) time.Duration {
	start := time.Now()
	for i, prop := range f.props[lo:hi] {
		ctx := context.Background()
		if tracing {
			ctx = f.traced[lo+i]
		}
		if err := f.env.Bus.PublishJSON(ctx, subjects.Reserve, "", prop); err != nil {
			b.Fatal(err)
		}
	}
	f.sent += int64(hi - lo)
	deadline := time.Now().Add(2 * time.Minute)
	for f.reserved.Load() < f.sent {
		if time.Now().After(deadline) {
			b.Fatalf("only %d of %d reserved", f.reserved.Load(), f.sent)
		}
		time.Sleep(time.Millisecond)
	}
	return time.Since(start)
}

// checkSpans makes sure the traced service really recorded its spans.
func (f *benchFixture) checkSpans(b *testing.B, tracing bool, n int) {
	if err := f.tel.ForceFlush(context.Background()); err != nil {
		b.Fatal(err)
	}
	if got := len(f.spans.GetSpans()); tracing && got < n {
		b.Errorf("only %d spans recorded for %d traced reservations", got, n)
	}
}

func assignmentsOf(a domain.Allocation) []domain.Assignment {
	return testenv.GangAssignments(a.JobID, a.Placement, []string{"true"})
}
