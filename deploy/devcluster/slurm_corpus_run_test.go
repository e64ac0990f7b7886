package devcluster_test

import (
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/lockstep-dev/lockstep/deploy/devcluster"
	"github.com/lockstep-dev/lockstep/shared/contract/domain"
)

// TestSlurmCorpus runs every corpus script end to end on one cluster of
// four 8-GPU nodes in one leaf, one after another.
func TestSlurmCorpus(t *testing.T) {
	h := newHarness(t, devcluster.Config{Nodes: 4, ShimTarget: lockstepBinary(t)})
	c := newCorpus(t, h.c)
	for _, tc := range []struct {
		name string
		run  func(*testing.T, *harness, *corpus)
	}{
		{"submit_job", corpusSubmitJob},
		{"torchrun", corpusTorchrun},
		{"mpi", corpusMPI},
		{"array", corpusArray},
		{"chain", corpusChain},
		{"checkpoint", corpusCheckpoint},
	} {
		t.Run(tc.name, func(t *testing.T) {
			start := time.Now()
			tc.run(t, h, c)
			t.Logf("%s took %v", tc.name, time.Since(start).Round(time.Millisecond))
		})
	}
}

// The seed's production script, the "Done when": under sbatch
// --wait with no edit, it writes %j.out; its srun starts 16 tasks, 8 per
// node, each with its PROCID/LOCALID/NODEID, the first node as
// MASTER_ADDR and one GPU; and its last line, squeue -u $USER run inside
// the job (connected through the rank environment's LOCKSTEP_NATS),
// shows the job running on its 2 nodes.
func corpusSubmitJob(t *testing.T, h *harness, c *corpus) {
	work := t.TempDir()
	start := time.Now()
	r := c.sbatch(work, "", nil, "--wait", "--job-name=llama-train", "--nodes=2", "--gpus-per-node=8",
		"--output=%j.out", c.script("submit_job.sh"))
	id := c.submitted(r)
	t.Logf("sbatch --wait took %v", time.Since(start).Round(time.Millisecond))
	out := readFile(t, filepath.Join(work, id+".out"))
	t.Logf("%s.out:\n%s", id, out)
	if r.code != 0 || !strings.HasPrefix(r.out, "Submitted batch job "+id+"\n") {
		t.Fatalf("sbatch --wait = %d %q %q", r.code, r.out, r.err)
	}
	j := h.job(id)
	if j.State != domain.StateSucceeded || j.Placement == nil || len(j.Placement.Nodes) != 2 {
		t.Fatalf("job %s: %s %q %+v", id, j.State, j.Reason, j.Placement)
	}
	if len(j.Placement.Leaves) != 1 {
		t.Errorf("--switches=1: placed over leaves %v", j.Placement.Leaves)
	}
	nodes := j.Placement.NodeNames()
	tasks := tasksIn(t, out)
	if len(tasks) != 16 {
		t.Fatalf("%d task lines, want 16", len(tasks))
	}
	seen := map[int]bool{}
	gpus := map[string][]string{}
	for _, task := range tasks {
		p := task.procid
		if seen[p] || p < 0 || p > 15 || task.localid != p%8 || task.nodeid != p/8 || task.node != nodes[p/8] {
			t.Errorf("task %d: localid %d nodeid %d on %s; want %d %d on %s", p, task.localid, task.nodeid, task.node, p%8, p/8, nodes[min(max(p, 0), 15)/8])
		}
		seen[p] = true
		// The script exports MASTER_ADDR, the first node's name from
		// scontrol; a step's own torchrun set wins with the first node's
		// address (the placement's; 127.0.0.1 for every dev node).
		if task.master != j.Placement.MasterAddr {
			t.Errorf("task %d: MASTER_ADDR %q, want the first node's %q", p, task.master, j.Placement.MasterAddr)
		}
		gpus[task.node] = append(gpus[task.node], task.cuda)
		if !strings.HasPrefix(task.args, "python -m torch.distributed.run --nnodes=2 --nproc_per_node=8 --rdzv_id="+id+
			" --rdzv_backend=c10d --rdzv_endpoint="+nodes[0]+":29500 /opt/train/pretrain_llama.py") {
			t.Errorf("task %d ran %q", p, task.args)
		}
	}
	for node, g := range gpus {
		slices.Sort(g)
		if strings.Join(g, ",") != "0,1,2,3,4,5,6,7" {
			t.Errorf("%s: tasks' CUDA_VISIBLE_DEVICES %v, want one GPU each, 0 to 7", node, g)
		}
	}
	// squeue's default header, then the job: its ID, R, 2 nodes, and the
	// node list for %R.
	lines := strings.Split(strings.TrimSpace(out), "\n")
	var header, row []string
	for i, l := range lines {
		if f := strings.Fields(l); len(f) > 0 && f[0] == "JOBID" && i+1 < len(lines) {
			header, row = f, strings.Fields(lines[i+1])
		}
	}
	sep := ","
	if nodes[1] == fmt.Sprintf("node-%02d", nodeNumber(t, nodes[0])+1) {
		sep = "-"
	}
	want := []string{id[:min(len(id), 18)], "default", "llama-tr", "-", "R", "", "2", "node-[" + nodes[0][5:] + sep + nodes[1][5:] + "]"}
	if len(header) != 8 || len(row) != 8 || row[0] != want[0] || row[4] != "R" || row[6] != "2" || row[7] != want[7] || row[2] != want[2] {
		t.Errorf("squeue inside the job printed\n%q\n%q\nwant the job %q", header, row, want)
	}
}

// nodeNumber is a dev node's number, 3 for node-03.
func nodeNumber(t *testing.T, name string) int {
	n, err := strconv.Atoi(strings.TrimPrefix(name, "node-"))
	if err != nil {
		t.Fatalf("node name %q", name)
	}
	return n
}
