package fabric

import (
	"testing"

	"github.com/lockstep-dev/lockstep/loadtest/trace"
)

func TestGenerated(t *testing.T) {
	c, err := Generated{Nodes: 20, NodesPerLeaf: 8, LeavesPerSpine: 2, GPUs: 8}.Build()
	if err != nil {
		t.Fatal(err)
	}
	if c.GPUs() != 160 || len(c.Leaves) != 3 || len(c.Spines) != 2 {
		t.Fatalf("%d GPUs, %d leaves, %d spines; want 160, 3, 2", c.GPUs(), len(c.Leaves), len(c.Spines))
	}
	if got := c.MinLeaves(9); got != 2 {
		t.Errorf("MinLeaves(9) = %d, want 2", got)
	}
	if got := c.MinLeaves(21); got != -1 {
		t.Errorf("MinLeaves(21) = %d, want -1", got)
	}
	l, s := c.Span([]string{"n-00001", "n-00008", "n-00017"})
	if l != 2 || s != 2 {
		t.Errorf("Span = %d leaves, %d spines; want 2, 2", l, s)
	}
}

func TestLingjun(t *testing.T) {
	path := trace.DefaultLingjun()
	if path == "" {
		t.Skip("../shared/traces not present")
	}
	c, err := LoadLingjun(path, 128, 8, "")
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Nodes) != 128 || len(c.Spines) != 3 {
		t.Errorf("%d nodes under %d spines; want 128 under 3", len(c.Nodes), len(c.Spines))
	}
	if _, err := LoadLingjun(path, 5000, 8, ""); err == nil {
		t.Error("5,000 nodes from an 847-host topology: no error")
	}
}
