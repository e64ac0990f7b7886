//go:build !lockstep_client

package main

import (
	"fmt"
	"slices"
	"strings"

	"github.com/spf13/pflag"
)

// scenarios name presets of a command's flags: `--scenario NAME` sets
// each flag of the preset that the command line left unset.
type scenarios map[string][][2]string

// simScenarios are the streams the Slurm side-by-side of issue 22 ran,
// in the simulator.
var simScenarios = scenarios{
	"burst":          append(simStream(), burstRate),
	"burst-switches": append(simStream(), burstRate, oneLeaf[0], oneLeaf[1]),
	"poisson":        append(simStream(), poissonArrivals[:]...),
}

// loadtestScenarios are the same streams live, and the comparison's
// third one, which needs the real services' latency: the probe.
var loadtestScenarios = scenarios{
	"burst":          append(liveStream(), burstRate),
	"burst-switches": append(liveStream(), burstRate, oneLeaf[0], oneLeaf[1]),
	"poisson":        append(liveStream(), poissonArrivals[:]...),
	// One gang at a time on an idle cluster: gangs of 1, 2, 4 and 8 whole
	// nodes, each running 1 s, one every 2 s, so each is submitted after
	// the last has ended and the report's gang start by size is the
	// latency of scheduling alone (the most gangs holding GPUs at once
	// says whether it was).
	"probe": append(issue22Cluster(), [][2]string{
		{"count", "40"}, {"sizes", "1x8:1,2x8:1,4x8:1,8x8:1"}, {"durations", "1s:1"}, {"rate", "0.5"},
		{"span", "24h"}, {"time-limit", "2m"}, {"raw-txns", "0"},
	}...),
}

// issue22Cluster is the comparison's cluster: 32 nodes × 8 GPUs on 4 leaf
// switches of 8 nodes under one spine.
func issue22Cluster() [][2]string {
	return [][2]string{{"nodes", "32"}, {"gpus-per-node", "8"}, {"nodes-per-leaf", "8"}, {"leaves-per-spine", "4"}}
}

// issue22Stream is the comparison's stream on its cluster: 200 gangs of
// 1/2/4/8 whole nodes (weights 40/30/20/10), run times uniform over 1–10
// s, every job asking a 2-minute time limit as its users did (with limits
// equal to run times the policy would know which gang ends first, which
// no scheduler is told).
func issue22Stream() [][2]string {
	return append(issue22Cluster(), [][2]string{
		{"count", "200"}, {"sizes", "1x8:40,2x8:30,4x8:20,8x8:10"},
		{"durations", "1s:1,2s:1,3s:1,4s:1,5s:1,6s:1,7s:1,8s:1,9s:1,10s:1"}, {"time-limit", "2m"},
	}...)
}

// simStream is the stream for the simulator, which must be told it is
// synthetic and that Lockstep adds no bounded switch wait of its own.
func simStream() [][2]string {
	return append(issue22Stream(), [2]string{"trace", "synthetic"}, [2]string{"switch-wait", "-1s"})
}

// liveStream is the stream for the load test, without the raw etcd
// measurement, which is about throughput, not these streams.
func liveStream() [][2]string { return append(issue22Stream(), [2]string{"raw-txns", "0"}) }

var (
	// burstRate submits the 200 jobs at once.
	burstRate = [2]string{"rate", "100000"}
	// oneLeaf has every multi-node gang ask for one leaf, waiting up to 15
	// minutes for it (maxSwitches 1@15m).
	oneLeaf = [2][2]string{{"constrained", "1"}, {"constrained-wait", "15m"}}
	// poissonArrivals has the 200 arrive as a Poisson process at offered
	// load 0.6: the mean job holds 20.8 GPUs for 5.5 s (114.4 GPU-s), so
	// 0.6 × 256 GPUs ÷ 114.4 GPU-s = 1.343 jobs/s.
	poissonArrivals = [3][2]string{{"rate", "1.343"}, {"poisson", "true"}, {"span", "24h"}}
)

// yieldsTo names, for a preset flag, the flag that would lose to it if
// both were set: the preset then stays unset when the command line gave
// that one (--limit-factor 3 asks for limits from run times, which the
// preset's --time-limit would override).
var yieldsTo = map[string]string{"time-limit": "limit-factor"}

// apply sets the scenario's flags that the command line did not set
// itself (those win).
func (s scenarios) apply(fs *pflag.FlagSet, name string) error {
	preset, ok := s[name]
	if !ok {
		names := make([]string, 0, len(s))
		for n := range s {
			names = append(names, n)
		}
		slices.Sort(names)
		return usagef("--scenario: %q is none of %s", name, strings.Join(names, ", "))
	}
	if fs.Changed("trace") && fs.Lookup("trace").Value.String() != "synthetic" {
		return usagef("--scenario %s is a synthetic stream: leave out --trace", name)
	}
	for _, kv := range preset {
		if fs.Changed(kv[0]) || fs.Changed(yieldsTo[kv[0]]) {
			continue
		}
		if err := fs.Set(kv[0], kv[1]); err != nil {
			return fmt.Errorf("--scenario %s: --%s %s: %w", name, kv[0], kv[1], err)
		}
	}
	return nil
}
