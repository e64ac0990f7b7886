package web

import (
	"strings"
	"testing"
)

// A viewer holds at most its share of live streams and the dashboard its
// total; a closed stream gives its slot back, once however often closed.
func TestStreamSlots(t *testing.T) {
	s := newStreamSlots(2, 3)
	a1, why := s.take("alice")
	if why != "" {
		t.Fatal(why)
	}
	if _, why := s.take("alice"); why != "" {
		t.Fatal(why)
	}
	if _, why := s.take("alice"); !strings.Contains(why, "for alice") {
		t.Errorf("alice's third stream: %q, want refused as over her share", why)
	}
	if _, why := s.take("bob"); why != "" {
		t.Fatal(why)
	}
	if _, why := s.take("carol"); !strings.Contains(why, "its most") {
		t.Errorf("a fourth stream in all: %q, want refused as over the total", why)
	}
	a1()
	a1()
	if _, why := s.take("carol"); why != "" {
		t.Errorf("after one closed: %q", why)
	}
	if _, why := s.take("alice"); !strings.Contains(why, "its most") {
		t.Errorf("a closed stream released twice freed two slots: %q", why)
	}
}

// Viewers without a name (a dashboard without auth, all from loopback)
// are bound by the total only, not by one viewer's share.
func TestStreamSlotsOfUnnamedViewers(t *testing.T) {
	s := newStreamSlots(1, 3)
	for i := range 3 {
		if _, why := s.take(""); why != "" {
			t.Fatalf("unnamed stream %d: %s", i+1, why)
		}
	}
	if _, why := s.take(""); !strings.Contains(why, "its most") {
		t.Errorf("a fourth in all: %q, want refused as over the total", why)
	}
}
