package devcluster_test

import (
	"testing"
	"time"

	"github.com/lockstep-dev/lockstep/deploy/devcluster"
	"github.com/lockstep-dev/lockstep/shared/contract/domain"
	"github.com/lockstep-dev/lockstep/shared/core/place"
)

// TestPerPodDeadlockVersusGang reproduces the Kubernetes gang deadlock
// (volcano#3373 in miniature): two 2-node × 8-GPU jobs, 3 free nodes.
// Scheduled pod by pod (one pod per rank, arriving interleaved, each on
// the least allocated node), both jobs end up holding GPUs and neither can
// start: 24 GPUs idle forever. Lockstep reserves whole gangs: it runs one,
// then the other.
func TestPerPodDeadlockVersusGang(t *testing.T) {
	// Per-pod, pure: the Kubernetes default scheduler's behaviour.
	nodes := devcluster.SimulatedNodes(3, 8, 1)
	snap := &place.Snapshot{PortBase: 29500, PortCount: 10}
	for _, n := range nodes {
		snap.Nodes = append(snap.Nodes, place.NodeView{Node: &n, Up: true, Free: []int{0, 1, 2, 3, 4, 5, 6, 7}})
	}
	onePod := func(job string) place.Request {
		return place.Request{JobID: job, Nodes: 1, GPUsPerNode: 1, TasksPerNode: 1}
	}
	placed := map[string]int{}
	for range 16 { // pods of A and B arrive interleaved
		for _, job := range []string{"a", "b"} {
			if place.PlacePods(snap, onePod(job)).Complete() {
				placed[job]++
			}
		}
	}
	if placed["a"] >= 16 || placed["b"] >= 16 {
		t.Fatalf("per-pod: a job got all its pods (%v); the scenario should deadlock", placed)
	}
	if snap.FreeGPUs() != 0 {
		t.Fatalf("per-pod: %d GPUs still free", snap.FreeGPUs())
	}
	t.Logf("per-pod: a holds %d/16 GPUs, b holds %d/16, 0 free: neither can ever start (deadlock)", placed["a"], placed["b"])

	// Lockstep: the same two jobs on the same 3 nodes run one after the other.
	h := newHarness(t, devcluster.Config{Nodes: 3})
	a := h.submit(`{"id":"gang-a","gang":{"nodes":2,"gpusPerNode":8},"command":["sleep","1"]}`)
	b := h.submit(`{"id":"gang-b","gang":{"nodes":2,"gpusPerNode":8},"command":["sleep","1"]}`)
	ja := h.waitFor(a, 60*time.Second, func(j domain.Job) bool { return j.State.Terminal() })
	jb := h.waitFor(b, 60*time.Second, func(j domain.Job) bool { return j.State.Terminal() })
	if ja.State != domain.StateSucceeded || jb.State != domain.StateSucceeded {
		t.Fatalf("gang-a %s, gang-b %s", ja.State, jb.State)
	}
	first, second := ja, jb
	if jb.RunningAt.Before(ja.RunningAt) {
		first, second = jb, ja
	}
	if second.RunningAt.Before(first.EndedAt.Add(-50 * time.Millisecond)) {
		t.Errorf("%s started at %s before %s ended at %s: the two gangs cannot both fit", second.ID,
			second.RunningAt.Format(time.StampMilli), first.ID, first.EndedAt.Format(time.StampMilli))
	}
	t.Logf("gang: %s ran, then %s (waited %s)", first.ID, second.ID, second.RunningAt.Sub(second.SubmittedAt).Round(time.Millisecond))
	h.checkInvariants()
}
