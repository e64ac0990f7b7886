package place_test

import (
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/lockstep-dev/lockstep/shared/contract/domain"
	"github.com/lockstep-dev/lockstep/shared/core/place"
	pt "github.com/lockstep-dev/lockstep/shared/core/place/placetest"
)

// benchPlace measures decisions on a generated fabric kept busy (60% for
// the headline figures) with scattered free GPUs: a stream of gangs drawn from pt.Shapes (a fifth
// with closest binding, a fifth with maxSwitches 1), each placed gang taken
// from the snapshot, the oldest released whenever use rises above the
// target, so every decision sees a busy, fragmented cluster. It reports
// ns/op for Place alone and the 99th percentile decision time as p99-ms
// (run with -benchtime=2000x for "2,000 decisions").
func benchPlace(b *testing.B, f pt.Fabric, busy float64) {
	r := rand.New(rand.NewPCG(uint64(f.Size()), 4))
	snap := f.Snapshot()
	pt.Scatter(snap, r, busy)
	if err := snap.Prepare(); err != nil {
		b.Fatal(err)
	}
	_, total := snap.Capacity()
	free := snap.FreeGPUs()
	target := int(float64(total) * (1 - busy)) // keep the share free
	gangs := make([]place.Request, 4096)
	for i := range gangs {
		gangs[i] = pt.RandomGang(r, "g")
		gangs[i].WaitSince = now.Add(-time.Duration(r.IntN(30)) * time.Minute)
		gangs[i].Topology.WaitForSwitches = 15 * time.Minute
	}
	var held []domain.Placement
	took := make([]time.Duration, 0, b.N)
	placed := 0
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		req := gangs[i%len(gangs)]
		start := time.Now()
		res := place.Place(snap, req, now, uint64(i))
		took = append(took, time.Since(start))
		b.StopTimer()
		if res.Code == place.Placed {
			placed++
			snap.Take(*res.Placement)
			held = append(held, *res.Placement)
			free -= res.Placement.GPUCount()
		}
		for free < target && len(held) > 0 {
			snap.Release(held[0])
			free += held[0].GPUCount()
			held = held[1:]
		}
		b.StartTimer()
	}
	b.StopTimer()
	slices.Sort(took)
	p99 := took[min(len(took)-1, len(took)*99/100)]
	b.ReportMetric(float64(p99)/float64(time.Millisecond), "p99-ms")
	b.ReportMetric(float64(placed)/float64(b.N), "placed/op")
}

func BenchmarkPlace1024Nodes(b *testing.B)  { benchPlace(b, pt.Fabric1024, 0.6) }
func BenchmarkPlace10000Nodes(b *testing.B) { benchPlace(b, pt.Fabric10000, 0.6) }

// BenchmarkPlace10000NodesFull keeps the cluster 95% busy, so most
// decisions fail and pay for their explanation.
func BenchmarkPlace10000NodesFull(b *testing.B) { benchPlace(b, pt.Fabric10000, 0.95) }

// BenchmarkPrepare10000Nodes is the one-time cost per snapshot of
// resolving the topology and indexing it.
func BenchmarkPrepare10000Nodes(b *testing.B) {
	base := pt.Fabric10000.Snapshot()
	for range b.N {
		snap := *base
		snap.Nodes = slices.Clone(base.Nodes) // a fresh snapshot each time
		if err := snap.Prepare(); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkClone1024Nodes is what placement pays twice or more a cycle to
// plan on a copy of the cluster.
func BenchmarkClone1024Nodes(b *testing.B) {
	base := pt.Fabric1024.Snapshot()
	b.ReportAllocs()
	for b.Loop() {
		_ = base.Clone()
	}
}
