package devcluster_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lockstep-dev/lockstep/shared/contract/domain"
	"github.com/lockstep-dev/lockstep/shared/contract/jobspec"
	"github.com/lockstep-dev/lockstep/shared/plumbing/testenv"
)

// torchrun via srun, one launcher per node: 4 launchers, task i on node
// i with the node's 8 GPUs, the rendezvous on the first node's name from
// scontrol, the script's arguments passed through; output and error in
// logs/%x-%j.out and .err (the directory exists, as Slurm requires).
func corpusTorchrun(t *testing.T, h *harness, c *corpus) {
	work := t.TempDir()
	if err := os.Mkdir(filepath.Join(work, "logs"), 0o755); err != nil {
		t.Fatal(err)
	}
	r := c.sbatch(work, "", nil, "-W", c.script("torchrun.sh"), "--epochs", "1")
	id := c.submitted(r)
	if r.code != 0 {
		t.Fatalf("sbatch -W = %d %q %q", r.code, r.out, r.err)
	}
	out := readFile(t, filepath.Join(work, "logs", "gpt-pretrain-"+id+".out"))
	readFile(t, filepath.Join(work, "logs", "gpt-pretrain-"+id+".err"))
	j := h.job(id)
	if j.State != domain.StateSucceeded || j.Spec.Queue != "train" || j.Spec.Gang.GPUType != "h100" || len(j.Placement.Nodes) != 4 {
		t.Fatalf("job %s: %s queue %q type %q on %v", id, j.State, j.Spec.Queue, j.Spec.Gang.GPUType, j.Placement.NodeNames())
	}
	nodes := j.Placement.NodeNames()
	tasks := tasksIn(t, out)
	if len(tasks) != 4 {
		t.Fatalf("%d launchers, want 4:\n%s", len(tasks), out)
	}
	for _, task := range tasks {
		p := task.procid
		if p < 0 || p > 3 || task.localid != 0 || task.nodeid != p || task.node != nodes[p] || task.cuda != "0,1,2,3,4,5,6,7" {
			t.Errorf("launcher %d: localid %d nodeid %d on %s with GPUs %s; want 0 %d on %s with all 8", p, task.localid, task.nodeid, task.node, task.cuda, p, nodes[min(max(p, 0), 3)])
		}
		want := "torchrun --nnodes=4 --nproc_per_node=8 --rdzv_id=" + id + " --rdzv_backend=c10d --rdzv_endpoint=" + nodes[0] + ":29500 train.py --epochs 1"
		if task.args != want {
			t.Errorf("launcher %d ran %q, want %q", p, task.args, want)
		}
	}
}

// MPI style, one task per GPU: 16 tasks over 2 nodes with one GPU each,
// only NCCL_DEBUG exported (--export=NONE,…), output in bench-%j.out.
// Then -K: one task failing ends the step (the others, still running,
// are killed) and the job with that task's code, which sbatch -W exits
// with.
func corpusMPI(t *testing.T, h *harness, c *corpus) {
	work := t.TempDir()
	if err := os.WriteFile(filepath.Join(work, "all_reduce_perf"), []byte(payloadScript), 0o755); err != nil {
		t.Fatal(err)
	}
	r := c.sbatch(work, "", []string{"NOT_EXPORTED=x"}, "-W", c.script("mpi.sh"))
	id := c.submitted(r)
	if r.code != 0 {
		t.Fatalf("sbatch -W = %d %q %q", r.code, r.out, r.err)
	}
	out := readFile(t, filepath.Join(work, "bench-"+id+".out"))
	j := h.job(id)
	if len(j.Placement.Nodes) != 2 || j.Spec.Env["NOT_EXPORTED"] != "" || j.Spec.Env["NCCL_DEBUG"] != "WARN" {
		t.Fatalf("job %s on %v with env %v", id, j.Placement.NodeNames(), j.Spec.Env)
	}
	nodes := j.Placement.NodeNames()
	tasks := tasksIn(t, out)
	if len(tasks) != 16 {
		t.Fatalf("%d tasks, want 16:\n%s", len(tasks), out)
	}
	gpus := map[string]map[string]bool{}
	for _, task := range tasks {
		p := task.procid
		if p < 0 || p > 15 || task.localid != p%8 || task.nodeid != p/8 || task.node != nodes[p/8] || task.nccl != "WARN" ||
			task.args != "all_reduce_perf -b 8 -e 8G -f 2 -g 1" {
			t.Errorf("task %d: %+v", p, task)
			continue
		}
		if gpus[task.node] == nil {
			gpus[task.node] = map[string]bool{}
		}
		if len(task.cuda) != 1 || gpus[task.node][task.cuda] {
			t.Errorf("task %d: CUDA_VISIBLE_DEVICES %q is not a GPU of its own", p, task.cuda)
		}
		gpus[task.node][task.cuda] = true
	}

	start := time.Now()
	r = c.sbatch(work, "", nil, "-W", "--export=NONE,NCCL_DEBUG=WARN,PAYLOAD_FAIL_PROCID=5,PAYLOAD_SLEEP=120", c.script("mpi.sh"))
	if r.code != 3 || time.Since(start) > 60*time.Second {
		t.Errorf("task 5 exiting 3 under srun -K: sbatch -W = %d after %v, %q; want 3 at once", r.code, time.Since(start), r.err)
	}
}

// An array with %N: 16 tasks, at most 4 running at once (their records
// say so), each writing sweep/%A_%a.out with its SLURM_ARRAY_TASK_ID;
// sbatch -W returns once all have ended. Then an array with no --output
// writes Slurm's default slurm-%A_%a.out, and -W exits with the highest
// task's exit code.
func corpusArray(t *testing.T, h *harness, c *corpus) {
	work := t.TempDir()
	if err := os.Mkdir(filepath.Join(work, "sweep"), 0o755); err != nil {
		t.Fatal(err)
	}
	r := c.sbatch(work, "", nil, "-W", c.script("array.sh"))
	id := c.submitted(r)
	if r.code != 0 {
		t.Fatalf("sbatch -W = %d %q %q", r.code, r.out, r.err)
	}
	tasks, err := h.cl.ArrayTasks(t.Context(), id)
	if err != nil || len(tasks) != 16 {
		t.Fatalf("%d tasks: %v", len(tasks), err)
	}
	most := 0
	for i, task := range tasks {
		if task.State != domain.StateSucceeded || task.ID != jobspec.TaskID(id, i) || task.Spec.Priority != 5 {
			t.Errorf("%s: %s, priority %d", task.ID, task.State, task.Spec.Priority)
		}
		running := 0
		for _, o := range tasks {
			if !o.RunningAt.After(task.RunningAt) && o.EndedAt.After(task.RunningAt) {
				running++
			}
		}
		most = max(most, running)
		lines := tasksIn(t, readFile(t, filepath.Join(work, "sweep", fmt.Sprintf("%s_%d.out", id, i))))
		want := fmt.Sprintf("python finetune.py --lr 0.001 --seed %d", i)
		if len(lines) != 1 || lines[0].array != fmt.Sprint(i) || lines[0].args != want || len(lines[0].cuda) != 1 {
			t.Errorf("task %d's output: %+v, want array=%d and %q", i, lines, i, want)
		}
	}
	if most > 4 {
		t.Errorf("%d tasks running at once, over the array's %%4", most)
	}

	script := "#!/bin/sh\n#SBATCH --gpus-per-node=1\necho \"task $SLURM_ARRAY_TASK_ID of $SLURM_ARRAY_JOB_ID\"\nexit $SLURM_ARRAY_TASK_ID\n"
	r = c.sbatch(work, script, nil, "--parsable", "-W", "--array=1-3")
	id = c.submitted(r)
	if r.code != 3 || !strings.Contains(r.err, "3 of 3 tasks did not succeed") {
		t.Errorf("sbatch -W of an array whose tasks exit 1, 2, 3 = %d %q", r.code, r.err)
	}
	for i := 1; i <= 3; i++ {
		if out := readFile(t, filepath.Join(work, fmt.Sprintf("slurm-%s_%d.out", id, i))); out != fmt.Sprintf("task %d of %s\n", i, id) {
			t.Errorf("slurm-%s_%d.out = %q", id, i, out)
		}
	}
}

// One stage of a pipeline, submitted stage after stage: singleton keeps
// two stages of the name from running at once, -d afterok on the
// command line orders them, --chdir=stages (relative to where sbatch
// runs) is where each runs and writes; a stage that fails leaves the
// next one cancelled, DependencyNeverSatisfied.
func corpusChain(t *testing.T, h *harness, c *corpus) {
	work := t.TempDir()
	if err := os.Mkdir(filepath.Join(work, "stages"), 0o755); err != nil {
		t.Fatal(err)
	}
	stage := func(env []string, args ...string) (string, sbatchRun) {
		r := c.sbatch(work, "", env, append([]string{"--parsable"}, args...)...)
		return c.submitted(r), r
	}
	slow := []string{"PAYLOAD_SLEEP=1"}
	s1, _ := stage(slow, c.script("chain.sh"), "1")
	s2, _ := stage(slow, c.script("chain.sh"), "2")
	s3, r := stage(nil, "-W", "-d", "afterok:"+s2, c.script("chain.sh"), "3")
	if r.code != 0 {
		t.Fatalf("stage 3: sbatch -W = %d %q", r.code, r.err)
	}
	var prev domain.Job
	for i, id := range []string{s1, s2, s3} {
		j := h.waitFor(id, 30*time.Second, func(j domain.Job) bool { return j.State.Terminal() })
		if j.State != domain.StateSucceeded || j.Spec.Workdir != filepath.Join(work, "stages") {
			t.Errorf("stage %d: %s in %s", i+1, j.State, j.Spec.Workdir)
		}
		if i > 0 && j.RunningAt.Before(prev.EndedAt) {
			t.Errorf("stage %d ran at %v, before stage %d ended at %v", i+1, j.RunningAt, i, prev.EndedAt)
		}
		prev = j
		lines := tasksIn(t, readFile(t, filepath.Join(work, "stages", "slurm-"+id+".out")))
		if len(lines) != 1 || lines[0].args != fmt.Sprintf("python stage_%d.py", i+1) || lines[0].pwd != filepath.Join(work, "stages") {
			t.Errorf("stage %d's output: %+v", i+1, lines)
		}
	}
	bad, r := stage([]string{"PAYLOAD_EXIT=4"}, "-W", c.script("chain.sh"), "4")
	if r.code != 4 {
		t.Errorf("a failing stage: sbatch -W = %d %q", r.code, r.err)
	}
	next, r := stage(nil, "-W", "-d", "afterok:"+bad, c.script("chain.sh"), "5")
	if j := h.job(next); r.code != 1 || j.State != domain.StateCancelled || !strings.Contains(j.Reason, "DependencyNeverSatisfied") {
		t.Errorf("the stage after a failed one: sbatch -W = %d %q; job %s %q", r.code, r.err, j.State, j.Reason)
	}
}

// Checkpointing: USR1 to the batch shell at a checkpoint drain (here
// `lockstep checkpoint`, as at a preemption or 120 s before the time
// limit), whose trap runs and signals srun, which forwards it to the
// step's tasks; the job is requeued and its next attempt runs
// to the end. --open-mode=append is not supported: --ignore-unsupported
// submits it with a warning.
func corpusCheckpoint(t *testing.T, h *harness, c *corpus) {
	work := t.TempDir()
	r := c.sbatch(work, "", []string{"PAYLOAD_SLEEP=5"}, "--ignore-unsupported", c.script("checkpoint.sh"))
	id := c.submitted(r)
	if r.code != 0 || !strings.Contains(r.err, "--open-mode=append is not supported by Lockstep; ignored") {
		t.Fatalf("sbatch = %d %q", r.code, r.err)
	}
	j := h.waitFor(id, 30*time.Second, func(j domain.Job) bool { return j.State == domain.StateRunning })
	if j.Spec.Checkpoint.Signal != "SIGUSR1" {
		t.Fatalf("checkpoint spec %+v", j.Spec.Checkpoint)
	}
	// The payload is running, its trap set, once every task's line is out.
	outFile := filepath.Join(work, "slurm-"+id+".out")
	testenv.Eventually(t, 20*time.Second, func() error {
		if raw, _ := os.ReadFile(outFile); strings.Count(string(raw), "task procid=") < 16 {
			return fmt.Errorf("not every task yet: %q", raw)
		}
		return nil
	})
	ck := c.lockstep("checkpoint", id)
	if ck.code != 0 {
		t.Fatalf("lockstep checkpoint = %d %q", ck.code, ck.err)
	}
	testenv.Eventually(t, 20*time.Second, func() error {
		if raw, _ := os.ReadFile(outFile); !strings.Contains(string(raw), "checkpoint requested at") {
			return fmt.Errorf("the trap did not run: %q", raw)
		}
		return nil
	})
	j = h.waitFor(id, 90*time.Second, func(j domain.Job) bool { return j.State.Terminal() })
	if j.State != domain.StateSucceeded || j.Attempt != 2 {
		t.Errorf("job %s ended %s (%q) in attempt %d, want succeeded in attempt 2", id, j.State, j.Reason, j.Attempt)
	}
	// The trap's `kill -USR1` reached srun, which forwarded it to every
	// task of its step, as Slurm's srun does.
	for procid := range 16 {
		if _, err := os.Stat(filepath.Join(work, fmt.Sprintf("checkpointed-%d", procid))); err != nil {
			t.Errorf("task %d did not get the forwarded SIGUSR1: %v", procid, err)
		}
	}
}
