package view

import (
	"reflect"
	"testing"
	"time"

	"github.com/lockstep-dev/lockstep/shared/contract/domain"
)

func TestBuildCluster(t *testing.T) {
	a := job("a", domain.StateRunning, 0, 1, 8, t0)
	a.Spec.Queue, a.RunningAt, a.Timing.GangWait = "research", t0.Add(time.Minute), 30*time.Second
	b := job("b", domain.StatePending, 0, 1, 8, t0)
	b.Spec.Queue = "research"
	c := job("c", domain.StateSucceeded, 0, 1, 4, t0)
	c.Spec.Queue, c.RunningAt, c.EndedAt = "prod", t0.Add(time.Minute), t0.Add(time.Hour)
	c.Timing = domain.Timing{Compute: 90 * time.Second, SchedLatency: 10 * time.Second, GangWait: 10 * time.Second}
	fab := Fabric{Nodes: 4, GPUs: 32, Used: 8, Free: 24, Down: 1}
	samples := []Sample{{At: t0, UsedGPUs: 0, GPUs: 32}, {At: t0.Add(time.Minute), UsedGPUs: 8, GPUs: 32, Pending: 1}}
	// A finished job counts the same whether its record is given or only
	// what the page keeps of it.
	whole := BuildCluster(ClusterInput{Samples: samples, Jobs: []domain.Job{a, b, c}, Fabric: fab, Now: t0.Add(time.Hour)})
	cl := BuildCluster(ClusterInput{Samples: samples, Jobs: []domain.Job{a, b}, Ended: []Ended{EndedOf(c)}, Fabric: fab, Now: t0.Add(time.Hour)})
	if !reflect.DeepEqual(cl, whole) {
		t.Errorf("built from a finished job's brief:\n%+v\nfrom its record:\n%+v", cl, whole)
	}
	if cl.Utilization != "25.0%" || cl.MeanEfficiency != "90.0%" || cl.MeanGangWait != "20s" || cl.Down != 1 {
		t.Errorf("totals: %+v", cl)
	}
	counts := map[domain.State]int{}
	for _, s := range cl.ByState {
		counts[s.State] = s.Count
	}
	if len(cl.ByState) != 8 || counts[domain.StateRunning] != 1 || counts[domain.StatePending] != 1 || counts[domain.StateSucceeded] != 1 || counts[domain.StateFailed] != 0 {
		t.Errorf("by state %+v", cl.ByState)
	}
	if len(cl.Queues) != 2 || cl.Queues[0] != (QueueUsage{Name: "research", GPUs: 8, Running: 1, Pending: 1, Percent: 25}) || cl.Queues[1].Name != "prod" {
		t.Errorf("queues %+v", cl.Queues)
	}
	if cl.Utilisation.Points != "0.0,120.0 600.0,90.0" || cl.Utilisation.Max != "100%" || cl.Utilisation.Last != "25%" {
		t.Errorf("utilisation plot %+v", cl.Utilisation)
	}
	if cl.Efficiency.N != 1 || cl.Efficiency.Points != "0.0,12.0 600.0,12.0" || cl.GangWait.N != 2 {
		t.Errorf("η %+v, gang wait %+v", cl.Efficiency, cl.GangWait)
	}
}

func TestBuildPlot(t *testing.T) {
	if p := BuildPlot("x", "", nil, 0); p.Points != "" || p.N != 0 {
		t.Errorf("empty plot %+v", p)
	}
	// Scaled to the largest value; points sorted by time; values above the
	// top clipped to it.
	p := BuildPlot("x", "s", []Point{{At: t0.Add(2 * time.Second), Y: 4}, {At: t0, Y: 2}}, 0)
	if p.Points != "0.0,60.0 600.0,0.0" || p.Max != "4s" || p.From != "10:00:00" || p.To != "10:00:02" {
		t.Errorf("plot %+v", p)
	}
	if p := BuildPlot("x", "%", []Point{{At: t0, Y: 150}}, 100); p.Points != "0.0,0.0 600.0,0.0" {
		t.Errorf("clipped %+v", p)
	}
}
