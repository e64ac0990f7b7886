package web

import (
	"testing"
	"time"

	"github.com/lockstep-dev/lockstep/shared/contract/subjects"
)

// The dashboard declares no stream: a replica started with its own (or
// default) stream settings leaves the history the services keep as it is.
func TestDashboardLeavesTheStreamsAlone(t *testing.T) {
	r := startRigWith(t, func(c *Config) { c.HistoryRetention = time.Hour })
	info, err := r.env.Bus.JS.Stream(t.Context(), subjects.StreamHistory)
	if err != nil {
		t.Fatal(err)
	}
	if kept := info.CachedInfo().Config.MaxAge; kept == time.Hour {
		t.Fatalf("the dashboard set %s's max age to its own %s", subjects.StreamHistory, kept)
	}
}
