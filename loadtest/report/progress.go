package report

import (
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"
)

// Progress draws "label [=====     ] 45% 12s ETA 15s" on one terminal
// line. It draws nothing unless its writer is a terminal, so logs and CI
// output stay clean. Safe for concurrent use.
type Progress struct {
	w     io.Writer
	label string
	total float64
	start time.Time

	mu   sync.Mutex
	last time.Time
	on   bool
}

// NewProgress returns a bar for total units of work, drawn on w if w is a
// terminal.
func NewProgress(w io.Writer, label string, total float64) *Progress {
	return &Progress{w: w, label: label, total: total, start: time.Now(), on: IsTerminal(w)}
}

// IsTerminal reports whether w is a character device.
func IsTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// Set reports done units; redraws at most 10 times a second.
func (p *Progress) Set(done float64) {
	if p == nil || !p.on {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	now := time.Now()
	if now.Sub(p.last) < 100*time.Millisecond && done < p.total {
		return
	}
	p.last = now
	frac := 0.0
	if p.total > 0 {
		frac = min(max(done/p.total, 0), 1)
	}
	const width = 30
	n := int(frac * width)
	elapsed := now.Sub(p.start)
	eta := "?"
	if frac > 0 {
		eta = (time.Duration(float64(elapsed)/frac) - elapsed).Round(time.Second).String()
	}
	fmt.Fprintf(p.w, "\r%s [%s%s] %3.0f%% %s ETA %s  ", p.label, strings.Repeat("=", n), strings.Repeat(" ", width-n),
		100*frac, elapsed.Round(time.Second), eta)
}

// Done ends the bar's line.
func (p *Progress) Done() {
	if p == nil || !p.on {
		return
	}
	p.Set(p.total)
	fmt.Fprintln(p.w)
}
