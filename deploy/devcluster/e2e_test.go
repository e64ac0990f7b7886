package devcluster_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/lockstep-dev/lockstep/deploy/devcluster"
	"github.com/lockstep-dev/lockstep/shared/contract/client"
	"github.com/lockstep-dev/lockstep/shared/contract/domain"
	"github.com/lockstep-dev/lockstep/shared/contract/events"
	"github.com/lockstep-dev/lockstep/shared/contract/schemacheck"
	"github.com/lockstep-dev/lockstep/shared/plumbing/store"
	"github.com/lockstep-dev/lockstep/shared/plumbing/testenv"
)

func startCluster(t *testing.T, nodes int) (*devcluster.Cluster, *client.Client) {
	t.Helper()
	return startShaped(t, devcluster.Config{Nodes: nodes, GPUsPerNode: 8, Leaves: 2})
}

// startShaped starts a dev cluster of cfg's shape (and any other settings
// it has) on fresh ports and data, and a client of it.
func startShaped(t *testing.T, cfg devcluster.Config) (*devcluster.Cluster, *client.Client) {
	t.Helper()
	ctx := context.Background()
	cfg.DataDir, cfg.NATSListen, cfg.EtcdListen, cfg.NoFsync = t.TempDir(), "127.0.0.1:0", "127.0.0.1:0", true
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	c, err := devcluster.Start(ctx, cfg)
	if err != nil {
		t.Fatalf("start dev cluster: %v", err)
	}
	t.Cleanup(c.Stop)
	cl, err := client.Dial(ctx, c.NATSURL, c.Admin.BusOptions()...) // as admin when the cluster has auth
	if err != nil {
		t.Fatalf("dial: %v", err)
	}
	t.Cleanup(cl.Close)
	return c, cl
}

func waitState(t *testing.T, cl *client.Client, id string, want domain.State, timeout time.Duration) domain.Job {
	t.Helper()
	var j domain.Job
	testenv.Eventually(t, timeout, func() error {
		var err error
		j, err = cl.Job(context.Background(), id)
		if err != nil {
			return err
		}
		if j.State != want {
			return fmt.Errorf("job %s is %s (%s), want %s", id, j.State, j.Reason, want)
		}
		return nil
	})
	return j
}

func TestTwoNodeGangEndToEnd(t *testing.T) {
	c, cl := startCluster(t, 4)
	out := t.TempDir()
	spec := fmt.Sprintf(`{"id":"e2e-gang","name":"e2e","gang":{"nodes":2,"gpusPerNode":8},
		"command":["sh","-c","env > %s/rank-$RANK.env"],"env":{"FROM_SPEC":"yes"}}`, out)
	ctx := context.Background()
	id, err := cl.Submit(ctx, []byte(spec))
	if err != nil {
		t.Fatalf("submit: %v", err)
	}
	job := waitState(t, cl, id, domain.StateSucceeded, 60*time.Second)

	// Every rank ran with the torchrun environment.
	envs := map[int]map[string]string{}
	for r := range 16 {
		raw, err := os.ReadFile(filepath.Join(out, fmt.Sprintf("rank-%d.env", r)))
		if err != nil {
			t.Fatalf("rank %d wrote no environment: %v", r, err)
		}
		envs[r] = parseEnv(string(raw))
	}
	port := envs[0]["MASTER_PORT"]
	gpusByNode := map[string][]string{}
	for r, env := range envs {
		for k, want := range map[string]string{
			"WORLD_SIZE": "16", "RANK": strconv.Itoa(r), "LOCAL_RANK": strconv.Itoa(r % 8),
			"LOCAL_WORLD_SIZE": "8", "NODE_RANK": strconv.Itoa(r / 8), "LOCKSTEP_JOB_ID": id,
			"MASTER_ADDR": "127.0.0.1", "MASTER_PORT": port, "FROM_SPEC": "yes",
		} {
			if env[k] != want {
				t.Errorf("rank %d: %s=%q, want %q", r, k, env[k], want)
			}
		}
		node := env["LOCKSTEP_NODE"]
		gpusByNode[node] = append(gpusByNode[node], env["CUDA_VISIBLE_DEVICES"])
	}
	if len(gpusByNode) != 2 {
		t.Fatalf("ranks ran on %d nodes, want 2: %v", len(gpusByNode), gpusByNode)
	}
	for node, gpus := range gpusByNode {
		sort.Strings(gpus)
		if strings.Join(gpus, ",") != "0,1,2,3,4,5,6,7" {
			t.Errorf("node %s: CUDA_VISIBLE_DEVICES per rank = %v, want each of 0..7 once", node, gpus)
		}
	}
	if job.Placement == nil || len(job.Placement.Leaves) != 1 {
		t.Errorf("2-node gang on a cluster with 2 free nodes per leaf should use one leaf, got %+v", job.Placement)
	}

	// Events in order. The record changes before the event is published,
	// so wait for the last one.
	var types []string
	testenv.Eventually(t, 10*time.Second, func() error {
		evs, err := cl.Events(ctx, id)
		if err != nil {
			return err
		}
		types = types[:0]
		for _, ev := range evs {
			types = append(types, string(ev.Type))
			raw, _ := json.Marshal(ev)
			if err := schemacheck.Event(raw); err != nil {
				t.Errorf("event %s: %v", ev.Type, err)
			}
		}
		if got, want := strings.Join(types, ","), "admitted,reserved,running,succeeded"; got != want {
			return fmt.Errorf("events = %s, want %s", got, want)
		}
		return nil
	})

	// Nothing left claimed.
	cli, err := store.Connect(ctx, c.EtcdEndpoint)
	if err != nil {
		t.Fatal(err)
	}
	defer cli.Close()
	for _, prefix := range []string{store.ClaimsPrefix, store.PortsPrefix, store.AllocPrefix, store.AssignPrefix} {
		resp, err := cli.Get(ctx, prefix, clientv3.WithPrefix(), clientv3.WithCountOnly())
		if err != nil {
			t.Fatal(err)
		}
		if resp.Count != 0 {
			t.Errorf("%d keys left under %s after the job finished", resp.Count, prefix)
		}
	}
}

func parseEnv(s string) map[string]string {
	m := map[string]string{}
	for _, line := range strings.Split(s, "\n") {
		if k, v, ok := strings.Cut(line, "="); ok {
			m[k] = v
		}
	}
	return m
}

// nodeEvents reads every event of one node.
func nodeEvents(cl *client.Client, node string) ([]events.Event, error) {
	return cl.NodeEvents(context.Background(), node)
}

// The CLI sends the submitting shell's directory as the default working
// directory. A node that has it runs the ranks there; one that does not
// runs them in the attempt's own directory and says so on stderr, as
// Slurm does, rather than failing the job.
func TestWorkdirFallsBackWhenTheNodeLacksIt(t *testing.T) {
	_, cl := startCluster(t, 2)
	ctx := context.Background()
	out, here := t.TempDir(), t.TempDir()
	spec := func(id string) []byte {
		return []byte(fmt.Sprintf(`{"id":%q,"gang":{"nodes":1,"gpusPerNode":1},"command":["sh","-c","pwd > %s/%s.pwd"]}`, id, out, id))
	}
	pwd := func(id string) string {
		raw, err := os.ReadFile(filepath.Join(out, id+".pwd"))
		if err != nil {
			t.Fatal(err)
		}
		return strings.TrimSpace(string(raw))
	}
	id, err := cl.Submit(ctx, spec("wd-present"), client.SubmitOptions{Workdir: here})
	if err != nil {
		t.Fatal(err)
	}
	waitState(t, cl, id, domain.StateSucceeded, 60*time.Second)
	if got := pwd(id); got != here {
		t.Errorf("ranks ran in %s, want the directory asked for, %s", got, here)
	}

	missing := filepath.Join(here, "not-on-this-node")
	id, err = cl.Submit(ctx, spec("wd-missing"), client.SubmitOptions{Workdir: missing})
	if err != nil {
		t.Fatal(err)
	}
	waitState(t, cl, id, domain.StateSucceeded, 60*time.Second)
	dir := pwd(id)
	if !strings.HasSuffix(dir, filepath.Join("jobs", id, "1")) {
		t.Errorf("ranks ran in %s, want the attempt's directory", dir)
	}
	log, err := os.ReadFile(filepath.Join(dir, "rank-0.log"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(log), "cannot use working directory "+missing) {
		t.Errorf("rank log does not explain the fallback:\n%s", log)
	}
}
