package devcluster_test

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/lockstep-dev/lockstep/deploy/devcluster"
)

// The Slurm script corpus (cmd/lockstep/testdata/slurm, README.md there)
// run end to end: each script submitted unchanged with the real `lockstep
// sbatch`, against a dev cluster of fake DGX H100 nodes. Only the
// payload is substituted, as issue 18's "Done when" says: the training
// programs the scripts run (python, torchrun, ./all_reduce_perf) are
// payloadScript, found first on the PATH that sbatch --export=ALL carries
// to the job (or, for mpi.sh's --export=NONE, in the working directory).
// Where a script writes to a path this machine lacks, --output on the
// command line overrides its directive, as Slurm allows.

// payloadScript prints one line per task with what a Slurm task reads;
// PAYLOAD_SLEEP keeps it running (SIGUSR1 then checkpoints: it leaves
// checkpointed-<procid> in its working directory and exits 0), PAYLOAD_EXIT (or PAYLOAD_FAIL_PROCID,
// for that task only) is its exit code. `python -c CODE` (array.sh's
// learning-rate arithmetic) prints a fixed number.
const payloadScript = `#!/bin/sh
trap 'touch "checkpointed-$SLURM_PROCID"; exit 0' USR1
if [ "$1" = "-c" ]; then echo 0.001; exit 0; fi
echo "task procid=$SLURM_PROCID localid=$SLURM_LOCALID nodeid=$SLURM_NODEID master=$MASTER_ADDR cuda=$CUDA_VISIBLE_DEVICES node=$LOCKSTEP_NODE array=$SLURM_ARRAY_TASK_ID nccl=$NCCL_DEBUG pwd=$PWD args=$(basename "$0") $*"
if [ -n "$PAYLOAD_FAIL_PROCID" ] && [ "$PAYLOAD_FAIL_PROCID" = "$SLURM_PROCID" ]; then exit 3; fi
if [ -n "$PAYLOAD_SLEEP" ]; then sleep "$PAYLOAD_SLEEP" & wait $!; fi
exit ${PAYLOAD_EXIT:-0}
`

// corpus is a submitter's side of the corpus run: the built lockstep,
// the fake payload's directory, the cluster.
type corpus struct {
	t    *testing.T
	bin  string
	fake string
	url  string
}

func newCorpus(t *testing.T, c *devcluster.Cluster) *corpus {
	fake := t.TempDir()
	for _, name := range []string{"python", "torchrun"} {
		if err := os.WriteFile(filepath.Join(fake, name), []byte(payloadScript), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return &corpus{t: t, bin: lockstepBinary(t), fake: fake, url: c.NATSURL}
}

// script is a corpus script's absolute path.
func (c *corpus) script(name string) string {
	p, err := filepath.Abs(filepath.Join("..", "..", "cmd", "lockstep", "testdata", "slurm", name))
	if err != nil {
		c.t.Fatal(err)
	}
	return p
}

// sbatchRun is one run of `lockstep sbatch ARGS` in dir, from a shell
// whose environment is this test's (less any Slurm or Lockstep
// variables of its own) with the fake payload first on PATH, plus env.
type sbatchRun struct {
	out, err string
	code     int
}

func (c *corpus) sbatch(dir, stdin string, env []string, args ...string) sbatchRun {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, c.bin, append([]string{"sbatch", "--nats", c.url}, args...)...)
	cmd.Dir = dir
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "SLURM_") && !strings.HasPrefix(kv, "LOCKSTEP_") && !strings.HasPrefix(kv, "PATH=") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	// LOCKSTEP_CONFIG as TestMain set it: no config file of the developer's.
	cmd.Env = append(cmd.Env, "PATH="+c.fake+":"+os.Getenv("PATH"), "LOCKSTEP_CONFIG="+os.Getenv("LOCKSTEP_CONFIG"))
	cmd.Env = append(cmd.Env, env...)
	cmd.Stdin = strings.NewReader(stdin)
	return c.run(cmd)
}

// lockstep runs another lockstep command against the cluster.
func (c *corpus) lockstep(args ...string) sbatchRun {
	c.t.Helper()
	return c.run(exec.Command(c.bin, append(args, "--nats", c.url)...))
}

// run runs cmd to its end: its output and exit code, whatever the code;
// a command that could not run at all fails the test.
func (c *corpus) run(cmd *exec.Cmd) sbatchRun {
	c.t.Helper()
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	err := cmd.Run()
	r := sbatchRun{out: o.String(), err: e.String()}
	if ee, ok := err.(*exec.ExitError); ok {
		r.code = ee.ExitCode()
	} else if err != nil {
		c.t.Fatalf("%q: %v", cmd.Args, err)
	}
	return r
}

// submitted is the ID sbatch printed ("Submitted batch job ID", or the
// ID alone with --parsable).
func (c *corpus) submitted(r sbatchRun) string {
	c.t.Helper()
	id := strings.TrimSpace(strings.TrimPrefix(strings.SplitN(r.out, "\n", 2)[0], "Submitted batch job "))
	if id == "" || strings.ContainsAny(id, " \t") {
		c.t.Fatalf("sbatch printed no job ID: %q %q", r.out, r.err)
	}
	return id
}

// taskLine is one line payloadScript printed.
type taskLine struct {
	procid, localid, nodeid                    int
	master, cuda, node, array, nccl, pwd, args string
}

// tasksIn parses the payload's lines out of a job's output.
func tasksIn(t *testing.T, out string) []taskLine {
	t.Helper()
	var tasks []taskLine
	for _, line := range strings.Split(out, "\n") {
		rest, ok := strings.CutPrefix(line, "task ")
		if !ok {
			continue
		}
		rest, args, _ := strings.Cut(rest, " args=")
		v := map[string]string{}
		for _, f := range strings.Fields(rest) {
			k, val, _ := strings.Cut(f, "=")
			v[k] = val
		}
		num := func(k string) int {
			n, err := strconv.Atoi(v[k])
			if err != nil {
				t.Errorf("%s=%q is not a number: %s", k, v[k], line)
			}
			return n
		}
		tasks = append(tasks, taskLine{procid: num("procid"), localid: num("localid"), nodeid: num("nodeid"),
			master: v["master"], cuda: v["cuda"], node: v["node"], array: v["array"], nccl: v["nccl"], pwd: v["pwd"], args: args})
	}
	return tasks
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("read %s: %v", path, err)
	}
	return string(raw)
}
