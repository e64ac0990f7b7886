package main

import (
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/lockstep-dev/lockstep/services/web/view"
	"github.com/lockstep-dev/lockstep/shared/contract/domain"
)

// waitOutput is what `submit --wait` prints, from several goroutines (the
// events, the record): one line at a time, and on a terminal a status
// line under them, "running for 1m02s", redrawn each second.
type waitOutput struct {
	mu  sync.Mutex
	w   io.Writer
	tty bool
	// status is the status line shown now ("" for none).
	status string
	// pending is the last pending reason shown; runningAt when the record
	// said the gang started (zero while it has not).
	pending   string
	runningAt time.Time
	// over: the wait ended; nothing starts the clock again.
	over bool
}

func newWaitOutput(w io.Writer) *waitOutput {
	return &waitOutput{w: w, tty: isTerminal(w)}
}

// line prints one line above the status line.
func (o *waitOutput) line(s string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.erase()
	fmt.Fprintln(o.w, s)
	if o.status != "" {
		fmt.Fprint(o.w, o.status)
	}
}

// erase clears the status line from the terminal (not from o.status).
func (o *waitOutput) erase() {
	if o.tty && o.status != "" {
		fmt.Fprint(o.w, "\r\x1b[K")
	}
}

// clear removes the status line for good (the wait is over: its clock
// stops too).
func (o *waitOutput) clear() {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.erase()
	o.status, o.runningAt, o.over = "", time.Time{}, true
}

// record takes a version of the job record before its end: a pending
// job's new reason is printed with its detail (the numbers placement
// gave: free GPUs, the reservation, the limit), and a running one starts
// the status line's clock.
func (o *waitOutput) record(j domain.Job) {
	switch j.State {
	case domain.StatePending:
		why := pendingLine(j)
		o.mu.Lock()
		changed := why != "" && why != o.pending
		o.pending, o.runningAt = why, time.Time{}
		o.mu.Unlock()
		if changed {
			o.line(fmt.Sprintf("%s  %-10s %s", time.Now().Format("15:04:05.000"), "pending", clean(why)))
		}
	case domain.StateRunning:
		o.mu.Lock()
		start := o.runningAt.IsZero() && o.tty && !o.over
		o.pending, o.runningAt = "", j.RunningAt
		o.mu.Unlock()
		if start {
			go o.tick(j.ID)
		}
	}
}

// pendingLine is a pending job's reason and its detail.
func pendingLine(j domain.Job) string {
	switch {
	case j.Detail == "":
		return j.Reason
	case j.Reason == "":
		return j.Detail
	}
	return j.Reason + ": " + j.Detail
}

// tick redraws the status line each second while the gang runs (a clock
// on the terminal, not a poll of the cluster), until clear or a requeue.
func (o *waitOutput) tick(id string) {
	t := time.NewTicker(time.Second)
	defer t.Stop()
	for {
		o.mu.Lock()
		if o.runningAt.IsZero() {
			o.erase()
			o.status = ""
			o.mu.Unlock()
			return
		}
		o.erase()
		o.status = fmt.Sprintf("  %s running for %s", clean(id), view.Age(time.Since(o.runningAt)))
		fmt.Fprint(o.w, o.status)
		o.mu.Unlock()
		<-t.C
	}
}
