package sim

import (
	"fmt"
	"os"
	"syscall"
	"testing"
	"time"

	"github.com/lockstep-dev/lockstep/loadtest/fabric"
	"github.com/lockstep-dev/lockstep/loadtest/trace"
)

func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func TestZZPhilly(t *testing.T) {
	if os.Getenv("PHILLY") == "" {
		t.Skip()
	}
	jobs, err := trace.Load(trace.DefaultPhilly())
	if err != nil {
		t.Fatal(err)
	}
	if n := os.Getenv("PHILLY_N"); n != "" {
		var k int
		fmt.Sscan(n, &k)
		jobs = trace.Head(jobs, k)
	}
	c, _ := fabric.Generated{Nodes: 128, NodesPerLeaf: 8, LeavesPerSpine: 4, GPUs: 8}.Build()
	for _, pol := range Policies {
		if p := os.Getenv("POL"); p != "" && p != string(pol) {
			continue
		}
		c0 := cpuTime()
		w := 0
		fmt.Sscan(os.Getenv("W"), &w)
		sw := time.Duration(0)
		if os.Getenv("NOWAIT") != "" {
			sw = -1
		}
		r, _ := Run(Config{Cluster: c, Jobs: jobs, Policy: pol, Seed: 1, Window: w, SwitchWait: sw})
		fmt.Printf("%-8s span %.3f wall %.1fs cpu %.1fs passes %d util %.3f busy %.3f delay mean %.0f p50 %.0f p99 %.0f makespan %.1fd minleaves %.3f partial %.0f eta %.3f\n",
			pol, r.ArrivalSpanUtilization, r.Wall, (cpuTime() - c0).Seconds(), r.Passes, r.Utilization, r.BusyUtilization, r.QueueDelay.Mean, r.QueueDelay.P50, r.QueueDelay.P99, r.Makespan/86400, r.MinLeavesShare, r.PartialGangGPUHours, r.Eta)
	}
}
