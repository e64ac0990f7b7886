//go:build compose

package e2e

import (
	"fmt"
	"strings"
	"sync"
	"testing"
)

// failures keeps every failure message of a run, so that the last lines
// of its output (all a CI summary shows) say why it failed: the messages
// themselves scroll away under a fault's minutes of output and the
// cluster's teardown.
type failures struct {
	mu   sync.Mutex
	msgs []string
}

// recording is t with its failures also kept in f under the phase's name.
func (f *failures) recording(t testing.TB, phase string) testing.TB {
	return &recordingTB{TB: t, f: f, phase: phase}
}

func (f *failures) add(phase, msg string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(msg) > 600 {
		msg = msg[:600] + " …"
	}
	f.msgs = append(f.msgs, phase+": "+strings.ReplaceAll(msg, "\n", "\n    "))
}

// summary is every failure kept, one per line ("" when none).
func (f *failures) summary() string {
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.msgs) == 0 {
		return ""
	}
	return fmt.Sprintf("%d failures:\n  %s", len(f.msgs), strings.Join(f.msgs, "\n  "))
}

type recordingTB struct {
	testing.TB
	f     *failures
	phase string
}

func (r *recordingTB) Error(args ...any) { r.f.add(r.phase, fmt.Sprint(args...)); r.TB.Error(args...) }
func (r *recordingTB) Errorf(format string, args ...any) {
	r.f.add(r.phase, fmt.Sprintf(format, args...))
	r.TB.Errorf(format, args...)
}
func (r *recordingTB) Fatal(args ...any) { r.f.add(r.phase, fmt.Sprint(args...)); r.TB.Fatal(args...) }
func (r *recordingTB) Fatalf(format string, args ...any) {
	r.f.add(r.phase, fmt.Sprintf(format, args...))
	r.TB.Fatalf(format, args...)
}
