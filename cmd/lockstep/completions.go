package main

import (
	"context"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/lockstep-dev/lockstep/shared/contract/domain"
)

// completionTimeout bounds what a shell's Tab waits for the cluster: an
// unreachable one gives no suggestions, not a hung prompt.
const completionTimeout = 2 * time.Second

// registerCompletions makes the shell complete job IDs, node names and
// queues from the cluster (through the connection the command line, the
// environment or the context names), wherever a command takes them.
func (a *app) registerCompletions(c *cobra.Command) {
	use := " " + c.Use + " "
	switch {
	case strings.Contains(use, " ID ") || strings.Contains(use, " [ID...] ") || strings.Contains(use, " JOB_ID "):
		c.ValidArgsFunction = a.completeFromCluster(func(ctx context.Context, ac *app) ([]string, error) { return ac.jobIDs(ctx) })
	case strings.Contains(use, " NODE ") || strings.Contains(use, " [NODE...] "):
		c.ValidArgsFunction = a.completeFromCluster(func(ctx context.Context, ac *app) ([]string, error) { return ac.nodeNames(ctx) })
	}
	if c.Flags().Lookup("queue") != nil {
		_ = c.RegisterFlagCompletionFunc("queue", a.completeFromCluster(func(ctx context.Context, ac *app) ([]string, error) { return ac.queueNames(ctx) }))
	}
	for _, sub := range c.Commands() {
		a.registerCompletions(sub)
	}
}

// completeFromCluster turns a list read from the cluster into a cobra
// completion: the names that start with what was typed, nothing (and no
// file names) when the cluster does not answer in time.
func (a *app) completeFromCluster(list func(context.Context, *app) ([]string, error)) cobra.CompletionFunc {
	return func(cmd *cobra.Command, _ []string, typed string) ([]string, cobra.ShellCompDirective) {
		ctx, cancel := context.WithTimeout(cmd.Context(), completionTimeout)
		defer cancel()
		defer a.close()
		names, err := list(ctx, a)
		if err != nil {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		out := slices.DeleteFunc(names, func(n string) bool { return !strings.HasPrefix(n, typed) })
		slices.Sort(out)
		return slices.Compact(out), cobra.ShellCompDirectiveNoFileComp
	}
}

func (a *app) jobIDs(ctx context.Context) ([]string, error) {
	return a.fromJobs(ctx, func(j domain.Job) string { return j.ID })
}

// queueNames are the queues the job records name: the policy file lives
// with the services, not on the bus.
func (a *app) queueNames(ctx context.Context) ([]string, error) {
	return a.fromJobs(ctx, func(j domain.Job) string { return j.Spec.Queue })
}

// fromJobs is what of reads from each job record ("" left out).
func (a *app) fromJobs(ctx context.Context, of func(domain.Job) string) ([]string, error) {
	c, err := a.dial(ctx)
	if err != nil {
		return nil, err
	}
	jobs, _, err := c.Jobs(ctx)
	var out []string
	for _, j := range jobs {
		if v := of(j); v != "" {
			out = append(out, v)
		}
	}
	return out, err
}

func (a *app) nodeNames(ctx context.Context) ([]string, error) {
	c, err := a.dial(ctx)
	if err != nil {
		return nil, err
	}
	nodes, err := c.Nodes(ctx)
	var names []string
	for _, n := range nodes {
		names = append(names, n.Node.Name)
	}
	return names, err
}
