package devcluster_test

import (
	"context"
	"fmt"
	"log/slog"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/lockstep-dev/lockstep/deploy/devcluster"
	"github.com/lockstep-dev/lockstep/shared/contract/client"
	"github.com/lockstep-dev/lockstep/shared/contract/domain"
	"github.com/lockstep-dev/lockstep/shared/contract/subjects"
	"github.com/lockstep-dev/lockstep/shared/plumbing/telemetry"
	"github.com/lockstep-dev/lockstep/shared/plumbing/testenv"
)

// startTraced runs a dev cluster whose spans also go to an in-memory
// exporter, with /metrics on a free port.
func startTraced(t *testing.T) (*devcluster.Cluster, *client.Client, *tracetest.InMemoryExporter) {
	t.Helper()
	exp := tracetest.NewInMemoryExporter()
	c, err := devcluster.Start(context.Background(), devcluster.Config{
		DataDir: t.TempDir(), NATSListen: "127.0.0.1:0", EtcdListen: "127.0.0.1:0", MetricsAddr: "127.0.0.1:0",
		Nodes: 4, GPUsPerNode: 8, Leaves: 2, NoFsync: true, Log: slog.New(slog.DiscardHandler),
		SpanExporters: []sdktrace.SpanExporter{exp},
	})
	if err != nil {
		t.Fatalf("start dev cluster: %v", err)
	}
	t.Cleanup(c.Stop)
	cl, err := client.Dial(context.Background(), c.NATSURL)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	return c, cl, exp
}

// traceOf flushes and returns the spans of one trace, by span ID.
func traceOf(t *testing.T, c *devcluster.Cluster, exp *tracetest.InMemoryExporter, traceID string) map[string]tracetest.SpanStub {
	t.Helper()
	if err := c.FlushSpans(context.Background()); err != nil {
		t.Fatal(err)
	}
	out := map[string]tracetest.SpanStub{}
	for _, s := range exp.GetSpans() {
		if s.SpanContext.TraceID().String() == traceID {
			out[s.SpanContext.SpanID().String()] = s
		}
	}
	return out
}

func attr(s tracetest.SpanStub, key string) string {
	for _, kv := range s.Attributes {
		if string(kv.Key) == key {
			return kv.Value.String()
		}
	}
	return ""
}

func service(s tracetest.SpanStub) string {
	for _, kv := range s.Resource.Attributes() {
		if kv.Key == "service.name" {
			return strings.TrimPrefix(kv.Value.AsString(), "lockstep-")
		}
	}
	return ""
}

// named returns the spans of a service with a name.
func named(spans map[string]tracetest.SpanStub, svc, name string) []tracetest.SpanStub {
	var out []tracetest.SpanStub
	for _, s := range spans {
		if service(s) == svc && s.Name == name {
			out = append(out, s)
		}
	}
	return out
}

// TestJobTraceSpansEveryService follows one 2-node job from submission to
// cancellation: every span of every service is in the job's one trace
// (whose ID describe shows), each span's parent is in it (one root: the
// submission), the hops between services are parent and child, the
// cancellation links to the request that asked for it, and every
// messaging span carries the semantic-convention attributes.
func TestJobTraceSpansEveryService(t *testing.T) {
	c, cl, exp := startTraced(t)
	ctx := context.Background()
	id, err := cl.Submit(ctx, []byte(`{"id":"traced","gang":{"nodes":2,"gpusPerNode":8},"command":["sleep","60"]}`))
	if err != nil {
		t.Fatal(err)
	}
	waitState(t, cl, id, domain.StateRunning, 60*time.Second)
	if err := cl.Cancel(ctx, id, "trace test"); err != nil {
		t.Fatal(err)
	}
	job := waitState(t, cl, id, domain.StateCancelled, 30*time.Second)
	if len(job.TraceID) != 32 {
		t.Fatalf("job record has trace ID %q", job.TraceID)
	}

	// Wait for the last spans: the cancelled event and both nodes' runs.
	var spans map[string]tracetest.SpanStub
	testenv.Eventually(t, 20*time.Second, func() error {
		spans = traceOf(t, c, exp, job.TraceID)
		if n := len(named(spans, "agent", telemetry.SpanRun)); n != 2 {
			return fmt.Errorf("%d agent.run spans ended, want 2", n)
		}
		for _, s := range spans {
			if attr(s, string(telemetry.AttrEventType)) == "cancelled" {
				return nil
			}
		}
		return fmt.Errorf("no cancelled event span yet (%d spans)", len(spans))
	})

	// Every span about the job is in its trace.
	for _, s := range exp.GetSpans() {
		if attr(s, string(telemetry.AttrJobID)) == id && s.SpanContext.TraceID().String() != job.TraceID {
			t.Errorf("span %s/%s of the job is in trace %s", service(s), s.Name, s.SpanContext.TraceID())
		}
	}
	// One root, every other span's parent in the trace.
	var roots []string
	services := map[string]bool{}
	for _, s := range spans {
		services[service(s)] = true
		if _, ok := spans[s.Parent.SpanID().String()]; !ok {
			roots = append(roots, service(s)+"/"+s.Name)
		}
	}
	if len(roots) != 1 || roots[0] != "admission/"+telemetry.SpanName(telemetry.OpProcess, subjects.Submit) {
		t.Errorf("roots %v, want only admission's process span", roots)
	}
	for _, svc := range []string{"admission", "placement", "gang", "agent", "drain"} {
		if !services[svc] {
			t.Errorf("no span of %s in the job's trace (have %v)", svc, services)
		}
	}

	parentOf := func(s tracetest.SpanStub) tracetest.SpanStub { return spans[s.Parent.SpanID().String()] }
	hops := []struct{ svc, name, parentSvc, parentName string }{
		{"placement", telemetry.SpanPropose, "admission", telemetry.SpanName(telemetry.OpProcess, subjects.Submit)},
		{"placement", telemetry.SpanName(telemetry.OpSend, subjects.Reserve), "placement", telemetry.SpanPropose},
		{"gang", telemetry.SpanName(telemetry.OpProcess, subjects.Reserve), "placement", telemetry.SpanName(telemetry.OpSend, subjects.Reserve)},
		{"gang", telemetry.SpanReserve, "gang", telemetry.SpanName(telemetry.OpProcess, subjects.Reserve)},
		{"agent", telemetry.SpanLaunch, "gang", telemetry.SpanReserve},
		{"agent", telemetry.SpanRun, "agent", telemetry.SpanLaunch},
		{"gang", telemetry.SpanName(telemetry.OpProcess, subjects.Report), "agent", telemetry.SpanName(telemetry.OpSend, subjects.Report)},
	}
	for _, h := range hops {
		got := named(spans, h.svc, h.name)
		if len(got) == 0 {
			t.Errorf("no %s span %q", h.svc, h.name)
		}
		for _, s := range got {
			if p := parentOf(s); service(p) != h.parentSvc || p.Name != h.parentName {
				t.Errorf("%s/%s: parent %s/%s, want %s/%s", h.svc, h.name, service(p), p.Name, h.parentSvc, h.parentName)
			}
		}
	}
	if n := len(named(spans, "agent", telemetry.SpanLaunch)); n != 2 {
		t.Errorf("%d agent.launch spans, want one per node", n)
	}

	// The cancel request came from outside the trace: the cancellation
	// joins the job's trace and links to it.
	cancels := named(spans, "drain", telemetry.SpanCancel)
	if len(cancels) != 1 {
		t.Fatalf("%d drain.cancel spans", len(cancels))
	}
	if l := cancels[0].Links; len(l) != 1 || l[0].SpanContext.TraceID().String() == job.TraceID {
		t.Errorf("drain.cancel links %v, want the request's span in another trace", l)
	}

	// Messaging spans follow the semantic conventions; names and
	// destinations are templates, never IDs.
	for _, s := range spans {
		op := map[trace.SpanKind]string{trace.SpanKindProducer: telemetry.OpSend, trace.SpanKindConsumer: telemetry.OpProcess}[s.SpanKind]
		if op == "" {
			continue
		}
		dest := attr(s, "messaging.destination.name")
		if attr(s, "messaging.system") != "nats" || s.Name != op+" "+dest || attr(s, "messaging.operation.type") != op {
			t.Errorf("%s/%s: system %q destination %q operation %q", service(s), s.Name, attr(s, "messaging.system"), dest, attr(s, "messaging.operation.type"))
		}
		if strings.Contains(s.Name, id) || strings.Contains(dest, id) {
			t.Errorf("span %q names the job ID", s.Name)
		}
		if attr(s, "messaging.message.id") == "" {
			t.Errorf("%s/%s has no messaging.message.id", service(s), s.Name)
		}
		if op == telemetry.OpProcess && attr(s, "messaging.consumer.group.name") == "" {
			t.Errorf("%s/%s has no messaging.consumer.group.name", service(s), s.Name)
		}
	}
	reserve := named(spans, "gang", telemetry.SpanName(telemetry.OpProcess, subjects.Reserve))[0]
	for k, want := range map[string]string{
		string(telemetry.AttrJobID): id, string(telemetry.AttrQueue): "default", string(telemetry.AttrGangSize): "16",
		"messaging.consumer.group.name": subjects.DurableGang, "messaging.message.id": domain.ProposalMsgID(id, 1, 0),
	} {
		if got := attr(reserve, k); got != want {
			t.Errorf("gang's process span: %s = %q, want %q", k, got, want)
		}
	}
	if attr(reserve, string(telemetry.AttrLeaves)) == "" {
		t.Error("gang's process span does not name the leaves")
	}
	if got := attr(named(spans, "gang", telemetry.SpanReserve)[0], string(telemetry.AttrConflicts)); got != "0" {
		t.Errorf("gang.reserve conflicts = %q", got)
	}
}

// TestSubmitterTraceIsContinued: a pipeline that publishes its submission
// with a traceparent header gets its own trace continued.
func TestSubmitterTraceIsContinued(t *testing.T) {
	c, cl, exp := startTraced(t)
	const traceID, spanID = "4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7"
	msg := nats.NewMsg(subjects.Submit)
	msg.Data = []byte(`{"gang":{"nodes":1,"gpusPerNode":8},"command":["true"]}`)
	msg.Header.Set(subjects.HeaderMsgID, "pipeline-42")
	msg.Header.Set("traceparent", "00-"+traceID+"-"+spanID+"-01")
	if _, err := cl.Bus().JS.PublishMsg(context.Background(), msg); err != nil {
		t.Fatal(err)
	}
	job := waitState(t, cl, "pipeline-42", domain.StateSucceeded, 60*time.Second)
	if job.TraceID != traceID {
		t.Errorf("job's trace ID = %q, want the submitter's %s", job.TraceID, traceID)
	}
	testenv.Eventually(t, 10*time.Second, func() error {
		spans := traceOf(t, c, exp, traceID)
		subs := named(spans, "admission", telemetry.SpanName(telemetry.OpProcess, subjects.Submit))
		if len(subs) != 1 {
			return fmt.Errorf("%d admission spans in the submitter's trace", len(subs))
		}
		if got := subs[0].Parent.SpanID().String(); got != spanID || !subs[0].Parent.IsRemote() {
			t.Errorf("admission's parent = %s, want the submitter's span %s", got, spanID)
		}
		for _, svc := range []string{"placement", "gang", "agent"} {
			if len(named(spans, svc, map[string]string{"placement": telemetry.SpanPropose, "gang": telemetry.SpanReserve, "agent": telemetry.SpanRun}[svc])) == 0 {
				return fmt.Errorf("no %s span in the submitter's trace yet", svc)
			}
		}
		return nil
	})
}

// TestMetricsEndpoint scrapes /metrics after a job: the counters and
// histograms moved; /healthz and /readyz answer.
func TestMetricsEndpoint(t *testing.T) {
	c, cl, _ := startTraced(t)
	base := "http://" + c.MetricsAddr()
	// Start returns once the nodes registered; the services may still be
	// binding their consumers.
	testenv.Eventually(t, 20*time.Second, func() error {
		if code, body := testenv.HTTPGet(t, base+"/readyz"); code != 200 || !strings.Contains(body, "[+] gang/dev-1 ok") ||
			!strings.Contains(body, "[+] drain/dev-1 ok") {
			return fmt.Errorf("/readyz = %d %q", code, body)
		}
		return nil
	})
	if code, _ := testenv.HTTPGet(t, base+"/healthz"); code != 200 {
		t.Errorf("/healthz = %d", code)
	}
	id, err := cl.Submit(context.Background(), []byte(`{"name":"m","gang":{"nodes":2,"gpusPerNode":8},"command":["true"]}`))
	if err != nil {
		t.Fatal(err)
	}
	waitState(t, cl, id, domain.StateSucceeded, 60*time.Second)
	if _, err := cl.Submit(context.Background(), []byte(`{"name":"too-big","gang":{"nodes":9,"gpusPerNode":8},"command":["true"]}`)); err != nil {
		t.Fatal(err)
	}
	want := map[string]float64{
		`lockstep_submissions_total`:                                                  2,
		`lockstep_admissions_total{queue="default"}`:                                  1,
		`lockstep_rejections_total{reason="unschedulable"}`:                           1,
		`lockstep_gang_wait_seconds_count{queue="default"}`:                           1,
		`lockstep_scheduling_latency_seconds_count{queue="default",stage="reserved"}`: 1,
		`lockstep_scheduling_latency_seconds_count{queue="default",stage="running"}`:  1,
		`lockstep_reservation_duration_seconds_count{result="reserved"}`:              1,
		`lockstep_jobs_finished_total{state="succeeded"}`:                             1,
		`lockstep_job_efficiency_count`:                                               1,
		`lockstep_node_transitions_total{event="up"}`:                                 4,
		`lockstep_gpus_total{leaf="leaf-1"}`:                                          16,
		`lockstep_nodes{state="up"}`:                                                  4,
		// The gauges alerts are written on (deploy/prometheus/rules).
		`lockstep_gpus_unhealthy{leaf="leaf-1"}`:                         0,
		`lockstep_placement_leader{service="placement/dev-1"}`:           1,
		`lockstep_dependency_up{dependency="nats",service="gang/dev-1"}`: 1,
		`lockstep_dependency_up{dependency="etcd",service="gang/dev-1"}`: 1,
	}
	testenv.Eventually(t, 10*time.Second, func() error {
		_, body := testenv.HTTPGet(t, base+"/metrics")
		for series, v := range want {
			got, ok := sample(body, series)
			if !ok || got != v {
				return fmt.Errorf("%s = %v (present %v), want %v", series, got, ok, v)
			}
		}
		if got, _ := sample(body, `lockstep_gang_wait_seconds_sum{queue="default"}`); got <= 0 {
			return fmt.Errorf("gang wait sum %v", got)
		}
		// The leader plans at least once a second; the job made more.
		if got, _ := sample(body, `lockstep_placement_cycle_duration_seconds_count`); got < 2 {
			return fmt.Errorf("placement cycles counted: %v", got)
		}
		return nil
	})
}

// sample finds one series' value in a Prometheus text exposition.
func sample(body, series string) (float64, bool) {
	m := regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(series) + ` (\S+)$`).FindStringSubmatch(body)
	if m == nil {
		return 0, false
	}
	v, err := strconv.ParseFloat(m[1], 64)
	return v, err == nil
}
