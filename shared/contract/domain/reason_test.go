package domain_test

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/lockstep-dev/lockstep/shared/contract/domain"
)

func TestBoundReason(t *testing.T) {
	if got := domain.BoundReason("short"); got != "short" {
		t.Errorf("short reason changed: %q", got)
	}
	exact := strings.Repeat("a", domain.MaxReasonBytes)
	if got := domain.BoundReason(exact); got != exact {
		t.Errorf("a reason of exactly the bound was cut to %d bytes", len(got))
	}
	// Multi-byte runes across the cut: the result is valid UTF-8 within
	// the bound, whatever the offset.
	for pad := range 4 {
		long := strings.Repeat("x", pad) + strings.Repeat("ü€😀", domain.MaxReasonBytes)
		got := domain.BoundReason(long)
		if len(got) > domain.MaxReasonBytes || !utf8.ValidString(got) || !strings.HasSuffix(got, "…") {
			t.Errorf("pad %d: %d bytes, valid %v, ends %q", pad, len(got), utf8.ValidString(got), got[len(got)-6:])
		}
	}
}
