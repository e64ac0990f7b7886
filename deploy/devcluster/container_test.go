package devcluster_test

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/errors"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/lockstep-dev/lockstep/deploy/devcluster"
	"github.com/lockstep-dev/lockstep/services/agent"
	"github.com/lockstep-dev/lockstep/services/agent/containers"
	"github.com/lockstep-dev/lockstep/services/agent/discover"
	"github.com/lockstep-dev/lockstep/shared/contract/domain"
	"github.com/lockstep-dev/lockstep/shared/plumbing/testenv"
)

const probeImage = "lockstep-probe:devcluster"

// containerCluster is a 2-node dev cluster whose agents run container
// jobs on the local engine, with the probe image built (its spans also go
// to exporters); the test skips when no engine answers.
func containerCluster(t *testing.T, exporters ...sdktrace.SpanExporter) (*harness, *containers.Docker) {
	t.Helper()
	return containerClusterWith(t, devcluster.Config{SpanExporters: exporters})
}

// containerClusterWith is containerCluster with more of cfg (2 nodes of 4
// GPUs running docker, with the static lockstep binary, always).
func containerClusterWith(t *testing.T, cfg devcluster.Config) (*harness, *containers.Docker) {
	t.Helper()
	d, err := containers.ProbeEngine(t.Context(), probeImage)
	if errors.Is(err, containers.ErrNoEngine) {
		t.Skipf("%v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = d.Close() })
	cfg.Nodes, cfg.GPUsPerNode, cfg.ContainerRuntime = 2, 4, agent.RuntimeDocker
	// The released binary (static): rank containers hold their lifeline
	// through it, and container batch jobs find srun in it.
	cfg.ShimTarget = lockstepBinary(t)
	return newHarness(t, cfg), d
}

// nodeDir is a node's agent data directory (the containers' scope).
func (h *harness) nodeDir(node string) string { return filepath.Join(h.c.DataDir(), "nodes", node) }

// jobContainers counts the containers of a job left on the cluster's nodes.
func jobContainers(t *testing.T, h *harness, d *containers.Docker, job string) int {
	t.Helper()
	n := 0
	for _, node := range []string{"node-01", "node-02"} {
		owned, err := d.Owned(context.Background(), node, h.nodeDir(node))
		if err != nil {
			t.Fatal(err)
		}
		for _, o := range owned {
			if o.Job == job {
				n++
			}
		}
	}
	return n
}

// A 2-node × 4-rank container job: every rank runs in the image (reads the
// file only the image has) with its RANK, CUDA_VISIBLE_DEVICES, cores and
// container.env; its output reaches the rank's log; nothing is left.
func TestContainerGang(t *testing.T) {
	h, d := containerCluster(t)
	id := h.submit(`{"id":"ctr","gang":{"nodes":2,"gpusPerNode":4,"tasksPerNode":4,"cpusPerTask":1},"command":["/probe"],
		"container":{"image":"` + probeImage + `","pullPolicy":"Never","env":{"PROBE_EXTRA":"from-container-env"}}}`)
	j := h.waitFor(id, 90*time.Second, func(j domain.Job) bool { return j.State.Terminal() })
	if j.State != domain.StateSucceeded {
		t.Fatalf("ended %s: %s", j.State, j.Reason)
	}
	// Each rank's memory limit is its GPU's share of this machine's.
	host, err := containers.HostMemory("/proc/meminfo")
	if err != nil {
		t.Fatal(err)
	}
	ranks := 0
	for _, np := range j.Placement.Nodes {
		for _, r := range np.Ranks {
			ranks++
			log := filepath.Join(h.nodeDir(np.Node), "jobs", id, "1", fmt.Sprintf("rank-%d.log", r.Rank))
			raw, err := os.ReadFile(log)
			if err != nil {
				t.Fatal(err)
			}
			out := string(raw)
			if r.Rank == 1 {
				t.Logf("rank 1 on %s (GPUs %v, cores %v):\n%s", np.Node, r.GPUs, r.CPUs, out)
			}
			want := []string{`marker="` + containers.ProbeMarker + `"`, fmt.Sprintf("RANK=%d\n", r.Rank),
				"CUDA_VISIBLE_DEVICES=" + joinInts(r.GPUs) + "\n", "LOCKSTEP_CPUS=" + joinInts(r.CPUs) + "\n", "PROBE_EXTRA=from-container-env",
				fmt.Sprintf("memory-limit=%d\n", containers.MemoryShare(host, len(r.GPUs), 4))}
			for _, w := range want {
				if !strings.Contains(out, w) {
					t.Errorf("rank %d on %s: output lacks %q:\n%s", r.Rank, np.Node, w, out)
				}
			}
			// Cores this machine has are the only ones it can pin to.
			var have []int
			for _, c := range r.CPUs {
				if c < runtime.NumCPU() {
					have = append(have, c)
				}
			}
			if len(have) > 0 {
				_, aff, _ := strings.Cut(out, "affinity=[")
				aff, _, _ = strings.Cut(aff, "]")
				got, err := discover.ParseCPUList(strings.ReplaceAll(aff, " ", ","))
				if err != nil || !slices.Equal(got, have) {
					t.Errorf("rank %d: affinity %v (%v), want %v", r.Rank, got, err, have)
				}
			}
		}
	}
	if ranks != 8 {
		t.Errorf("%d ranks", ranks)
	}
	testenv.Eventually(t, 30*time.Second, func() error {
		if n := jobContainers(t, h, d, id); n != 0 {
			return fmt.Errorf("%d containers left", n)
		}
		return nil
	})
}

func joinInts(xs []int) string {
	s := make([]string, len(xs))
	for i, x := range xs {
		s[i] = fmt.Sprint(x)
	}
	return strings.Join(s, ",")
}

// Cancelling a running container gang leaves no container behind.
func TestContainerCancel(t *testing.T) {
	h, d := containerCluster(t)
	id := h.submit(`{"id":"ctr-cancel","gang":{"nodes":2,"gpusPerNode":4},"command":["/probe","wait"],
		"container":{"image":"` + probeImage + `","pullPolicy":"Never"}}`)
	h.waitFor(id, 60*time.Second, func(j domain.Job) bool { return j.State == domain.StateRunning })
	testenv.Eventually(t, 30*time.Second, func() error {
		if n := jobContainers(t, h, d, id); n != 8 {
			return fmt.Errorf("%d containers, want 8", n)
		}
		return nil
	})
	if err := h.cl.Cancel(context.Background(), id, "test"); err != nil {
		t.Fatal(err)
	}
	j := h.waitFor(id, 60*time.Second, func(j domain.Job) bool { return j.State.Terminal() })
	if j.State != domain.StateCancelled {
		t.Errorf("ended %s: %s", j.State, j.Reason)
	}
	testenv.Eventually(t, 30*time.Second, func() error {
		if n := jobContainers(t, h, d, id); n != 0 {
			return fmt.Errorf("%d containers left after cancel", n)
		}
		return nil
	})
}

// A batch job with an image (sbatch --container-image) runs its script
// in the image, where srun is found, and the tasks of the script's srun
// steps in the image on every node, each with its own RANK and GPUs.
func TestContainerBatch(t *testing.T) {
	h, d := containerClusterWith(t, devcluster.Config{})
	work := t.TempDir()
	id := h.submit(`{"id":"ctr-batch","gang":{"nodes":2,"gpusPerNode":4,"tasksPerNode":2},"command":["job.sh"],"workdir":"` + work + `",
		"batch":{"script":"#!/probe\nsrun -l /probe\n","output":"%j.out"},
		"container":{"image":"` + probeImage + `","pullPolicy":"Never"}}`)
	j := h.waitFor(id, 90*time.Second, func(j domain.Job) bool { return j.State.Terminal() })
	raw, _ := os.ReadFile(filepath.Join(work, id+".out"))
	out := string(raw)
	if j.State != domain.StateSucceeded {
		t.Fatalf("ended %s: %s\noutput:\n%s", j.State, j.Reason, out)
	}
	marker := `marker="` + containers.ProbeMarker + `"`
	// The script's own lines (unlabelled), then each task's, labelled.
	if !strings.Contains(out, "\n"+marker) && !strings.HasPrefix(out, marker) {
		t.Errorf("the script did not run in the image:\n%s", out)
	}
	for task := range 4 {
		for _, want := range []string{fmt.Sprintf("%d: %s", task, marker), fmt.Sprintf("%d: RANK=%d\n", task, task)} {
			if !strings.Contains(out, want) {
				t.Errorf("task %d: output lacks %q:\n%s", task, want, out)
			}
		}
		if !regexp.MustCompile(fmt.Sprintf(`(?m)^%d: CUDA_VISIBLE_DEVICES=\d,\d$`, task)).MatchString(out) {
			t.Errorf("task %d has not its two GPUs:\n%s", task, out)
		}
	}
	testenv.Eventually(t, 30*time.Second, func() error {
		if n := jobContainers(t, h, d, id); n != 0 {
			return fmt.Errorf("%d containers left", n)
		}
		return nil
	})
}

// A node's only rank (a per-node launcher) gets its own /dev/shm of the
// spec's shmSize.
func TestContainerLauncherShm(t *testing.T) {
	h, _ := containerCluster(t)
	id := h.submit(`{"id":"ctr-shm","gang":{"nodes":2,"gpusPerNode":4,"tasksPerNode":1},"command":["/probe"],
		"container":{"image":"` + probeImage + `","pullPolicy":"Never","shmSize":268435456}}`)
	j := h.waitFor(id, 90*time.Second, func(j domain.Job) bool { return j.State.Terminal() })
	if j.State != domain.StateSucceeded {
		t.Fatalf("ended %s: %s", j.State, j.Reason)
	}
	for _, np := range j.Placement.Nodes {
		raw, err := os.ReadFile(filepath.Join(h.nodeDir(np.Node), "jobs", id, "1", fmt.Sprintf("rank-%d.log", np.Ranks[0].Rank)))
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(raw), "shm-bytes=268435456\n") {
			t.Errorf("%s: the launcher's /dev/shm is not 256 MiB:\n%s", np.Node, raw)
		}
	}
}

// pullPolicy Never with an image the nodes lack fails the job with a
// reason naming the image.
func TestContainerNeverMissingImage(t *testing.T) {
	h, _ := containerCluster(t)
	id := h.submit(`{"id":"ctr-never","gang":{"nodes":2,"gpusPerNode":4},"command":["/probe"],"restartPolicy":{"maxRestarts":0},
		"container":{"image":"lockstep-no-such-image:never","pullPolicy":"Never"}}`)
	j := h.waitFor(id, 60*time.Second, func(j domain.Job) bool { return j.State.Terminal() })
	if j.State != domain.StateFailed || !strings.Contains(j.Reason, "image lockstep-no-such-image:never is not on this node") {
		t.Errorf("ended %s: %q", j.State, j.Reason)
	}
}

// A container labelled for an attempt the agent does not run (left by a
// kill -9'd agent) is removed when the agent starts again.
func TestContainerReapedOnAgentRestart(t *testing.T) {
	h, d := containerCluster(t)
	node := "node-02"
	ghost := containers.Rank{Job: "ghost", Attempt: 7, Rank: 0, Node: node, Scope: h.nodeDir(node), Image: probeImage, Command: []string{"/probe", "wait"}}
	h.c.Kill(devcluster.AgentName(node))
	ctx := context.Background()
	cid, _, err := d.Start(ctx, containers.CreateOptions(ghost), io.Discard, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = d.Remove(context.Background(), cid) })
	if n := jobContainers(t, h, d, "ghost"); n != 1 {
		t.Fatalf("%d ghost containers before the restart", n)
	}
	h.c.Start(devcluster.AgentName(node))
	testenv.Eventually(t, 30*time.Second, func() error {
		if n := jobContainers(t, h, d, "ghost"); n != 0 {
			return fmt.Errorf("%d ghost containers left", n)
		}
		return nil
	})
}

// A checkpoint drain of a container gang: the checkpoint signal reaches
// each rank through the engine and its init, the ranks acknowledge through
// the attempt directory mounted into their containers, and the gang is
// released at once (well under the grace), requeued with the checkpoint.
func TestContainerCheckpointDrain(t *testing.T) {
	h, d := containerCluster(t)
	id := h.submit(`{"id":"ctr-ckpt","gang":{"nodes":2,"gpusPerNode":2},"command":["/probe","wait"],
		"checkpoint":{"gracePeriod":"60s"},"container":{"image":"` + probeImage + `","pullPolicy":"Never"}}`)
	h.waitFor(id, 60*time.Second, func(j domain.Job) bool { return j.State == domain.StateRunning })
	// Every rank waits for its signal (its handler is installed) once it
	// printed "waiting".
	testenv.Eventually(t, 30*time.Second, func() error {
		j := h.job(id)
		for _, np := range j.Placement.Nodes {
			for _, r := range np.Ranks {
				raw, _ := os.ReadFile(filepath.Join(h.nodeDir(np.Node), "jobs", id, "1", fmt.Sprintf("rank-%d.log", r.Rank)))
				if !strings.Contains(string(raw), "waiting") {
					return fmt.Errorf("rank %d not waiting yet", r.Rank)
				}
			}
		}
		return nil
	})
	if err := h.cl.Drain(context.Background(), id, domain.DrainCheckpoint, domain.ThenRequeue, "test checkpoint"); err != nil {
		t.Fatal(err)
	}
	j := h.waitFor(id, 30*time.Second, func(j domain.Job) bool { return j.Attempt == 2 })
	if j.LastCheckpoint == nil || j.LastCheckpoint.Step != 7 || j.LastCheckpoint.Path != "/ckpt/7" {
		t.Errorf("last checkpoint %+v, want step 7 at /ckpt/7", j.LastCheckpoint)
	}
	if j.Timing.LastDrain <= 0 || j.Timing.LastDrain > 10*time.Second {
		t.Errorf("drain took %s: every rank acked, the gang should be released well under the 60s grace", j.Timing.LastDrain)
	}
	if err := h.cl.Cancel(context.Background(), id, "test done"); err != nil {
		t.Fatal(err)
	}
	h.waitFor(id, 60*time.Second, func(j domain.Job) bool { return j.State.Terminal() })
	testenv.Eventually(t, 30*time.Second, func() error {
		if n := jobContainers(t, h, d, id); n != 0 {
			return fmt.Errorf("%d containers left", n)
		}
		return nil
	})
}
