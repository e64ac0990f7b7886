package agent

import (
	"os"

	"github.com/lockstep-dev/lockstep/services/agent/procfs"
)

// tokenHolders lists the processes started with one of tokens as their
// rank token: what is left of those ranks' trees. Only the owner (or
// root) can read a process's environment, so others' processes never
// match.
func tokenHolders(tokens map[string]bool) []int {
	var out []int
	self := os.Getpid()
	for _, p := range procfs.List() {
		if p.PID != self && tokens[procfs.EnvValue(p.PID, envRankToken)] {
			out = append(out, p.PID)
		}
	}
	return out
}
