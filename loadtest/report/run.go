package report

import (
	"fmt"
	"time"
)

// Run says which run a report is of; each report's results.json opens with
// it (its fields inline) and its summary.md with Markdown.
type Run struct {
	// Kind names the report ("loadtest", "simulate", …).
	Kind    string    `json:"kind"`
	Command string    `json:"command"`
	Started time.Time `json:"started"`
	Seed    uint64    `json:"seed"`
}

// NewRun is this process's run of kind, started at started (kept in UTC)
// with seed.
func NewRun(kind string, started time.Time, seed uint64) Run {
	return Run{Kind: kind, Command: CommandLine(), Started: started.UTC(), Seed: seed}
}

// Markdown is the run's lines of a summary: the command, the seed and the
// start.
func (r Run) Markdown() string {
	return fmt.Sprintf("- command: `%s`\n- seed: %d\n- started: %s\n", r.Command, r.Seed, r.Started.Format(time.RFC3339))
}
