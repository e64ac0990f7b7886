package view

import (
	"strings"
	"testing"
	"time"

	"github.com/lockstep-dev/lockstep/shared/contract/domain"
	"github.com/lockstep-dev/lockstep/shared/contract/events"
	"github.com/lockstep-dev/lockstep/shared/plumbing/telemetry"
)

func TestViewerAccess(t *testing.T) {
	cases := []struct {
		name         string
		v            Viewer
		owner        string
		act, mayRead bool
	}{
		{"no auth: read-only", Viewer{}, "", false, true},
		{"auth, no one signed in", Viewer{AuthOn: true}, "alice", false, false},
		{"owner", Viewer{AuthOn: true, Name: "alice", Role: "user"}, "alice", true, true},
		{"another user", Viewer{AuthOn: true, Name: "bob", Role: "user"}, "alice", false, false},
		{"admin", Viewer{AuthOn: true, Name: "root", Role: "admin"}, "alice", true, true},
		{"operator", Viewer{AuthOn: true, Name: "ops", Role: "operator"}, "alice", true, true},
		{"a user named like an empty owner", Viewer{AuthOn: true, Name: "bob", Role: "user"}, "", false, false},
	}
	for _, c := range cases {
		if got := c.v.MayAct(c.owner); got != c.act {
			t.Errorf("%s: MayAct = %v", c.name, got)
		}
		if got := c.v.MayRead(c.owner); got != c.mayRead {
			t.Errorf("%s: MayRead = %v", c.name, got)
		}
	}
}

func TestBuildJob(t *testing.T) {
	j := job("j1", domain.StateRunning, 0, 2, 2, t0)
	j.Owner, j.Attempt = "alice", 1
	j.ReservedAt, j.RunningAt = t0.Add(10*time.Second), t0.Add(20*time.Second)
	j.Timing = domain.Timing{Compute: 30 * time.Second, SchedLatency: 10 * time.Second, GangWait: 10 * time.Second}
	j.Placement = &domain.Placement{Nodes: []domain.NodePlacement{
		{Node: "n2", GPUs: []int{0, 1}, Ranks: []domain.Rank{{Rank: 1, GPUs: []int{0, 1}, CPUs: []int{4, 5}}}},
		{Node: "n1", GPUs: []int{2, 3}, Ranks: []domain.Rank{{Rank: 0, GPUs: []int{2, 3}}}},
	}}
	code := 0
	evs := []events.Event{ // out of order, as the stream may hold them
		{Type: "running", Time: t0.Add(20 * time.Second), Attempt: 1},
		{Type: "admitted", Time: t0, Queue: "default"},
		{Type: "reserved", Time: t0.Add(10 * time.Second), Attempt: 1, Placement: j.Placement},
		{Type: "succeeded", Time: t0.Add(60 * time.Second), Attempt: 1, ExitCode: &code},
	}
	owner := Viewer{AuthOn: true, Name: "alice", Role: "user", CSRF: "x"}
	p := BuildJob(JobInput{Job: j, Events: evs, Now: t0.Add(40 * time.Second), Viewer: owner})
	if p.Efficiency != "75.0%" || p.GangWait != "10s" || p.Elapsed != "20s" || p.Shape != "2×2" {
		t.Errorf("facts: η %s wait %s elapsed %s shape %s", p.Efficiency, p.GangWait, p.Elapsed, p.Shape)
	}
	if len(p.Ranks) != 2 || p.Ranks[0] != (RankRow{Rank: 0, Node: "n1", GPUs: "2,3"}) || p.Ranks[1].CPUs != "4,5" {
		t.Errorf("ranks %+v", p.Ranks)
	}
	var types []string
	for _, r := range p.Timeline {
		types = append(types, string(r.Type))
	}
	if want := []string{"admitted", "reserved", "running", "succeeded"}; !equal(types, want) {
		t.Errorf("timeline %v, want %v", types, want)
	}
	if r := p.Timeline[1]; r.Offset != "+10s" || r.Time != "10:00:10.000" || r.Text != "attempt 1; 4 GPUs on 2 nodes" {
		t.Errorf("reserved row %+v", r)
	}
	if !strings.Contains(p.Timeline[3].Text, "exit 0") {
		t.Errorf("succeeded row %+v", p.Timeline[3])
	}
	if len(p.Phases) != 3 || p.Phases[0].W != 25 || p.Phases[1].X != 25 || p.Phases[2].X != 50 || p.Phases[2].W != 50 {
		t.Errorf("phases %+v", p.Phases)
	}
	if !p.CanCancel || !p.CanCheckpoint || !p.Readable || len(p.LogRanks) != 2 {
		t.Errorf("owner: cancel %v checkpoint %v readable %v ranks %v", p.CanCancel, p.CanCheckpoint, p.Readable, p.LogRanks)
	}
	if !strings.Contains(p.Spec, `"gpusPerNode": 2`) {
		t.Errorf("spec %s", p.Spec)
	}

	other := BuildJob(JobInput{Job: j, Events: evs, Now: t0, Viewer: Viewer{AuthOn: true, Name: "bob", Role: "user"}})
	if other.CanCancel || other.CanCheckpoint || other.Readable || other.Timeline != nil {
		t.Errorf("another user may act or read: %+v", other)
	}
	j.State, j.EndedAt = domain.StateSucceeded, t0.Add(60*time.Second)
	ended := BuildJob(JobInput{Job: j, Now: t0.Add(time.Hour), Viewer: owner})
	if ended.CanCancel || ended.CanCheckpoint || ended.Elapsed != "40s" {
		t.Errorf("ended job: cancel %v checkpoint %v elapsed %s", ended.CanCancel, ended.CanCheckpoint, ended.Elapsed)
	}
	pending := BuildJob(JobInput{Job: job("p", domain.StatePending, 0, 1, 1, t0), Now: t0.Add(time.Minute), Viewer: Viewer{AuthOn: true, Name: "a", Role: "admin"}})
	if !pending.CanCancel || pending.CanCheckpoint || pending.Efficiency != "—" || len(pending.Phases) != 1 || pending.Phases[0].W != 100 {
		t.Errorf("pending job: %+v", pending)
	}
}

// The waterfall lays out the latest trace, nested, with bars in percent of
// the whole; a viewer who may not read the job's events gets none.
func TestBuildJobWaterfall(t *testing.T) {
	span := func(trace, id, parent, name string, from, to time.Duration) telemetry.SpanRecord {
		return telemetry.SpanRecord{TraceID: trace, SpanID: id, ParentSpanID: parent, Name: name, Service: "lockstep-placement",
			Start: t0.Add(from), End: t0.Add(to)}
	}
	traces := []telemetry.JobTrace{
		{ID: "old", Spans: []telemetry.SpanRecord{span("old", "o", "", "first attempt", 0, time.Second)}},
		{ID: "new", Spans: []telemetry.SpanRecord{
			span("new", "a", "", "submit", 0, 4*time.Second),
			span("new", "c", "a", "late", 3*time.Second, 4*time.Second),
			span("new", "b", "a", "early", time.Second, 2*time.Second),
		}},
	}
	j := job("w", domain.StateRunning, 0, 1, 1, t0)
	j.Owner, j.TraceID = "alice", "new"
	in := JobInput{Job: j, Now: t0, Viewer: Viewer{AuthOn: true, Name: "alice", Role: "user"}, Traces: traces, TraceURL: "http://j/trace/{trace}"}
	p := BuildJob(in)
	w := p.Waterfall
	if w == nil || w.TraceID != "new" || w.Total != "4s" || len(w.Bars) != 3 {
		t.Fatalf("waterfall %+v", w)
	}
	want := []SpanBar{
		{Service: "placement", Name: "submit", Depth: 0, Offset: "+0s", Took: "4s", X: 0, W: 100},
		{Service: "placement", Name: "early", Depth: 1, Offset: "+1s", Took: "1s", X: 25, W: 25},
		{Service: "placement", Name: "late", Depth: 1, Offset: "+3s", Took: "1s", X: 75, W: 25},
	}
	for i, b := range w.Bars {
		if b != want[i] {
			t.Errorf("bar %d = %+v, want %+v", i, b, want[i])
		}
	}
	if p.TraceLink != "http://j/trace/new" {
		t.Errorf("trace link %q", p.TraceLink)
	}
	in.Viewer = Viewer{AuthOn: true, Name: "bob", Role: "user"}
	if other := BuildJob(in); other.Waterfall != nil || other.TraceLink != "" {
		t.Errorf("another user sees the trace: %+v %q", other.Waterfall, other.TraceLink)
	}
}
