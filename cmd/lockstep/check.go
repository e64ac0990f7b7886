package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"time"

	"github.com/lockstep-dev/lockstep/shared/contract/client"
	"github.com/lockstep-dev/lockstep/shared/plumbing/config"
	"github.com/lockstep-dev/lockstep/shared/plumbing/invariants"
	"github.com/lockstep-dev/lockstep/shared/plumbing/jobs"
	"github.com/lockstep-dev/lockstep/shared/plumbing/store"
)

func runCheck(ctx context.Context, env *cliEnv, args []string) error {
	fs := newFlags(env, "check", "[flags]",
		"Check the scheduler's safety invariants against etcd and the job records:\n"+
			"no GPU claimed twice, no claim without a live lease or running allocation,\n"+
			"every running job holds exactly its gang, no allocation of a finished job,\n"+
			"every claim on a registered node, every reserved or running job holds an\n"+
			"allocation, no assignment (or agent running ranks) outlives its allocation,\n"+
			"every value decodes (a malformed one is named by key, never aborts the check).\n"+
			"Exits 1 and lists violations if any.")
	connFlags := config.RegisterConnection(fs, true)
	settle := fs.Duration("settle", 2*time.Second, "re-check violations after this long and report only those that persist (0: report at once)")
	out := outputFlag(fs)
	if err := fs.Parse(args); err != nil {
		return err
	}
	if err := checkOutput(*out); err != nil {
		return err
	}
	conn, err := connFlags.Resolve(os.Getenv)
	if err != nil {
		return err
	}
	c, err := client.Dial(ctx, conn.NATS, conn.BusOptions()...)
	if err != nil {
		return err
	}
	defer c.Close()
	cli, err := store.Connect(ctx, conn.Etcd, conn.StoreOptions()...)
	if err != nil {
		return err
	}
	defer cli.Close()
	js, err := jobs.Open(ctx, c.Bus().JS)
	if err != nil {
		return err
	}
	vs, err := invariants.Check(ctx, cli, js, *settle)
	if err != nil {
		return err
	}
	if *out == "json" {
		if vs == nil {
			vs = []invariants.Violation{}
		}
		if err := json.NewEncoder(env.stdout).Encode(vs); err != nil {
			return err
		}
	} else {
		for _, v := range vs {
			fmt.Fprintln(env.stdout, clean(v.String()))
		}
		if len(vs) == 0 {
			fmt.Fprintln(env.stdout, "ok: no invariant violated")
		}
	}
	if len(vs) > 0 {
		return &exitError{code: 1, msg: fmt.Sprintf("%d invariant violations", len(vs))}
	}
	return nil
}
