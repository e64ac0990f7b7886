package place_test

import (
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/lockstep-dev/lockstep/shared/contract/domain"
	"github.com/lockstep-dev/lockstep/shared/core/place"
	pt "github.com/lockstep-dev/lockstep/shared/core/place/placetest"
	"github.com/lockstep-dev/lockstep/shared/core/topology"
)

// TestLingjunOptimality places a stream of gangs on the real 3-level Clos
// of the Alibaba Lingjun trace (847 hosts, 119 ToRs of up to 8 hosts), kept
// about half busy, and checks every decision against optima computed
// directly from the topology: the fewest leaves is what the largest
// leaves' eligible counts need, and the lowest level is that of the lowest
// switch whose own leaves reach the gang with that many.
func TestLingjunOptimality(t *testing.T) {
	path := filepath.Join("..", "..", "..", "shared", "traces", "alibaba_lingjun2023_topo.csv.gz")
	if _, err := os.Stat(path); err != nil {
		t.Skipf("Lingjun trace not available at %s: %v", path, err)
	}
	topo, err := topology.LoadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	b := pt.MakeCluster().Topology(topo)
	for _, leaf := range topo.Leaves() {
		for _, n := range topo.Nodes(leaf) {
			b.Add(pt.MakeNode(n).Sockets(2))
		}
	}
	snap := b.Obj()
	r := rand.New(rand.NewPCG(847, 119))
	pt.Scatter(snap, r, 0.5)
	var held []domain.Placement
	multi := 0
	for i := range 400 {
		req := pt.RandomGang(r, "g")
		req.GPUBind, req.CPUsPerTask, req.Topology = "", 0, place.Constraints{}
		wantLeaves, wantLevel := lingjunOptimum(topo, snap, req)
		res := place.Place(snap, req, now, uint64(i))
		if wantLeaves < 0 {
			if res.Code == place.Placed {
				t.Fatalf("gang %d (%d×%d) placed though too few nodes fit", i, req.Nodes, req.GPUsPerNode)
			}
			continue
		}
		if res.Code != place.Placed || res.Leaves != wantLeaves || res.Level != wantLevel {
			t.Fatalf("gang %d (%d×%d): %s on %d leaves at level %d, optimum %d leaves at level %d (%s)",
				i, req.Nodes, req.GPUsPerNode, res.Code, res.Leaves, res.Level, wantLeaves, wantLevel, res.Detail)
		}
		if req.Nodes > 1 {
			multi++
		}
		snap.Take(*res.Placement)
		held = append(held, *res.Placement)
		if snap.FreeGPUs() < 847*8/3 {
			k := r.IntN(len(held))
			snap.Release(held[k])
			held = slices.Delete(held, k, k+1)
		}
	}
	t.Logf("%d multi-node gangs, all on the minimum number of leaves and the lowest level", multi)
}

// lingjunOptimum computes (fewest leaves, lowest level) for the gang from
// the topology alone, or -1 when fewer than Nodes nodes fit.
func lingjunOptimum(topo *topology.Topology, snap *place.Snapshot, req place.Request) (int, int) {
	free := map[string]int{}
	for _, n := range snap.Nodes {
		if n.Up && !n.Drained {
			free[n.Node.Name] = len(n.Free)
		}
	}
	fitting := func(sw string) []int { // eligible nodes per leaf under sw, largest first
		var out []int
		for _, leaf := range topo.Leaves() {
			if !slices.Contains(topo.Path(topo.Nodes(leaf)[0]), sw) {
				continue
			}
			c := 0
			for _, n := range topo.Nodes(leaf) {
				if free[n] >= req.GPUsPerNode {
					c++
				}
			}
			if c > 0 {
				out = append(out, c)
			}
		}
		slices.Sort(out)
		slices.Reverse(out)
		return out
	}
	need := func(counts []int) int {
		sum := 0
		for i, c := range counts {
			if sum += c; sum >= req.Nodes {
				return i + 1
			}
		}
		return -1
	}
	root := topo.Roots()[0]
	k := need(fitting(root))
	if k <= 1 {
		if k == 1 && req.Nodes == 1 {
			return 1, -1
		}
		return k, 0
	}
	level := topo.Level(root)
	var walk func(sw string)
	walk = func(sw string) {
		if topo.Level(sw) == 0 || need(fitting(sw)) != k {
			return
		}
		level = min(level, topo.Level(sw))
		for _, c := range topo.Children(sw) {
			walk(c)
		}
	}
	walk(root)
	return k, level
}
