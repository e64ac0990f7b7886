package sim

import (
	"time"

	"github.com/lockstep-dev/lockstep/loadtest/stats"
)

// Result is one policy's outcome on one stream. Times are in seconds,
// GPU time in GPU-hours.
type Result struct {
	Policy      Policy `json:"policy"`
	Description string `json:"description"`
	Jobs        int    `json:"jobs"`
	// Completed ran to their end; Unschedulable could never fit the
	// cluster and were left out.
	Completed     int `json:"completed"`
	Unschedulable int `json:"unschedulable"`
	// Makespan is from the first submission to the last end;
	// MakespanLowerBound is what no schedule beats: the larger of the
	// stream's GPU time ÷ the cluster's GPUs and the latest submission +
	// run time (both from the first submission, unstretched).
	Makespan           float64 `json:"makespanS"`
	MakespanLowerBound float64 `json:"makespanLowerBoundS"`
	// Utilization is useful GPU time ÷ (GPUs × makespan); Busy counts GPUs
	// held (stretched runs and idle pods of incomplete gangs included);
	// ArrivalSpan is Utilization over the span of submissions only.
	Utilization            float64    `json:"utilization"`
	BusyUtilization        float64    `json:"busyUtilization"`
	ArrivalSpanUtilization float64    `json:"arrivalSpanUtilization"`
	QueueDelay             stats.Dist `json:"queueDelayS"`
	// MultiNodeQueueDelay is the mean delay of multi-node jobs;
	// GPUWeightedQueueDelay weighs every job's delay by its GPUs.
	MultiNodeQueueDelay   float64    `json:"multiNodeQueueDelayMeanS"`
	GPUWeightedQueueDelay float64    `json:"gpuWeightedQueueDelayMeanS"`
	JCT                   stats.Dist `json:"jctS"`
	// DelayByNodes is the queueing delay (gang start) per gang node count.
	DelayByNodes map[int]stats.Dist `json:"queueDelayByNodesS"`
	// MultiNodeJobs of the completed; MinLeaves of those on as few leaves
	// as the idle cluster allows; MinLeavesShare = MinLeaves/MultiNodeJobs.
	MultiNodeJobs  int     `json:"multiNodeJobs"`
	MinLeaves      int     `json:"minLeavesJobs"`
	MinLeavesShare float64 `json:"minLeavesShare"`
	// LeavesHistogram[k] counts multi-node jobs spanning k leaves.
	LeavesHistogram []int `json:"leavesHistogram"`
	// PartialGangGPUHours: GPU time held by pods of gangs not yet
	// complete. StretchGPUHours: GPU time lost to topology stretch.
	PartialGangGPUHours float64 `json:"partialGangGPUHours"`
	StretchGPUHours     float64 `json:"stretchGPUHours"`
	UsefulGPUHours      float64 `json:"usefulGPUHours"`
	// Eta is Σ durations ÷ Σ JCT.
	Eta float64 `json:"eta"`
	// Series: per bucket of BucketS seconds, the mean share of GPUs doing
	// useful work and held.
	BucketS    float64   `json:"bucketS"`
	UsefulUtil []float64 `json:"usefulUtil"`
	BusyUtil   []float64 `json:"busyUtil"`
	// Passes is the number of scheduling passes run.
	Passes int `json:"passes"`
	// Wall and CPU are the simulation's own run time and the process's CPU
	// time meanwhile (not deterministic); CPU is 0 where other runs shared
	// the process (`simulate --seeds`), as it would count theirs too.
	Wall float64 `json:"wallS"`
	CPU  float64 `json:"cpuS"`

	// QueueDelays holds every completed job's delay (seconds), for plots.
	QueueDelays []float64 `json:"-"`
}

// collector integrates GPU use over virtual time and gathers per-job
// figures.
type collector struct {
	e        *engine
	gpus     float64
	last     time.Duration
	held     int     // GPUs held now
	useful   float64 // GPUs doing useful work now (Σ GPUs/stretch)
	heldInt  float64 // GPU-seconds
	usefInt  float64
	spanInt  float64 // useful GPU-seconds within the arrival span
	spanLo   time.Duration
	spanHi   time.Duration
	bucket   time.Duration
	usefulB  []float64 // GPU-seconds per bucket
	busyB    []float64
	delays   []float64
	jcts     []float64
	sumDur   float64
	sumJCT   float64
	partialS float64 // GPU-seconds
	stretchS float64 // GPU-seconds
	multi    int
	minLv    int
	hist     []int
	done     int
	lastEnd  time.Duration
	// Σ delay of multi-node jobs; Σ GPUs·delay and Σ GPUs.
	multiDelay, gpuDelay, gpuSum float64
	byNodes                      map[int][]float64
}

func newCollector(e *engine) *collector {
	m := &collector{e: e, gpus: float64(e.c.GPUs())}
	if n := len(e.jobs); n > 0 {
		m.spanLo, m.spanHi = e.jobs[0].Submit, e.jobs[n-1].Submit
	}
	// About a thousand buckets over the arrival span, whole seconds.
	m.bucket = max(((m.spanHi - m.spanLo) / 1000).Round(time.Second), time.Second)
	return m
}

// advance integrates use up to t.
func (m *collector) advance(t time.Duration) {
	if t <= m.last {
		return
	}
	dt := (t - m.last).Seconds()
	m.heldInt += float64(m.held) * dt
	m.usefInt += m.useful * dt
	lo, hi := max(m.last, m.spanLo), min(t, m.spanHi)
	if hi > lo {
		m.spanInt += m.useful * (hi - lo).Seconds()
	}
	// Spread over the buckets [last, t) crosses.
	for s := m.last; s < t; {
		b := int(s / m.bucket)
		end := min(time.Duration(b+1)*m.bucket, t)
		for len(m.usefulB) <= b {
			m.usefulB = append(m.usefulB, 0)
			m.busyB = append(m.busyB, 0)
		}
		d := (end - s).Seconds()
		m.usefulB[b] += m.useful * d
		m.busyB[b] += float64(m.held) * d
		s = end
	}
	m.last = t
}

func (m *collector) hold(gpus int) { m.held += gpus }

func (m *collector) started(j *job, stretch float64) {
	m.useful += float64(j.GPUs()) / stretch
}

// partial records the idle time of a complete gang's earlier pods.
func (m *collector) partial(j *job, now time.Duration) {
	for k, pod := range j.pods {
		m.partialS += float64(len(pod.GPUs)) * (now - j.podAt[k]).Seconds()
	}
}

func (m *collector) finished(j *job, held int, stretch float64) {
	m.held -= held
	m.useful -= float64(j.GPUs()) / stretch
	if m.useful < 1e-9 {
		m.useful = 0 // float drift
	}
	delay := (j.start - j.Submit).Seconds()
	jct := (j.end - j.Submit).Seconds()
	m.delays = append(m.delays, delay)
	if m.byNodes == nil {
		m.byNodes = map[int][]float64{}
	}
	m.byNodes[j.Nodes] = append(m.byNodes[j.Nodes], delay)
	m.jcts = append(m.jcts, jct)
	m.gpuDelay += float64(j.GPUs()) * delay
	m.gpuSum += float64(j.GPUs())
	m.sumDur += j.Duration.Seconds()
	m.sumJCT += jct
	m.stretchS += float64(j.GPUs()) * (j.end - j.start - j.Duration).Seconds()
	m.done++
	m.lastEnd = max(m.lastEnd, j.end)
	if j.Nodes > 1 {
		m.multi++
		m.multiDelay += delay
		if j.leaves <= m.e.c.MinLeaves(j.Nodes) {
			m.minLv++
		}
		for len(m.hist) <= j.leaves {
			m.hist = append(m.hist, 0)
		}
		m.hist[j.leaves]++
	}
}

func (m *collector) result(e *engine) Result {
	r := Result{
		Policy: e.cfg.Policy, Description: e.cfg.Policy.Describe(), Jobs: len(e.jobs), Completed: m.done,
		QueueDelay: stats.Summarize(m.delays), JCT: stats.Summarize(m.jcts),
		MultiNodeJobs: m.multi, MinLeaves: m.minLv, LeavesHistogram: m.hist,
		PartialGangGPUHours: m.partialS / 3600, StretchGPUHours: m.stretchS / 3600, UsefulGPUHours: m.usefInt / 3600,
		BucketS: m.bucket.Seconds(), Passes: e.passes, QueueDelays: m.delays,
	}
	for _, j := range e.jobs {
		if j.state == stRejected {
			r.Unschedulable++
		}
	}
	if m.done > 0 {
		r.Makespan = (m.lastEnd - m.spanLo).Seconds()
	}
	r.MakespanLowerBound = m.lowerBound(e)
	r.DelayByNodes = map[int]stats.Dist{}
	for n, d := range m.byNodes {
		r.DelayByNodes[n] = stats.Summarize(d)
	}
	if r.Makespan > 0 {
		r.Utilization = share(m.usefInt, m.gpus*r.Makespan)
		r.BusyUtilization = share(m.heldInt, m.gpus*r.Makespan)
	}
	if span := (m.spanHi - m.spanLo).Seconds(); span > 0 {
		r.ArrivalSpanUtilization = share(m.spanInt, m.gpus*span)
	}
	if m.multi > 0 {
		r.MinLeavesShare = float64(m.minLv) / float64(m.multi)
		r.MultiNodeQueueDelay = m.multiDelay / float64(m.multi)
	}
	if m.gpuSum > 0 {
		r.GPUWeightedQueueDelay = m.gpuDelay / m.gpuSum
	}
	if m.sumJCT > 0 {
		r.Eta = m.sumDur / m.sumJCT
	}
	for b := range m.usefulB {
		if time.Duration(b)*m.bucket >= m.lastEnd {
			break
		}
		r.UsefulUtil = append(r.UsefulUtil, share(m.usefulB[b], m.gpus*m.bucket.Seconds()))
		r.BusyUtil = append(r.BusyUtil, share(m.busyB[b], m.gpus*m.bucket.Seconds()))
	}
	return r
}

// lowerBound is Result.MakespanLowerBound over the jobs that ran.
func (m *collector) lowerBound(e *engine) float64 {
	var work, last float64
	for _, j := range e.jobs {
		if j.state != stDone {
			continue
		}
		work += float64(j.GPUs()) * j.Duration.Seconds()
		last = max(last, (j.Submit + j.Duration - m.spanLo).Seconds())
	}
	return max(work/m.gpus, last)
}
