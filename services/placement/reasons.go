package placement

import (
	"sync"
	"time"
)

// reasonRefresh is how long a pending job's recorded reason stands before
// new numbers under the same reason code replace it.
const reasonRefresh = 5 * time.Second

// firstReasonAfter is how long an attempt waits before its first reason
// is written. Most jobs start within a cycle or two and never need one;
// when the cluster falls behind, every job waits a few cycles, and writing
// each one's reason then added up to a job-record write per job (0.6–1.1
// a job in 500/s runs that fell behind, each decoded by every follower of
// the bucket) exactly when the CPU was short. A user asking why a job is
// pending sees its reason a second after it began to wait.
const firstReasonAfter = time.Second

// reasonWrites paces the rewrites of pending jobs' reasons. A reason's
// numbers ("5 of 8 nodes with 8 free GPUs", "reserved from ≈ 14:02")
// change whenever any node frees or fills, so writing every change
// rewrote nearly every waiting job's record on every cycle that followed
// a start or an end: on issue 22's burst (200 jobs, 32 nodes) 22.5
// jobs-KV writes per job, where its lifecycle needs about 5, each one
// decoded by every service that follows the bucket; with thousands of jobs
// waiting, thousands of writes a second. An attempt's first reason waits
// until the attempt has waited firstReasonAfter; after that a new reason
// code, or a record someone else wrote since, is written at once; new
// numbers under the same code wait until reasonRefresh has passed since
// this leader last wrote that job's reason, and the first cycle after that
// writes the latest. (Dependency and array holds are written by
// applyDependencies, not paced here.)
//
// Like the switch-wait clocks, the marks live in the leader's memory: a
// new leader writes each reason that differs on its first cycle (once
// the attempt has waited firstReasonAfter).
//
// The zero value is ready to use.
type reasonWrites struct {
	mu   sync.Mutex
	last map[waitKey]reasonMark
}

// reasonText is a pending reason as a job record holds it.
type reasonText struct{ reason, detail string }

// reasonMark is the reason this leader last wrote for a job attempt, and
// the record's revision that write made.
type reasonMark struct {
	code string
	text reasonText
	rev  uint64
	at   time.Time
}

// due reports whether a pending job attempt, waiting since since, whose
// record holds recorded, at revision rev, should get next under code,
// decided at now. Nothing is written for an attempt this leader has not
// written for until it has waited firstReasonAfter. A record older than
// this leader's last write lags it: that write is not made again. One as
// new or newer that says something else was written by someone else since
// (gang's conflict, a dependency or array hold), and the reason is written
// back at once.
func (w *reasonWrites) due(k waitKey, since time.Time, recorded reasonText, rev uint64, code string, next reasonText, now time.Time) bool {
	if next == recorded {
		return false
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	m, ok := w.last[k]
	switch {
	case !ok:
		return now.Sub(since) >= firstReasonAfter
	case m.code != code:
		return true
	case rev < m.rev:
		return false // the record lags this leader's own write
	case recorded != m.text:
		return true // someone else wrote it since
	}
	return now.Sub(m.at) >= reasonRefresh
}

// wrote records that next was written under code at now, making the
// record's revision rev.
func (w *reasonWrites) wrote(k waitKey, code string, next reasonText, rev uint64, now time.Time) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.last == nil {
		w.last = map[waitKey]reasonMark{}
	}
	w.last[k] = reasonMark{code: code, text: next, rev: rev, at: now}
}

// forget drops the marks of job attempts no longer pending (pending says
// which are).
func (w *reasonWrites) forget(pending func(waitKey) bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for k := range w.last {
		if !pending(k) {
			delete(w.last, k)
		}
	}
}
