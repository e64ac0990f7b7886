package main

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/errors"

	"github.com/lockstep-dev/lockstep/deploy/devcluster"
	"github.com/lockstep-dev/lockstep/shared/contract/errs"
	"github.com/lockstep-dev/lockstep/shared/plumbing/testenv"
)

// With a short --retention, the placement leader removes a finished job's
// record from the jobs KV (its events stay), and never a running job's.
func TestRetentionRemovesFinishedRecords(t *testing.T) {
	ctx := context.Background()
	url := startDevClusterWith(t, func(c *devcluster.Config) { c.Retention = 2 * time.Second }).NATSURL
	long := writeFile(t, "long.json", `{"id":"keeps-running","gang":{"nodes":1,"gpusPerNode":8},"command":["sleep","300"]}`)
	mustSubmit(t, url, long)
	short := writeFile(t, "short.json", `{"id":"ends-soon","gang":{"nodes":1,"gpusPerNode":8},"command":["true"]}`)
	mustSubmit(t, url, short, "--wait")
	cl := dialTest(t, url)
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
