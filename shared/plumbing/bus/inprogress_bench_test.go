package bus

import (
	"testing"
	"time"
)

// BenchmarkKeepInProgress is what every handled message pays for its
// progress timer when the handler answers before the first period, as
// nearly all do.
func BenchmarkKeepInProgress(b *testing.B) {
	for b.Loop() {
		keepInProgress(nil, 10*time.Second, DefaultMaxHandle)()
	}
}
