//go:build lockstep_client

package main

import (
	"strings"

	"github.com/spf13/cobra"
)

// The client build (go build -tags lockstep_client ./cmd/lockstep) is the
// CLI for login nodes and pipelines: the job, cluster and Slurm commands,
// without the services, the embedded servers, the etcd client or the
// JSON Schema library. Those cost every command about 20 ms of start-up
// here (package initialisation), the client build about 3 ms. What needs
// them answers, hidden from help, that it is in the full build.

func (a *app) dev(cmd *cobra.Command) runE         { return fullBuildOnly(cmd) }
func (a *app) admission(cmd *cobra.Command) runE   { return fullBuildOnly(cmd) }
func (a *app) placement(cmd *cobra.Command) runE   { return fullBuildOnly(cmd) }
func (a *app) gang(cmd *cobra.Command) runE        { return fullBuildOnly(cmd) }
func (a *app) drain(cmd *cobra.Command) runE       { return fullBuildOnly(cmd) }
func (a *app) agent(cmd *cobra.Command) runE       { return fullBuildOnly(cmd) }
func (a *app) web(cmd *cobra.Command) runE         { return fullBuildOnly(cmd) }
func (a *app) healthcheck(cmd *cobra.Command) runE { return fullBuildOnly(cmd) }
func (a *app) loadtest(cmd *cobra.Command) runE    { return fullBuildOnly(cmd) }
func (a *app) simulate(cmd *cobra.Command) runE    { return fullBuildOnly(cmd) }
func (a *app) trace(cmd *cobra.Command) runE       { return fullBuildOnly(cmd) }
func (a *app) check(cmd *cobra.Command) runE       { return fullBuildOnly(cmd) }
func (a *app) auth(cmd *cobra.Command) runE        { return fullBuildOnly(cmd) }
func (a *app) srun(cmd *cobra.Command) runE        { return fullBuildOnly(cmd) }
func (a *app) ckptDone(cmd *cobra.Command) runE    { return fullBuildOnly(cmd) }
func (a *app) nodeRemove(cmd *cobra.Command) runE  { return fullBuildOnly(cmd) }

// node's help names no remove here: the command is hidden.
const nodeRemoveHelp, nodeRemoveUsage = "", ""

// fullBuildOnly hides cmd and makes it say where it is. srun and ckpt-done
// run inside jobs, on nodes, whose agent is the full build.
func fullBuildOnly(cmd *cobra.Command) runE {
	cmd.Hidden, cmd.GroupID = true, ""
	cmd.DisableFlagParsing = true
	cmd.Args = cobra.ArbitraryArgs
	return func(cmd *cobra.Command, _ []string) error {
		return &exitError{code: 2, msg: strings.TrimPrefix(cmd.CommandPath(), "lockstep ") + " is not in this client build of lockstep (-tags lockstep_client): " +
			"run the full build (go build ./cmd/lockstep), as servers and nodes do"}
	}
}
