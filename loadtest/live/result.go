package live

import (
	"cmp"
	"fmt"
	"slices"
	"sort"
	"time"

	"github.com/lockstep-dev/lockstep/loadtest/stats"
	"github.com/lockstep-dev/lockstep/shared/contract/events"
)

// Result is one load test's measurements. Latencies are in milliseconds,
// from the harness's submit call to the event's time.
type Result struct {
	RunID string `json:"runId"`
	// Mode is "embedded" (devcluster in this process) or "external".
	Mode          string `json:"mode"`
	NATS          string `json:"nats"`
	Etcd          string `json:"etcd"`
	Nodes         int    `json:"nodes"`
	GPUs          int    `json:"gpus"`
	NodesPerLease int    `json:"nodesPerLease"`
	// Auth is what the harness presented ("" for nothing: anonymous, plain
	// text); SubmittedAs is the user the jobs were submitted as ("" without
	// creds) and SubmitSubject where they were published.
	Auth          string `json:"auth,omitempty"`
	SubmittedAs   string `json:"submittedAs,omitempty"`
	SubmitSubject string `json:"submitSubject"`

	// The stream as offered.
	Jobs        int     `json:"jobs"`
	OfferedRate float64 `json:"offeredPerSec"`
	SubmitSpan  float64 `json:"submitSpanS"`

	Submitted    int `json:"submitted"`
	Acked        int `json:"acked"`
	SubmitErrors int `json:"submitErrors"`
	Admitted     int `json:"admitted"`
	Rejected     int `json:"rejected"`
	Reserved     int `json:"reserved"`
	Running      int `json:"running"`
	Succeeded    int `json:"succeeded"`
	Failed       int `json:"failed"`
	Cancelled    int `json:"cancelled"`
	// Unfinished jobs had no final event when the run stopped.
	Unfinished  int  `json:"unfinished"`
	DeadlineHit bool `json:"deadlineHit"`

	ToAdmitted stats.Dist `json:"submitToAdmittedMs"`
	ToReserved stats.Dist `json:"submitToReservedMs"`
	ToRunning  stats.Dist `json:"submitToRunningMs"`

	// SustainedPerSec: jobs reaching running per second over the
	// submission window minus its first tenth (warm-up); OverallPerSec:
	// all running jobs over first submit → last running. ReservedPerSec is
	// SustainedPerSec for reservations.
	SustainedPerSec float64 `json:"sustainedRunningPerSec"`
	OverallPerSec   float64 `json:"overallRunningPerSec"`
	ReservedPerSec  float64 `json:"sustainedReservedPerSec"`
	// Backlog is submitted minus running at the last submission.
	Backlog int `json:"backlogAtLastSubmit"`

	// Conflicts counts conflict events; ConflictsRecorded sums the job
	// records' Conflicts; JobsWithConflicts counts jobs with any.
	Conflicts         int `json:"conflictEvents"`
	ConflictsRecorded int `json:"conflictsRecorded"`
	JobsWithConflicts int `json:"jobsWithConflicts"`
	Requeues          int `json:"requeues"`
	// RequeueReasons counts requeued jobs by their first requeue's reason
	// code.
	RequeueReasons map[string]int `json:"requeueReasons,omitempty"`

	RawBefore *RawResult `json:"rawBefore,omitempty"`
	RawAfter  *RawResult `json:"rawAfter,omitempty"`
	// RawPerSec is the mean raw rate; RatioToRaw is ReservedPerSec over it.
	RawPerSec  float64 `json:"rawTxnPerSec"`
	RatioToRaw float64 `json:"ratioToRaw"`

	Usage Usage `json:"usage"`
	// Placement is how often placement planned during the load phase
	// (nil when its metrics were not read).
	Placement *PlacementCycles `json:"placementCycles,omitempty"`
	// Streams counts the messages each JetStream stream took during the
	// load phase.
	Streams StreamMessages `json:"streamMessages,omitempty"`
	// EtcdWrites counts what the load phase wrote to etcd, read from its
	// history afterwards.
	EtcdWrites *EtcdWrites `json:"etcdWrites,omitempty"`
	Agents     AgentStats  `json:"agents"`

	// Bookkeeping is empty when every submitted job is accounted for in
	// the events seen; otherwise it lists what is not.
	Bookkeeping []string `json:"bookkeeping,omitempty"`

	// Packing is how the gangs were placed and when they started.
	Packing Packing `json:"packing"`
	// Stages split submit → running into its legs (launchStages).
	Stages []Stage `json:"stages,omitempty"`

	// RunningPerSecond counts jobs reaching running in each second since
	// the first submission.
	RunningPerSecond []int `json:"runningPerSecond"`

	// Samples for the plots (ms).
	AdmittedMs []float64 `json:"-"`
	ReservedMs []float64 `json:"-"`
	RunningMs  []float64 `json:"-"`
}

// Packing is the simulator's packing line measured live: multi-node jobs
// on more leaves than the idle cluster needs for them, the makespan
// against what no schedule beats, and the gang start by gang size.
type Packing struct {
	MultiNodeJobs int `json:"multiNodeJobs"`
	ExtraLeafJobs int `json:"extraLeafJobs"`
	// MakespanS runs from the first submission to the last job's end;
	// LowerBoundS is the larger of the GPU time over the GPUs and the
	// latest submission + run time (the simulator's bound).
	MakespanS   float64 `json:"makespanS"`
	LowerBoundS float64 `json:"makespanLowerBoundS"`
	// Utilization is the succeeded jobs' GPU time over GPUs × makespan.
	Utilization float64 `json:"utilization"`
	// StartByNodes is submit → all ranks running (ms) by gang nodes.
	StartByNodes map[int]stats.Dist `json:"startByNodesMs,omitempty"`
	// MostHolding is the most succeeded jobs that held GPUs at once
	// (from their reservation to their end): 1 says every gang was
	// scheduled on an idle cluster, as the probe scenario means to.
	MostHolding int `json:"mostHolding"`
	// OfferedLoad is the GPU time the stream asks for over the cluster's
	// GPUs × the span of its submissions: near 1 the cluster cannot run
	// the stream without a backlog, whatever the scheduler costs. 0 when
	// the submissions span less than a second (a burst).
	OfferedLoad float64 `json:"offeredLoad,omitempty"`
	// HoldOverheadMs is, over the succeeded jobs never requeued, how long
	// each held its GPUs beyond its run time: from its reservation to its
	// end, so the assignments reaching the nodes, the exit reports and
	// gang's finish. It adds to the load the GPUs carry.
	HoldOverheadMs stats.Dist `json:"holdOverheadMs"`
}

// packing measures Packing over the succeeded jobs (job i of the stream is
// ids[i]).
func packing(cfg Config, t0 time.Time, ids []string, tls map[string]timeline) Packing {
	var p Packing
	var work, last float64
	var end time.Time
	starts := map[int][]float64{}
	var holding []interval
	var overheads []float64
	for i, id := range ids {
		tl, j := tls[id], cfg.Jobs[i]
		if tl.final != events.Succeeded {
			continue
		}
		from := tl.reserved
		if from.IsZero() {
			from = tl.running
		}
		holding = append(holding, interval{from, tl.ended})
		if tl.requeues == 0 && !tl.reserved.IsZero() {
			overheads = append(overheads, float64(tl.ended.Sub(tl.reserved)-j.Duration)/float64(time.Millisecond))
		}
		gpuS := float64(j.Nodes*j.GPUsPerNode) * j.Duration.Seconds()
		work += gpuS
		last = max(last, (j.Submit + j.Duration).Seconds())
		if tl.ended.After(end) {
			end = tl.ended
		}
		starts[j.Nodes] = append(starts[j.Nodes], float64(tl.running.Sub(tl.submitted))/float64(time.Millisecond))
		if j.Nodes > 1 {
			p.MultiNodeJobs++
			if leaves, _ := cfg.Cluster.Span(tl.nodes); leaves > cfg.Cluster.MinLeaves(j.Nodes) {
				p.ExtraLeafJobs++
			}
		}
	}
	if gpus := float64(cfg.Cluster.GPUs()); gpus > 0 && !end.IsZero() {
		p.MakespanS = end.Sub(t0).Seconds()
		p.LowerBoundS = max(work/gpus, last)
		if p.MakespanS > 0 {
			p.Utilization = min(work/(gpus*p.MakespanS), 1)
		}
	}
	p.StartByNodes = map[int]stats.Dist{}
	for n, xs := range starts {
		p.StartByNodes[n] = stats.Summarize(xs)
	}
	p.MostHolding = mostOverlapping(holding)
	p.HoldOverheadMs = stats.Summarize(overheads)
	p.OfferedLoad = offeredLoad(cfg)
	return p
}

// offeredLoad is Packing.OfferedLoad: the stream's GPU time over the
// GPUs × its submission span, every job counted, whatever became of it.
func offeredLoad(cfg Config) float64 {
	if len(cfg.Jobs) == 0 || cfg.Cluster.GPUs() == 0 {
		return 0
	}
	first, last := cfg.Jobs[0].Submit, cfg.Jobs[0].Submit
	var work float64
	for _, j := range cfg.Jobs {
		first, last = min(first, j.Submit), max(last, j.Submit)
		work += float64(j.Nodes*j.GPUsPerNode) * j.Duration.Seconds()
	}
	span := (last - first).Seconds()
	if span < 1 {
		return 0
	}
	return work / (float64(cfg.Cluster.GPUs()) * span)
}

// interval is a span of time, its end after its start.
type interval struct{ from, to time.Time }

// mostOverlapping is the most intervals that hold one instant in common.
// An interval that ends when another starts does not overlap it: the
// GPUs a job releases are the next one's to take.
func mostOverlapping(xs []interval) int {
	type edge struct {
		at    time.Time
		delta int
	}
	edges := make([]edge, 0, 2*len(xs))
	for _, x := range xs {
		edges = append(edges, edge{x.from, 1}, edge{x.to, -1})
	}
	// Ends before starts at the same instant.
	slices.SortFunc(edges, func(a, b edge) int { return cmp.Or(a.at.Compare(b.at), cmp.Compare(a.delta, b.delta)) })
	most, n := 0, 0
	for _, e := range edges {
		n += e.delta
		most = max(most, n)
	}
	return most
}

// AgentStats counts the virtual agents' work.
type AgentStats struct {
	Started         int64 `json:"started"`
	Exited          int64 `json:"exited"`
	Lost            int64 `json:"lost"`
	PublishFailures int64 `json:"publishFailures"`
}

// BookkeepingOK reports whether every submitted job was accounted for.
func (r *Result) BookkeepingOK() bool { return len(r.Bookkeeping) == 0 }

func (r *Result) compute(cfg Config, t0 time.Time, s *submission, f *follower, records map[string]int, launches map[string]launch) {
	r.Jobs = len(cfg.Jobs)
	if n := len(cfg.Jobs); n > 1 {
		r.SubmitSpan = (cfg.Jobs[n-1].Submit - cfg.Jobs[0].Submit).Seconds()
		if r.SubmitSpan > 0 {
			r.OfferedRate = float64(n-1) / r.SubmitSpan
		}
	}
	r.Submitted, r.Acked, r.SubmitErrors = s.submitted, s.acked, s.failed
	tls := f.snapshot()
	ms := func(a, b time.Time) float64 { return float64(b.Sub(a)) / float64(time.Millisecond) }
	var problems []string
	missing := 0
	note := func(format string, args ...any) {
		if len(problems) < 20 {
			problems = append(problems, fmt.Sprintf(format, args...))
		}
	}
	var lastRunning time.Time
	winLo := t0.Add(time.Duration(0.1 * float64(s.last.Sub(t0))))
	var inWinRun, inWinRes int
	for _, id := range s.ids {
		tl, ok := tls[id]
		if !ok || (tl.admitted.IsZero() && tl.final != events.Rejected) {
			missing++
			note("job %s: no admitted or rejected event", id)
			continue
		}
		if tl.final == events.Rejected {
			r.Rejected++
			continue
		}
		r.Admitted++
		r.AdmittedMs = append(r.AdmittedMs, ms(tl.submitted, tl.admitted))
		if !tl.reserved.IsZero() {
			r.Reserved++
			r.ReservedMs = append(r.ReservedMs, ms(tl.submitted, tl.reserved))
			if !tl.reserved.Before(winLo) && !tl.reserved.After(s.last) {
				inWinRes++
			}
		}
		if !tl.running.IsZero() {
			r.Running++
			r.RunningMs = append(r.RunningMs, ms(tl.submitted, tl.running))
			if tl.running.After(lastRunning) {
				lastRunning = tl.running
			}
			if !tl.running.Before(winLo) && !tl.running.After(s.last) {
				inWinRun++
			}
			if !tl.running.After(s.last) {
				r.Backlog--
			}
		}
		switch tl.final {
		case events.Succeeded:
			r.Succeeded++
		case events.Failed:
			r.Failed++
			note("job %s failed", id)
		case events.Cancelled:
			r.Cancelled++
		case "":
			r.Unfinished++
		}
		r.Conflicts += tl.conflicts
		r.Requeues += tl.requeues
		if tl.requeues > 0 {
			if r.RequeueReasons == nil {
				r.RequeueReasons = map[string]int{}
			}
			r.RequeueReasons[tl.requeueReason]++
		}
		if tl.conflicts > 0 {
			r.JobsWithConflicts++
		}
		if !tl.running.IsZero() && (tl.reserved.IsZero() || tl.running.Before(tl.reserved)) {
			note("job %s: running without or before reserved", id)
		}
		for _, x := range []time.Time{tl.admitted, tl.reserved, tl.running} {
			if !x.IsZero() && x.Before(tl.submitted) {
				note("job %s: an event precedes its submission (clock skew?)", id)
				break
			}
		}
	}
	r.Backlog += r.Submitted
	if r.Unfinished > 0 {
		note("%d jobs had not ended when the run stopped", r.Unfinished)
	}
	if missing > 0 {
		note("%d submitted jobs never seen admitted or rejected", missing)
	}
	if r.SubmitErrors > 0 {
		note("%d submissions failed", r.SubmitErrors)
	}
	if seen := len(tls); seen > len(s.ids) {
		note("%d events for jobs this run did not submit", seen-len(s.ids))
	}
	r.Bookkeeping = problems
	r.Packing = packing(cfg, t0, s.ids, tls)
	r.Stages = launchStages(s.ids, tls, launches)
	for _, c := range records {
		r.ConflictsRecorded += c
	}
	r.ToAdmitted, r.ToReserved, r.ToRunning = stats.Summarize(r.AdmittedMs), stats.Summarize(r.ReservedMs), stats.Summarize(r.RunningMs)
	if w := s.last.Sub(winLo).Seconds(); w > 0 {
		r.SustainedPerSec = float64(inWinRun) / w
		r.ReservedPerSec = float64(inWinRes) / w
	}
	if d := lastRunning.Sub(t0).Seconds(); d > 0 {
		r.OverallPerSec = float64(r.Running) / d
	}
	var raws []float64
	for _, raw := range []*RawResult{r.RawBefore, r.RawAfter} {
		if raw != nil {
			raws = append(raws, raw.PerSec)
		}
	}
	if len(raws) > 0 {
		for _, x := range raws {
			r.RawPerSec += x
		}
		r.RawPerSec /= float64(len(raws))
		r.RatioToRaw = r.ReservedPerSec / r.RawPerSec
	}
	f.mu.Lock()
	times := slices.Clone(f.runningAt)
	f.mu.Unlock()
	sort.Slice(times, func(a, b int) bool { return times[a].Before(times[b]) })
	for _, t := range times {
		sec := int(t.Sub(t0) / time.Second)
		if sec < 0 {
			continue
		}
		for len(r.RunningPerSecond) <= sec {
			r.RunningPerSecond = append(r.RunningPerSecond, 0)
		}
		r.RunningPerSecond[sec]++
	}
}
