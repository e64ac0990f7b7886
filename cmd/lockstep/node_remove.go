//go:build !lockstep_client

package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/lockstep-dev/lockstep/shared/plumbing/store"
)

// How node's help names remove, which the client build leaves out.
const (
	nodeRemoveHelp  = "\nremove NODE: forget a node that is down and idle."
	nodeRemoveUsage = " | remove NODE"
)

// nodeRemove deletes a dead node's inventory record and admin state, so
// that it leaves node list, topology and the GPU totals. etcd decides, in
// one Txn, that the node is down and idle: an agent that comes back
// registers it again.
func (a *app) nodeRemove(cmd *cobra.Command) runE {
	cmd.Long = longHelp(`
		Forget a node that is gone for good: its inventory record and admin state are
		deleted, so it leaves node list, topology and the GPU totals. Only a node that
		is down (its agent's lease ended) and idle (no GPU claim, assignment or running
		rank) is removed, checked in the same etcd transaction. Needs etcd's admin
		credentials. A node whose agent starts again registers anew.`)
	return func(cmd *cobra.Command, args []string) error {
		cli, err := a.dialEtcd(cmd.Context())
		if err != nil {
			return err
		}
		if err := store.RemoveNode(cmd.Context(), cli, args[0]); err != nil {
			return err
		}
		fmt.Fprintf(a.env.stdout, "node %s removed\n", clean(args[0]))
		return nil
	}
}
