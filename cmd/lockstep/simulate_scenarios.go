//go:build !lockstep_client

package main

import (
	"fmt"
	"slices"
	"strings"

	"github.com/spf13/pflag"
)

// simScenarios are the streams the Slurm side-by-side of issue 22 ran,
// as presets of simulate's flags: 32 nodes × 8 GPUs on 4 leaf switches
// of 8 nodes under one spine, gangs of 1/2/4/8 whole nodes (weights
// 40/30/20/10), run times uniform over 1–10 s, every job asking a 2-minute
// time limit as its users did (with limits equal to run times the policy
// would know which gang ends first, which no scheduler is told).
var simScenarios = map[string][][2]string{
	// 200 jobs at once, no topology limits.
	"burst": burstFlags(),
	// The burst with every multi-node gang asking for one leaf, waiting up
	// to 15 minutes for it (maxSwitches 1@15m).
	"burst-switches": append(burstFlags(), [2]string{"constrained", "1"}, [2]string{"constrained-wait", "15m"}),
	// 200 jobs arriving as a Poisson process at offered load 0.6: the mean
	// job holds 20.8 GPUs for 5.5 s (114.4 GPU-s), so 0.6 × 256 GPUs ÷
	// 114.4 GPU-s = 1.343 jobs/s.
	"poisson": append(streamFlags(), [2]string{"rate", "1.343"}, [2]string{"poisson", "true"}, [2]string{"span", "24h"}),
}

func streamFlags() [][2]string {
	return [][2]string{
		{"trace", "synthetic"}, {"nodes", "32"}, {"gpus-per-node", "8"}, {"nodes-per-leaf", "8"}, {"leaves-per-spine", "4"},
		{"count", "200"}, {"sizes", "1x8:40,2x8:30,4x8:20,8x8:10"},
		{"durations", "1s:1,2s:1,3s:1,4s:1,5s:1,6s:1,7s:1,8s:1,9s:1,10s:1"}, {"time-limit", "2m"},
		// No bounded switch wait of Lockstep's own: only what a job asks.
		{"switch-wait", "-1s"},
	}
}

func burstFlags() [][2]string {
	return append(streamFlags(), [2]string{"rate", "100000"})
}

// yieldsTo names, for a preset flag, the flag that would lose to it if
// both were set: the preset then stays unset when the command line gave
// that one (--limit-factor 3 asks for limits from run times, which the
// preset's --time-limit would override).
var yieldsTo = map[string]string{"time-limit": "limit-factor"}

// applyScenario sets the scenario's flags that the command line did not
// set itself (those win).
func applyScenario(fs *pflag.FlagSet, name string) error {
	preset, ok := simScenarios[name]
	if !ok {
		names := make([]string, 0, len(simScenarios))
		for n := range simScenarios {
			names = append(names, n)
		}
		slices.Sort(names)
		return usagef("--scenario: %q is none of %s", name, strings.Join(names, ", "))
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
