package view

import (
	"cmp"
	"encoding/json"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/lockstep-dev/lockstep/shared/contract/domain"
	"github.com/lockstep-dev/lockstep/shared/contract/events"
	"github.com/lockstep-dev/lockstep/shared/plumbing/telemetry"
)

// JobInput is what a job's page is built from.
type JobInput struct {
	Job    domain.Job
	Events []events.Event
	Now    time.Time
	Viewer Viewer
	// Traces are the job's traces where the dashboard has its spans (a
	// dev cluster's span file); TraceURL links the job's trace in a
	// collector's UI, "{trace}" standing for its ID (e.g. Jaeger's
	// http://jaeger:16686/trace/{trace}); either may be empty.
	Traces   []telemetry.JobTrace
	TraceURL string
}

// JobPage is one job's page.
type JobPage struct {
	ID, Name, Owner, Queue string
	State                  domain.State
	Reason, Detail         string
	Attempt, Restarts      int
	Shape                  string
	Color                  string
	Submitted              string
	// Elapsed is how long the job has been (or was) running.
	Elapsed string
	// Efficiency is η (compute ÷ (compute + scheduling latency + drain)),
	// "—" before any compute; GangWait the last attempt's wait for its
	// whole gang.
	Efficiency, GangWait, SchedLatency, Compute string
	Spec                                        string
	Ranks                                       []RankRow
	Timeline                                    []TimelineRow
	Phases                                      []Phase
	// Readable says the viewer may see the events and output; Events
	// holds the timeline only then.
	Readable                 bool
	CanCancel, CanCheckpoint bool
	LogRanks                 []int
	// Waterfall is the trace drawn on the page, TraceLink the trace in the
	// collector's UI; only for viewers who read the job's events.
	Waterfall *Waterfall
	TraceLink string
}

// RankRow is one rank of the placement.
type RankRow struct {
	Rank, LocalRank int
	Node, GPUs      string
	CPUs            string
}

// TimelineRow is one event.
type TimelineRow struct {
	// Offset is the time since submission, Time the wall-clock time.
	Offset, Time string
	Type         events.Type
	Text         string
}

// Phase is one stretch of the job's life on the timeline bar, its
// position and width in percent of the whole.
type Phase struct {
	Name  string
	X, W  float64
	Title string
}

// BuildJob builds a job's page. Events are shown in time order (stream
// order is publish order, not causal order across services).
func BuildJob(in JobInput) JobPage {
	j := in.Job
	p := JobPage{
		ID: j.ID, Name: j.Spec.Name, Owner: j.Owner, Queue: j.Spec.Queue, State: j.State, Reason: j.Reason, Detail: j.Detail,
		Attempt: j.Attempt, Restarts: j.Restarts, Shape: shapeOf(j), Color: JobColor(j.ID),
		Submitted: j.SubmittedAt.UTC().Format(time.RFC3339), Efficiency: "—",
		GangWait: Age(j.Timing.GangWait), SchedLatency: Age(j.Timing.SchedLatency), Compute: Age(j.Timing.Compute),
		Readable: in.Viewer.MayRead(j.Owner),
	}
	if eta := j.Timing.Efficiency(); eta > 0 {
		p.Efficiency = fmt.Sprintf("%.1f%%", 100*eta)
	}
	if !j.RunningAt.IsZero() {
		end := in.Now
		if !j.EndedAt.IsZero() {
			end = j.EndedAt
		}
		p.Elapsed = Age(end.Sub(j.RunningAt))
	}
	if spec, err := json.MarshalIndent(j.Spec, "", "  "); err == nil {
		p.Spec = string(spec)
	}
	if j.Placement != nil {
		for _, np := range j.Placement.Nodes {
			for _, r := range np.Ranks {
				p.Ranks = append(p.Ranks, RankRow{Rank: r.Rank, LocalRank: r.LocalRank, Node: np.Node, GPUs: ints(r.GPUs), CPUs: ints(r.CPUs)})
				p.LogRanks = append(p.LogRanks, r.Rank)
			}
		}
		slices.SortFunc(p.Ranks, func(a, b RankRow) int { return cmp.Compare(a.Rank, b.Rank) })
		slices.Sort(p.LogRanks)
	}
	if p.Readable {
		p.Timeline = timeline(j.SubmittedAt, in.Events)
		p.Waterfall = BuildWaterfall(in.Traces)
		if in.TraceURL != "" && j.TraceID != "" {
			p.TraceLink = strings.ReplaceAll(in.TraceURL, "{trace}", url.PathEscape(j.TraceID))
		}
	}
	p.Phases = phases(j, in.Now)
	act := in.Viewer.MayAct(j.Owner)
	p.CanCancel = act && !j.State.Terminal()
	p.CanCheckpoint = act && j.State == domain.StateRunning
	return p
}

func timeline(submitted time.Time, evs []events.Event) []TimelineRow {
	evs = slices.Clone(evs)
	slices.SortStableFunc(evs, func(a, b events.Event) int { return a.Time.Compare(b.Time) })
	out := make([]TimelineRow, 0, len(evs))
	for _, ev := range evs {
		out = append(out, TimelineRow{
			Offset: "+" + ev.Time.Sub(submitted).Round(time.Millisecond).String(),
			Time:   ev.Time.UTC().Format("15:04:05.000"), Type: ev.Type, Text: eventText(ev),
		})
	}
	return out
}

// eventText says what an event adds beyond its type.
func eventText(ev events.Event) string {
	var parts []string
	if ev.Attempt > 0 {
		parts = append(parts, fmt.Sprintf("attempt %d", ev.Attempt))
	}
	if ev.Node != "" {
		parts = append(parts, "node "+ev.Node)
	}
	if ev.Rank != nil {
		parts = append(parts, fmt.Sprintf("rank %d", *ev.Rank))
	}
	if ev.Placement != nil {
		parts = append(parts, fmt.Sprintf("%d GPUs on %d nodes", ev.Placement.GPUCount(), len(ev.Placement.Nodes)))
	}
	if ev.ExitCode != nil {
		parts = append(parts, fmt.Sprintf("exit %d", *ev.ExitCode))
	}
	if ev.Actor != "" {
		parts = append(parts, "by "+ev.Actor)
	}
	if ev.Reason != "" {
		parts = append(parts, ev.Reason)
	}
	return strings.Join(parts, "; ")
}

// phases are pending, reserved and running, up to the end (or now).
func phases(j domain.Job, now time.Time) []Phase {
	end := now
	if !j.EndedAt.IsZero() {
		end = j.EndedAt
	}
	start := j.SubmittedAt
	total := end.Sub(start)
	if total <= 0 {
		return nil
	}
	marks := []struct {
		name string
		at   time.Time
	}{{"pending", cmp.Or(j.PendingSince, start)}, {"reserved", j.ReservedAt}, {"running", j.RunningAt}}
	var out []Phase
	for i, m := range marks {
		if m.at.IsZero() || m.at.After(end) {
			continue
		}
		until := end
		for _, next := range marks[i+1:] {
			if !next.at.IsZero() && !next.at.Before(m.at) {
				until = next.at
				break
			}
		}
		x, w := 100*float64(m.at.Sub(start))/float64(total), 100*float64(until.Sub(m.at))/float64(total)
		out = append(out, Phase{Name: m.name, X: x, W: w, Title: m.name + " " + Age(until.Sub(m.at))})
	}
	return out
}

func ints(xs []int) string {
	s := make([]string, len(xs))
	for i, x := range xs {
		s[i] = fmt.Sprint(x)
	}
	return strings.Join(s, ",")
}
