package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lockstep-dev/lockstep/shared/plumbing/testenv"
)

// cliIn is cli with stdin.
func cliIn(t *testing.T, stdin string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	var o, e bytes.Buffer
	code = run(context.Background(), &cliEnv{stdout: &o, stderr: &e, stdin: strings.NewReader(stdin)}, args)
	return o.String(), e.String(), code
}

// exitScript is a batch script named sh, which exits with its -c
// argument's code, so that it ends the same whether the agent runs the
// script (a batch job) or, as before batch jobs, the command sh -c
// "exit N" on every rank.
const exitScript = "#!/bin/sh\n#SBATCH --nodes=2 --gpus-per-node=8\n#SBATCH --export=NONE\nexit $(echo \"$2\" | cut -d' ' -f2)\n"

func writeExitScript(t *testing.T) (dir, script string) {
	t.Helper()
	dir = t.TempDir()
	script = filepath.Join(dir, "sh")
	if err := os.WriteFile(script, []byte(exitScript), 0o755); err != nil {
		t.Fatal(err)
	}
	return dir, script
}

// sbatch submits, prints as Slurm does, and -W exits with the job's exit
// code.
func TestSbatchSubmitAndWait(t *testing.T) {
	url := startDevCluster(t)
	dir, script := writeExitScript(t)

	out, errOut, code := cli(t, "sbatch", "--nats", url, "-D", dir, script, "-c", "exit 0")
	id, ok := strings.CutPrefix(strings.TrimSpace(out), "Submitted batch job ")
	if code != 0 || !ok || id == "" || errOut != "" {
		t.Fatalf("sbatch = %d %q %q", code, out, errOut)
	}
	testenv.Eventually(t, 30*time.Second, func() error {
		show, _, _ := cli(t, "scontrol", "show", "job", id, "--nats", url)
		for _, want := range []string{"JobName=sh\n", "\n   NumNodes=2 ", "\n   Command=sh -c exit 0\n", "\n   WorkDir=" + dir + "\n"} {
			if !strings.Contains(show, want) {
				return fmt.Errorf("scontrol show job lacks %q:\n%s", want, show)
			}
		}
		return nil
	})

	out, errOut, code = cli(t, "sbatch", "--parsable", "-W", "--nats", url, "-D", dir, script, "-c", "exit 0")
	if code != 0 || strings.Count(out, "\n") != 1 || strings.Contains(out, " ") {
		t.Errorf("sbatch --parsable -W of a job that succeeds = %d %q %q", code, out, errOut)
	}
	out, errOut, code = cli(t, "sbatch", "--wait", "--parsable", "--nats", url, "-D", dir, script, "-c", "exit 3")
	if code != 3 || !strings.Contains(errOut, "failed") {
		t.Errorf("sbatch -W of a job that exits 3 = %d %q %q", code, out, errOut)
	}
	// -Q: nothing but errors, the job submitted all the same.
	out, errOut, code = cli(t, "sbatch", "-Q", "-W", "--nats", url, "-D", dir, script, "-c", "exit 0")
	if code != 0 || out != "" || errOut != "" {
		t.Errorf("sbatch -Q -W = %d %q %q", code, out, errOut)
	}
}

// A dependency chain: B after A succeeded runs; C after a job that failed
// never can, and -W says so.
func TestSbatchDependencyChain(t *testing.T) {
	url := startDevCluster(t)
	dir, script := writeExitScript(t)
	submit := func(args ...string) (string, int) {
		t.Helper()
		out, errOut, code := cli(t, append([]string{"sbatch", "--parsable", "--nats", url, "-D", dir}, args...)...)
		if code != 0 && !strings.Contains(strings.Join(args, " "), "-W") {
			t.Fatalf("sbatch %q = %d %q", args, code, errOut)
		}
		return strings.TrimSpace(out), code
	}
	a, _ := submit(script, "-c", "exit 0")
	bad, _ := submit(script, "-c", "exit 4")
	if _, code := submit("-W", "-d", "afterok:"+a, script, "-c", "exit 0"); code != 0 {
		t.Errorf("B after A succeeded: exit %d", code)
	}
	_, errOut, code := cli(t, "sbatch", "-W", "--dependency=afterok:"+bad, "--nats", url, "-D", dir, script, "-c", "exit 0")
	if code != 1 || !strings.Contains(errOut, "DependencyNeverSatisfied") {
		t.Errorf("C after a failed job: exit %d %q", code, errOut)
	}
}

// -W with --array waits for every task and exits with the highest of
// their exit codes (sbatch(1)); an array admission rejects as a whole
// ends the wait with 1.
func TestSbatchWaitArray(t *testing.T) {
	url := startDevCluster(t)
	dir := t.TempDir()
	script := writeFile(t, "task.sh", "#!/bin/sh\n#SBATCH --gpus-per-node=1 --export=NONE\nexit $((SLURM_ARRAY_TASK_ID % 4))\n")
	out, errOut, code := cli(t, "sbatch", "--parsable", "-W", "--array=4,8,9-10%2", "--nats", url, "-D", dir, script)
	id := strings.TrimSpace(out)
	if code != 2 || !strings.Contains(errOut, "array "+id+": 2 of 4 tasks did not succeed; "+id+"_10 failed") {
		t.Fatalf("sbatch -W --array (exits 0, 0, 1, 2) = %d %q %q", code, out, errOut)
	}
	for _, task := range []string{"_4", "_8", "_9", "_10"} {
		if show, _, _ := cli(t, "scontrol", "show", "job", id+task, "--nats", url); !strings.Contains(show, "JobState=") ||
			strings.Contains(show, "JobState=RUNNING") || strings.Contains(show, "JobState=PENDING") {
			t.Errorf("sbatch -W returned before task %s ended:\n%s", task, show)
		}
	}
	if _, errOut, code := cli(t, "sbatch", "-W", "--array=0,4", "--nats", url, "-D", dir, script); code != 0 {
		t.Errorf("sbatch -W of an array whose tasks all succeed = %d %q", code, errOut)
	}
	_, errOut, code = cli(t, "sbatch", "-W", "--array=0-1", "--nodes=3", "--nats", url, "-D", dir, script)
	if code != 1 || !strings.Contains(errOut, "rejected") {
		t.Errorf("sbatch -W of an array that cannot fit = %d %q", code, errOut)
	}
}

// --test-only asks where the job would start and submits nothing; a
// script on stdin is named sbatch, as Slurm names it.
func TestSbatchTestOnlyAndStdin(t *testing.T) {
	url := startDevCluster(t)
	// Until both agents have registered, it would wait for nodes.
	testenv.Eventually(t, 30*time.Second, func() error {
		out, errOut, code := cliIn(t, exitScript, "sbatch", "--test-only", "--nats", url)
		if code != 0 || !strings.HasPrefix(out, "would start now on node-01,node-02") {
			return fmt.Errorf("--test-only = %d %q %q", code, out, errOut)
		}
		return nil
	})
	if out, _, _ := cli(t, "squeue", "-h", "-t", "all", "--nats", url); out != "" {
		t.Errorf("--test-only submitted a job: %q", out)
	}
	out, errOut, code := cliIn(t, exitScript, "sbatch", "--nats", url, "-D", t.TempDir())
	id, ok := strings.CutPrefix(strings.TrimSpace(out), "Submitted batch job ")
	if code != 0 || !ok {
		t.Fatalf("sbatch < script = %d %q %q", code, out, errOut)
	}
	testenv.Eventually(t, 30*time.Second, func() error {
		if out, _, _ := cli(t, "squeue", "-h", "-j", id, "-o", "%j", "--nats", url); out != "sbatch\n" {
			return fmt.Errorf("the job of a script on stdin is named %q", out)
		}
		return nil
	})
}

// Errors name the option: a bad command line exits 2, a bad script 1
// (naming its line); --ignore-unsupported warns and submits.
func TestSbatchErrors(t *testing.T) {
	dir := t.TempDir()
	script := filepath.Join(dir, "job.sh")
	if err := os.WriteFile(script, []byte("#!/bin/sh\n#SBATCH --gpus-per-node=8\n#SBATCH --mem=80G\nhostname\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	ok := writeFile(t, "ok.sh", "#!/bin/sh\n#SBATCH --gpus-per-node=8\nhostname\n")
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"sbatch", "--bogus", ok}, 2, "sbatch: unrecognized option '--bogus'"},
		{[]string{"sbatch", "-N", "x", ok}, 2, "sbatch: -N x: "},
		{[]string{"sbatch", "--account=ml", ok}, 2, "sbatch: --account=ml is not supported by Lockstep"},
		{[]string{"sbatch", script}, 1, "sbatch: job.sh: line 3: --mem=80G is not supported by Lockstep"},
		{[]string{"sbatch", filepath.Join(dir, "missing.sh")}, 1, "sbatch: unable to open the batch script"},
		{[]string{"sbatch", "--ntasks=3", "-N", "2", ok}, 1, "--ntasks=3 cannot be spread evenly over --nodes=2"},
		{[]string{"sbatch", "-d", "afterok:a?afterok:b", ok}, 1, "'?' (any one of the conditions) is not supported"},
	} {
		_, errOut, code := cli(t, tc.args...)
		if code != tc.code || !strings.Contains(errOut, tc.want) {
			t.Errorf("%q: exit %d %q; want %d and %q", tc.args[1:], code, errOut, tc.code, tc.want)
		}
	}
	if _, errOut, code := cliIn(t, "echo no shebang\n", "sbatch"); code != 1 || !strings.Contains(errOut, "the first line must start with #!") {
		t.Errorf("a script without #! on stdin: %d %q", code, errOut)
	}

	url := startDevCluster(t)
	out, errOut, code := cli(t, "sbatch", "--ignore-unsupported", "--account=ml", "--nats", url, "-D", dir, script)
	if code != 0 || !strings.HasPrefix(out, "Submitted batch job ") ||
		errOut != "sbatch: warning: line 3: --mem=80G is not supported by Lockstep; ignored\nsbatch: warning: --account=ml is not supported by Lockstep; ignored\n" {
		t.Errorf("--ignore-unsupported = %d %q %q", code, out, errOut)
	}
}

// Under its own name (a slurm-shims link) the binary is sbatch.
func TestSbatchShimName(t *testing.T) {
	if got := shimArgs("/x/bin/sbatch", []string{"-V"}); strings.Join(got, " ") != "sbatch -V" {
		t.Fatalf("shimArgs(sbatch) = %q", got)
	}
	if out, _, code := cli(t, shimArgs("/x/bin/sbatch", []string{"--version"})...); code != 0 || !strings.Contains(out, "(sbatch)") {
		t.Errorf("sbatch --version = %d %q", code, out)
	}
}
