package main

import (
	"context"
	"fmt"
	"sort"
	"time"

	"github.com/lockstep-dev/lockstep/shared/contract/domain"
)

// clusterStats summarises every job record.
type clusterStats struct {
	Jobs         map[domain.State]int `json:"jobs"`
	Compute      time.Duration        `json:"compute"`
	SchedLatency time.Duration        `json:"schedLatency"`
	Drain        time.Duration        `json:"drain"`
	// Efficiency is the cluster η: Σcompute / Σ(compute + scheduling + drain).
	Efficiency   float64       `json:"efficiency"`
	MeanGangWait time.Duration `json:"meanGangWait"`
}

func summarize(jobs []domain.Job) clusterStats {
	st := clusterStats{Jobs: map[domain.State]int{}}
	var waits time.Duration
	n := 0
	for _, j := range jobs {
		st.Jobs[j.State]++
		st.Compute += j.Timing.Compute
		st.SchedLatency += j.Timing.SchedLatency
		st.Drain += j.Timing.Drain
		if !j.ReservedAt.IsZero() || j.Timing.GangWait > 0 {
			waits += j.Timing.GangWait
			n++
		}
	}
	st.Efficiency = domain.Timing{Compute: st.Compute, SchedLatency: st.SchedLatency, Drain: st.Drain}.Efficiency()
	if n > 0 {
		st.MeanGangWait = waits / time.Duration(n)
	}
	return st
}

func runStats(ctx context.Context, env *cliEnv, args []string) error {
	fs := newFlags(env, "stats", "[flags]", "Cluster totals over every job record: jobs by state, cluster η, mean gang wait.")
	nats := natsFlag(fs)
	out := outputFlag(fs)
	if err := fs.Parse(args); err != nil {
		return err
	}
	if err := checkOutput(*out); err != nil {
		return err
	}
	c, err := dial(ctx, nats)
	if err != nil {
		return err
	}
	defer c.Close()
	jobs, bad, err := c.Jobs(ctx)
	if err != nil {
		return err
	}
	warnBad(env, bad)
	st := summarize(jobs)
	if *out == "json" {
		return writeJSON(env, st)
	}
	states := make([]string, 0, len(st.Jobs))
	for s := range st.Jobs {
		states = append(states, string(s))
	}
	sort.Strings(states)
	fmt.Fprintf(env.stdout, "jobs:")
	for _, s := range states {
		fmt.Fprintf(env.stdout, " %s %d", clean(s), st.Jobs[domain.State(s)])
	}
	fmt.Fprintf(env.stdout, "\ncluster η %.3f = compute %s / (compute + scheduling %s + checkpoint drain %s)\nmean gang wait %s\n",
		st.Efficiency, st.Compute.Round(time.Second), st.SchedLatency.Round(time.Millisecond),
		st.Drain.Round(time.Millisecond), st.MeanGangWait.Round(time.Millisecond))
	return nil
}
