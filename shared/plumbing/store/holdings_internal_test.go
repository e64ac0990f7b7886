package store

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/lockstep-dev/lockstep/shared/contract/domain"
)

// holdingRecord is a 2-node, 8-rank-a-node gang's allocation record at
// alloc/<job>, changed by edit.
func holdingRecord(job string, edit func(*domain.Allocation)) []byte {
	at := time.Date(2026, 12, 7, 0, 0, 0, 0, time.UTC)
	a := domain.Allocation{JobID: job, Attempt: 1, State: domain.AllocReserved, Lease: 7, ReservedAt: at,
		LaunchDeadline: at.Add(time.Minute), NodeEpochs: map[string]int64{}}
	a.Placement.MasterAddr, a.Placement.MasterPort = "n0", 29500
	for k := range 2 {
		np := domain.NodePlacement{Node: fmt.Sprintf("n%d", k), NodeRank: k}
		for g := range 8 {
			np.GPUs = append(np.GPUs, g)
			np.Ranks = append(np.Ranks, domain.Rank{Rank: k*8 + g, LocalRank: g, GPUs: []int{g}, CPUs: []int{4 * g, 4*g + 1}})
		}
		a.Placement.Nodes = append(a.Placement.Nodes, np)
		a.NodeEpochs[np.Node] = 3
	}
	if edit != nil {
		edit(&a)
	}
	return []byte(MustJSON(a))
}

// Whatever record a key held before, a holding decodes every value exactly
// as DecodeAllocation does, refusals included; and it reuses the previous
// placement only when the new one is spelled the same.
func TestDecodeHoldingIsDecodeAllocationWhateverCameBefore(t *testing.T) {
	key := AllocKey("j")
	records := map[string][]byte{
		"reserved": holdingRecord("j", nil),
		"started":  holdingRecord("j", func(a *domain.Allocation) { a.Started = map[string]bool{"n0": true} }),
		"running": holdingRecord("j", func(a *domain.Allocation) {
			a.State, a.Lease, a.Started = domain.AllocRunning, 0, map[string]bool{"n0": true, "n1": true}
		}),
		"whole":                     holdingRecord("j", func(a *domain.Allocation) { a.WholeNodes = []string{"n0", "n1"} }),
		"attempt 2, same placement": holdingRecord("j", func(a *domain.Allocation) { a.Attempt = 2 }),
		"other GPUs":                holdingRecord("j", func(a *domain.Allocation) { a.Placement.Nodes[1].GPUs[7] = 9 }),
		"other node":                holdingRecord("j", func(a *domain.Allocation) { a.Placement.Nodes[1].Node = "n9" }),
		// Refused, though its placement is spelled as the others':
		"another job's":         holdingRecord("k", nil),
		"bad state":             holdingRecord("j", func(a *domain.Allocation) { a.State = "lost" }),
		"whole node not placed": holdingRecord("j", func(a *domain.Allocation) { a.WholeNodes = []string{"n7"} }),
		"GPU twice":             holdingRecord("j", func(a *domain.Allocation) { a.Placement.Nodes[0].GPUs[1] = 0 }),
		"no placement":          []byte(strings.Replace(string(holdingRecord("j", nil)), `"placement":`, `"placementX":`, 1)),
		"truncated":             holdingRecord("j", nil)[:200],
		// A placement given twice decodes the second over the first, as
		// encoding/json does: accepted, and its bytes never reused.
		"placement twice": []byte(strings.Replace(string(holdingRecord("j", nil)), `"lease"`,
			`"placement":{"nodes":[{"node":"n3","nodeRank":0,"gpus":[1],"ranks":[]}],"leaves":["l1"]},"lease"`, 1)),
		"Placement, then null": []byte(strings.Replace(string(holdingRecord("j", nil)), `"lease"`, `"Placement":null,"lease"`, 1)),
	}
	prevs := map[string]*Holding{"none": nil}
	for name, v := range records {
		if h, err := decodeHolding(key, v, nil); err == nil {
			prevs[name] = &h
		}
	}
	if len(prevs) != 10 {
		t.Fatalf("%d records decode on their own, want 9 (and none)", len(prevs)-1)
	}
	for name, v := range records {
		want, wantErr := DecodeAllocation(key, v)
		for prevName, prev := range prevs {
			got, err := decodeHolding(key, v, prev)
			if (err != nil) != (wantErr != nil) {
				t.Errorf("%s over %s: error %v, DecodeAllocation's %v", name, prevName, err, wantErr)
				continue
			}
			if err == nil && !reflect.DeepEqual(got.Allocation, want) {
				t.Errorf("%s over %s decodes differently:\n got  %+v\n want %+v", name, prevName, got.Allocation, want)
			}
			if err != nil {
				continue
			}
			reused := prev != nil && &got.Placement.Nodes[0] == &prev.Placement.Nodes[0]
			if same := got.SamePlacement(prev); reused != same {
				t.Errorf("%s over %s: placement reused %v, same placement %v", name, prevName, reused, same)
			}
		}
	}
	// The rewrites within an attempt keep the placement, and reuse it; a
	// changed placement, or one given twice, is decoded afresh.
	for _, c := range []struct {
		prev, next string
		reused     bool
	}{
		{"reserved", "started", true}, {"started", "running", true}, {"reserved", "attempt 2, same placement", true},
		{"reserved", "other GPUs", false}, {"reserved", "other node", false},
		{"reserved", "placement twice", false}, {"placement twice", "placement twice", false}, {"placement twice", "reserved", false},
	} {
		prev := prevs[c.prev]
		h, err := decodeHolding(key, records[c.next], prev)
		if err != nil {
			t.Fatalf("%s after %s: %v", c.next, c.prev, err)
		}
		if reused := &h.Placement.Nodes[0] == &prev.Placement.Nodes[0]; reused != c.reused {
			t.Errorf("%s after %s: placement reused %v, want %v", c.next, c.prev, reused, c.reused)
		}
	}
}

// A running gang's record written over its reserved one, as placement's
// cache sees it at the launch barrier: with the previous record, and
// decoded whole (DecodeAllocation, what the cache did before).
func BenchmarkHoldingRewrite(b *testing.B) {
	key := AllocKey("j")
	prev, err := decodeHolding(key, holdingRecord("j", nil), nil)
	if err != nil {
		b.Fatal(err)
	}
	running := holdingRecord("j", func(a *domain.Allocation) {
		a.State, a.Lease, a.Started = domain.AllocRunning, 0, map[string]bool{"n0": true, "n1": true}
	})
	b.Run("over the reserved record", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := decodeHolding(key, running, &prev); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("whole", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := DecodeAllocation(key, running); err != nil {
				b.Fatal(err)
			}
		}
	})
}
