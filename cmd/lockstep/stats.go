package main

import (
	"context"
	"fmt"
	"sort"
	"time"

	"github.com/spf13/cobra"

	"github.com/lockstep-dev/lockstep/shared/contract/client"
	"github.com/lockstep-dev/lockstep/shared/contract/domain"
)

// clusterStats summarises every job record.
type clusterStats struct {
	Jobs         map[domain.State]int `json:"jobs"`
	Compute      time.Duration        `json:"compute"`
	SchedLatency time.Duration        `json:"schedLatency"`
	Drain        time.Duration        `json:"drain"`
	Pull         time.Duration        `json:"pull,omitempty"`
	// Efficiency is the cluster η: Σcompute / Σ(compute + scheduling + pull + drain).
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
		st.Pull += j.Timing.Pull
		if !j.ReservedAt.IsZero() || j.Timing.GangWait > 0 {
			waits += j.Timing.GangWait
			n++
		}
	}
	st.Efficiency = domain.Timing{Compute: st.Compute, SchedLatency: st.SchedLatency, Pull: st.Pull, Drain: st.Drain}.Efficiency()
	if n > 0 {
		st.MeanGangWait = waits / time.Duration(n)
	}
	return st
}

func (a *app) stats(cmd *cobra.Command) runE {
	cmd.Long = "Cluster totals over every job record: jobs by state, cluster η, mean gang wait."
	return a.jobsRun(func(jobs []domain.Job) error {
		st := summarize(jobs)
		if a.structured() {
			return a.writeData(st)
		}
		w := a.env.stdout
		states := make([]string, 0, len(st.Jobs))
		for s := range st.Jobs {
			states = append(states, string(s))
		}
		sort.Strings(states)
		fmt.Fprintf(w, "jobs:")
		for _, s := range states {
			fmt.Fprintf(w, " %s %d", clean(s), st.Jobs[domain.State(s)])
		}
		fmt.Fprintf(w, "\ncluster η %.3f = compute %s / (compute + scheduling %s + image pull %s + checkpoint drain %s)\nmean gang wait %s\n",
			st.Efficiency, st.Compute.Round(time.Second), st.SchedLatency.Round(time.Millisecond), st.Pull.Round(time.Millisecond),
			st.Drain.Round(time.Millisecond), st.MeanGangWait.Round(time.Millisecond))
		return nil
	})
}

func (a *app) topology(cmd *cobra.Command) runE {
	cmd.Long = "Print the switch tree (core → spine → leaf → node) with free/total GPUs per switch."
	return a.clientRun(func(ctx context.Context, c *client.Client, _ []string) error {
		out, err := c.Topology(ctx)
		if err != nil {
			return err
		}
		fmt.Fprint(a.env.stdout, cleanLines(out))
		return nil
	})
}
