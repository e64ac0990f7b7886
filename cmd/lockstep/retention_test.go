package main

import (
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/errors"

	"github.com/lockstep-dev/lockstep/deploy/devcluster"
	"github.com/lockstep-dev/lockstep/shared/contract/client"
	"github.com/lockstep-dev/lockstep/shared/contract/errs"
	"github.com/lockstep-dev/lockstep/shared/plumbing/testenv"
)

// With a short --retention, the placement leader removes a finished job's
// record from the jobs KV (its events stay), and never a running job's.
func TestRetentionRemovesFinishedRecords(t *testing.T) {
	ctx := context.Background()
	c, err := devcluster.Start(ctx, devcluster.Config{
		DataDir: t.TempDir(), NATSListen: "127.0.0.1:0", EtcdListen: "127.0.0.1:0",
		Nodes: 2, GPUsPerNode: 8, Leaves: 1, NoFsync: true, Log: slog.New(slog.DiscardHandler),
		Retention: 2 * time.Second,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Stop)
	url := c.NATSURL
	long := writeFile(t, "long.json", `{"id":"keeps-running","gang":{"nodes":1,"gpusPerNode":8},"command":["sleep","300"]}`)
	if _, errOut, code := cli(t, "submit", long, "--nats", url); code != 0 {
		t.Fatal(errOut)
	}
	short := writeFile(t, "short.json", `{"id":"ends-soon","gang":{"nodes":1,"gpusPerNode":8},"command":["true"]}`)
	if _, errOut, code := cli(t, "submit", short, "--wait", "--nats", url); code != 0 {
		t.Fatal(errOut)
	}
	cl, err := client.Dial(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	testenv.Eventually(t, 30*time.Second, func() error {
		if _, err := cl.Job(ctx, "ends-soon"); !errs.IsNotFound(err) {
			return errors.Newf("record of the finished job still there (%v)", err)
		}
		return nil
	})
	if evs, err := cl.Events(ctx, "ends-soon"); err != nil || len(evs) == 0 {
		t.Errorf("events of the removed job: %d, %v; they must stay in the stream", len(evs), err)
	}
	if j, err := cl.Job(ctx, "keeps-running"); err != nil || j.State.Terminal() {
		t.Errorf("unfinished job's record: %+v, %v", j.State, err)
	}
	out, _, _ := cli(t, "queue", "-a", "--nats", url)
	if strings.Contains(out, "ends-soon") || !strings.Contains(out, "keeps-running") {
		t.Errorf("queue -a after retention:\n%s", out)
	}
}
