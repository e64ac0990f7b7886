package main

import (
	"strings"
	"testing"

	"github.com/lockstep-dev/lockstep/shared/contract/jobspec"
)

// --image sets container.image and keeps the rest of the spec's container
// section; a bad reference or a batch job is refused by the spec's rules.
func TestWithImage(t *testing.T) {
	raw, err := withImage([]byte(`{"gang":{"nodes":1,"gpusPerNode":1},"command":["x"],"container":{"image":"old","pullPolicy":"Never"}}`), "probe:v1")
	if err != nil {
		t.Fatal(err)
	}
	s, err := jobspec.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	if s.Container.Image != "probe:v1" || s.Container.PullPolicy != jobspec.PullNever {
		t.Errorf("container %+v", s.Container)
	}
	raw, _ = withImage([]byte(`{"gang":{"nodes":1,"gpusPerNode":1},"command":["x"]}`), "Not An Image")
	if _, err := jobspec.Parse(raw); err == nil || !strings.Contains(err.Error(), "container.image") {
		t.Errorf("bad image: %v", err)
	}
	if _, err := withImage([]byte(`[1]`), "p"); err == nil {
		t.Error("a spec that is not an object was accepted")
	}
}
