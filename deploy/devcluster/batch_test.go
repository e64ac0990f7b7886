package devcluster_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/lockstep-dev/lockstep/deploy/devcluster"
	"github.com/lockstep-dev/lockstep/shared/contract/domain"
	"github.com/lockstep-dev/lockstep/shared/plumbing/testenv"
)

// lockstepBinary is the released binary: the Slurm shims on a job's PATH
// must be the real lockstep, not this test's binary.
func lockstepBinary(t *testing.T) string { return testenv.LockstepBinary(t) }

// A batch job as sbatch submits one: its script runs once, on the first
// node, finds srun and scontrol on PATH, and its srun steps run on both
// nodes with the Slurm and torchrun variables and the ranks' GPUs; the
// output goes to the %j pattern's file under workdir; the job ends with
// the script's exit code.
func TestBatchScriptAndSrunSteps(t *testing.T) {
	h := newHarness(t, devcluster.Config{Nodes: 2, GPUsPerNode: 2, ShimTarget: lockstepBinary(t)})
	work := t.TempDir()
	script := `#!/bin/sh
echo "nodes: $(scontrol show hostnames "$SLURM_JOB_NODELIST" | tr '\n' ' ')"
echo "script on $LOCKSTEP_NODE gpus=$CUDA_VISIBLE_DEVICES"
srun -l sh -c 'echo "procid=$SLURM_PROCID localid=$SLURM_LOCALID nodeid=$SLURM_NODEID master=$MASTER_ADDR cuda=$CUDA_VISIBLE_DEVICES step=$SLURM_STEP_ID"'
echo "first=$?"
srun -n 2 sh -c 'echo to-stderr >&2; exit $((SLURM_PROCID * 5))'
code=$?
echo "second=$code"
exit $code
`
	spec, _ := json.Marshal(script)
	id := h.submit(`{"id":"batch-1","gang":{"nodes":2,"gpusPerNode":2,"tasksPerNode":2},"command":["job.sh"],
		"workdir":"` + work + `","batch":{"script":` + string(spec) + `,"output":"%x-%j.out"}}`)
	j := h.waitFor(id, 90*time.Second, func(j domain.Job) bool { return j.State.Terminal() })
	raw, _ := os.ReadFile(filepath.Join(work, "batch-1-batch-1.out"))
	out := string(raw)
	t.Logf("output:\n%s", out)
	if j.State != domain.StateFailed || j.ExitCode == nil || *j.ExitCode != 5 {
		t.Fatalf("job ended %s, exit code %v; want failed with the script's 5", j.State, j.ExitCode)
	}
	first := j.Placement.Nodes[0].Node
	for _, want := range []string{
		"nodes: " + strings.Join(j.Placement.NodeNames(), " ") + " ",
		"script on " + first + " gpus=0,1",
		"first=0", "second=5", "to-stderr",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q", want)
		}
	}
	// One line per task, labelled, every task where block distribution
	// puts it, all with the first node as MASTER_ADDR.
	var tasks []string
	master := ""
	for _, line := range strings.Split(out, "\n") {
		if !strings.Contains(line, "procid=") {
			continue
		}
		f := strings.Fields(line)
		tasks = append(tasks, strings.Join([]string{f[0], f[1], f[2], f[3], f[6]}, " "))
		m := strings.TrimPrefix(f[4], "master=")
		if master == "" {
			master = m
		}
		if m == "" || m != master {
			t.Errorf("MASTER_ADDR %q differs between tasks (or is empty): %s", m, line)
		}
		if !strings.HasPrefix(f[5], "cuda=") || len(f[5]) != len("cuda=0") {
			t.Errorf("task's CUDA_VISIBLE_DEVICES is not one GPU: %s", line)
		}
	}
	slices.Sort(tasks)
	want := []string{
		"0: procid=0 localid=0 nodeid=0 step=0", "1: procid=1 localid=1 nodeid=0 step=0",
		"2: procid=2 localid=0 nodeid=1 step=0", "3: procid=3 localid=1 nodeid=1 step=0",
	}
	if !slices.Equal(tasks, want) {
		t.Errorf("step tasks:\n got %q\nwant %q", tasks, want)
	}
}
