package devcluster_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/lockstep-dev/lockstep/shared/contract/domain"
	"github.com/lockstep-dev/lockstep/shared/plumbing/store"
	"github.com/lockstep-dev/lockstep/shared/plumbing/telemetry"
	"github.com/lockstep-dev/lockstep/shared/plumbing/testenv"
)

// A 2-node container gang pulls (here: verifies the local probe image,
// IfNotPresent) on both nodes before any rank starts: in the job's trace,
// each node's agent.image span lies within gang's gang.pull span, which
// ends before either node's agent.launch begins. The job record keeps
// the phase as describe prints it (time, slowest node, image size), and
// η counts it as its own term.
func TestContainerGangPullsBeforeRanksStart(t *testing.T) {
	exp := tracetest.NewInMemoryExporter()
	h, _ := containerCluster(t, exp)
	id := h.submit(`{"id":"ctr-pull","gang":{"nodes":2,"gpusPerNode":4,"tasksPerNode":2},"command":["/probe"],
		"container":{"image":"` + probeImage + `","pullPolicy":"IfNotPresent","pullTimeout":"2m"}}`)
	j := h.waitFor(id, 90*time.Second, func(j domain.Job) bool { return j.State.Terminal() })
	if j.State != domain.StateSucceeded {
		t.Fatalf("ended %s: %s", j.State, j.Reason)
	}
	p := j.Pull
	if p == nil || p.Took <= 0 || p.Bytes <= 0 || (p.Slowest != "node-01" && p.Slowest != "node-02") {
		t.Fatalf("pull phase on the record: %+v", p)
	}
	if j.Timing.Pull != p.Took || j.Timing.SchedLatency <= 0 {
		t.Errorf("timing %+v: the pull (%s) is its own term of η", j.Timing, p.Took)
	}
	t.Logf("Pull: %s (%s slowest at %s, %d bytes); scheduling %s", p.Took, p.Slowest, p.SlowestTook, p.Bytes, j.Timing.SchedLatency)

	var pull tracetest.SpanStub
	var images, launches []tracetest.SpanStub
	testenv.Eventually(t, 20*time.Second, func() error {
		spans := traceOf(t, h.c, exp, j.TraceID)
		gp := named(spans, "gang", telemetry.SpanPull)
		images, launches = named(spans, "agent", telemetry.SpanImage), named(spans, "agent", telemetry.SpanLaunch)
		if len(gp) != 1 || len(images) < 2 || len(launches) != 2 {
			return fmt.Errorf("%d gang.pull, %d agent.image, %d agent.launch spans", len(gp), len(images), len(launches))
		}
		pull = gp[0]
		return nil
	})
	nodes := map[string]bool{}
	for _, s := range images {
		if attr(s, "lockstep.image.bytes") == "" {
			continue // the start's own check (a verify), inside agent.launch
		}
		nodes[attr(s, string(telemetry.AttrNode))] = true
		if s.StartTime.Before(pull.StartTime) || s.EndTime.After(pull.EndTime) {
			t.Errorf("%s's pull [%s, %s] is not within the gang's [%s, %s]", attr(s, string(telemetry.AttrNode)),
				s.StartTime, s.EndTime, pull.StartTime, pull.EndTime)
		}
	}
	if len(nodes) != 2 {
		t.Errorf("pull spans from %v, want both nodes", nodes)
	}
	for _, s := range launches {
		if s.StartTime.Before(pull.EndTime) {
			t.Errorf("%s launched at %s, before the gang's pull ended at %s", attr(s, string(telemetry.AttrNode)), s.StartTime, pull.EndTime)
		}
	}
}

// A pull that fails (pullPolicy Never, an image the nodes lack) fails the
// attempt once with the engine's message, makes no container, and gives
// the GPUs back at once: a job that needs all of them runs next.
func TestPullFailureReleasesTheGPUs(t *testing.T) {
	h, d := containerCluster(t)
	id := h.submit(`{"id":"ctr-nopull","gang":{"nodes":2,"gpusPerNode":4},"command":["/probe"],"restartPolicy":{"maxRestarts":3},
		"container":{"image":"lockstep-no-such-image:pull","pullPolicy":"Never"}}`)
	j := h.waitFor(id, 60*time.Second, func(j domain.Job) bool { return j.State.Terminal() })
	if j.State != domain.StateFailed || j.Attempt != 1 || !strings.HasPrefix(j.Reason, "ImagePullFailed: image lockstep-no-such-image:pull on node node-0") ||
		!strings.Contains(j.Reason, "is not on this node and container.pullPolicy is Never") {
		t.Errorf("ended %s on attempt %d: %q", j.State, j.Attempt, j.Reason)
	}
	if n := jobContainers(t, h, d, id); n != 0 {
		t.Errorf("%d containers made for a gang that never pulled", n)
	}
	testenv.Eventually(t, 30*time.Second, func() error {
		if n := h.keysUnder(store.ClaimsPrefix); n != 0 {
			return fmt.Errorf("%d GPU claims left", n)
		}
		return nil
	})
	next := h.submit(`{"id":"after","gang":{"nodes":2,"gpusPerNode":4},"command":["true"]}`)
	if j := h.waitFor(next, 60*time.Second, func(j domain.Job) bool { return j.State.Terminal() }); j.State != domain.StateSucceeded {
		t.Errorf("the job after the failed pull ended %s: %s", j.State, j.Reason)
	}
}
