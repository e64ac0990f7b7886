package main

import (
	"runtime/debug"
	"testing"
)

func TestTuneGCDefaultsUnlessGOGCIsSet(t *testing.T) {
	orig := debug.SetGCPercent(100)
	defer debug.SetGCPercent(orig)

	tuneGC(func(string) string { return "" })
	if got := debug.SetGCPercent(100); got != defaultGCPercent {
		t.Errorf("GOGC unset: GC percent %d, want %d", got, defaultGCPercent)
	}
	tuneGC(func(k string) string {
		if k == "GOGC" {
			return "100"
		}
		return ""
	})
	if got := debug.SetGCPercent(100); got != 100 {
		t.Errorf("GOGC=100 set: GC percent %d, want the runtime's 100 left alone", got)
	}
}
