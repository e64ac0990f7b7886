//go:build !lockstep_client

package main

import (
	"context"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/lockstep-dev/lockstep/shared/contract/client"
	"github.com/lockstep-dev/lockstep/shared/plumbing/invariants"
	"github.com/lockstep-dev/lockstep/shared/plumbing/jobs"
)

func (a *app) check(cmd *cobra.Command) runE {
	cmd.Long = longHelp(`
		Check the scheduler's safety invariants against etcd and the job records:
		no GPU claimed twice, no claim without a live lease or running allocation,
		every running job holds exactly its gang, no allocation of a finished job,
		every claim on a registered node, every reserved or running job holds an
		allocation, no assignment (or agent running ranks) outlives its allocation,
		every value decodes (a malformed one is named by key, never aborts the check).
		Exits 1 and lists violations if any.`)
	settle := cmd.Flags().Duration("settle", 2*time.Second, "re-check violations after this long and report only those that persist (0: report at once)")
	return a.clientRun(func(ctx context.Context, c *client.Client, _ []string) error {
		cli, err := a.dialEtcd(ctx)
		if err != nil {
			return err
		}
		js, err := jobs.Open(ctx, c.Bus().JS)
		if err != nil {
			return err
		}
		vs, err := invariants.Check(ctx, cli, js, *settle)
		if err != nil {
			return err
		}
		if a.structured() {
			if vs == nil {
				vs = []invariants.Violation{}
			}
			if err := a.writeData(vs); err != nil {
				return err
			}
		} else {
			for _, v := range vs {
				fmt.Fprintln(a.env.stdout, clean(v.String()))
			}
			if len(vs) == 0 {
				fmt.Fprintln(a.env.stdout, "ok: no invariant violated")
			}
		}
		if len(vs) > 0 {
			return &exitError{code: 1, msg: fmt.Sprintf("%d invariant violations", len(vs))}
		}
		return nil
	})
}
