package live

import (
	"cmp"
	"encoding/json"
	"testing"
	"time"

	"github.com/lockstep-dev/lockstep/shared/contract/jobspec"
)

// The spec the harness writes passes the schema and means the trace's
// wait (none set: the default): a sub-millisecond wait printed as Go
// prints it ("500µs") was refused, and so was no wait ("0s").
func TestSwitchWaitIsASpecDuration(t *testing.T) {
	for _, d := range []time.Duration{0, 500 * time.Microsecond, 1500 * time.Microsecond, 90 * time.Second} {
		raw, _ := json.Marshal(specJSON{ID: "j", Queue: jobspec.DefaultQueue, Gang: map[string]int{"nodes": 2, "gpusPerNode": 8},
			Command: []string{"true"}, Topology: &topologyJSON{MaxSwitches: 1, WaitForSwitches: switchWait(d)}})
		s, err := jobspec.Parse(raw)
		if err != nil {
			t.Errorf("wait %v: %s refused: %v", d, raw, err)
			continue
		}
		want := cmp.Or(d, jobspec.DefaultSwitchWait)
		if got := s.Topology.WaitForSwitches.Duration(); got != want {
			t.Errorf("wait %v: the spec waits %v, want %v", d, got, want)
		}
	}
}

// --time-limit reaches every spec as the time limit the schema accepts.
func TestTimeLimitIsASpecDuration(t *testing.T) {
	for _, d := range []time.Duration{2 * time.Minute, 90 * time.Second, time.Hour} {
		raw, _ := json.Marshal(specJSON{ID: "j", Queue: jobspec.DefaultQueue, Gang: map[string]int{"nodes": 1, "gpusPerNode": 8},
			Command: []string{"true"}, TimeLimit: d.String()})
		s, err := jobspec.Parse(raw)
		if err != nil {
			t.Errorf("limit %v: %s refused: %v", d, raw, err)
			continue
		}
		if got := s.TimeLimit.Duration(); got != d {
			t.Errorf("limit %v: the spec says %v", d, got)
		}
	}
}
