package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lockstep-dev/lockstep/shared/plumbing/testenv"
)

// The Slurm commands over a dev cluster: a job submitted with Lockstep's
// spec shows in squeue, scancel cancels it, sacct reports it cancelled.
func TestSlurmCommandsSeeAndCancelAJob(t *testing.T) {
	url := startDevCluster(t)
	spec := writeFile(t, "long.json", `{"id":"slurm-1","name":"train","gang":{"nodes":2,"gpusPerNode":8},"command":["sleep","300"]}`)
	mustSubmit(t, url, spec)
	testenv.Eventually(t, 30*time.Second, func() error {
		out, errOut, code := cli(t, "squeue", "-h", "-o", "%i %t", "--nats", url)
		if code != 0 || out != "slurm-1 R\n" {
			return fmt.Errorf("squeue -h -o '%%i %%t' = %d %q %q", code, out, errOut)
		}
		return nil
	})
	out, _, code := cli(t, "squeue", "-o", "%.10i|%-6j|%D|%C|%b|%N|%R", "--nats", url)
	want := "     JOBID|NAME  |NODES|CPUS|TRES_PER_NODE|NODELIST|NODELIST(REASON)\n" +
		"   slurm-1|train |2|16|gres/gpu:8|"
	if code != 0 || !strings.HasPrefix(out, want) {
		t.Errorf("squeue -o = %d\n%s\nwant prefix\n%s", code, out, want)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"sinfo"}, "PARTITION AVAIL  TIMELIMIT  NODES  STATE NODELIST\n" +
			"default*     up   infinite      2  alloc node-[01-02]\n"},
		{[]string{"sinfo", "-N", "-h"}, "node-01       1 default*  alloc \nnode-02       1 default*  alloc \n"},
		{[]string{"sinfo", "-h", "-o", "%R %D %T %G"}, "default 2 allocated gpu:8\n"},
		{[]string{"scontrol", "show", "hostnames", "node-[01-02]"}, "node-01\nnode-02\n"},
		{[]string{"scontrol", "show", "hostlist", "node-01,node-02"}, "node-[01-02]\n"},
		// Abbreviated as scontrol allows: five letters of host…, one of job or node.
		{[]string{"scontrol", "show", "hostname", "node-[01-02]"}, "node-01\nnode-02\n"},
		{[]string{"scontrol", "show", "hostl", "node-01,node-02"}, "node-[01-02]\n"},
		{[]string{"scontrol", "show", "HostNames", "node-[01-02]"}, "node-01\nnode-02\n"}, // in any case
	} {
		if out, errOut, code := cli(t, append(tc.args, "--nats", url)...); code != 0 || out != tc.want {
			t.Errorf("%q = %d\n%s%s\nwant\n%s", tc.args, code, out, errOut, tc.want)
		}
	}
	if out, errOut, code := cli(t, "scontrol", "show", "n", "node-02", "--nats", url); code != 0 || !strings.HasPrefix(out, "NodeName=node-02 ") {
		t.Errorf("scontrol show n node-02 = %d %q %s", code, out, errOut)
	}
	out, _, _ = cli(t, "scontrol", "show", "job", "slurm-1", "--nats", url)
	for _, want := range []string{"JobId=slurm-1 JobName=train\n", "\n   JobState=RUNNING Reason=None\n", "\n   NodeList=node-[01-02]\n",
		"\n   NumNodes=2 NumCPUs=16 NumTasks=16 CPUs/Task=1\n", "\n   Command=sleep 300\n"} {
		if !strings.Contains(out, want) {
			t.Errorf("scontrol show job lacks %q:\n%s", want, out)
		}
	}
	out, _, _ = cli(t, "scontrol", "show", "node", "node-02", "--nats", url)
	if !strings.HasPrefix(out, "NodeName=node-02 ") || !strings.Contains(out, "\n   State=ALLOCATED\n") || !strings.Contains(out, "GresUsed=gpu:8") {
		t.Errorf("scontrol show node node-02:\n%s", out)
	}
	if out, _, _ := cli(t, "squeue", "-h", "-n", "train,other", "-o", "%i", "--nats", url); out != "slurm-1\n" {
		t.Errorf("squeue -n train = %q", out)
	}
	if out, _, _ := cli(t, "squeue", "-h", "-n", "other", "--nats", url); out != "" {
		t.Errorf("squeue -n other = %q", out)
	}
	if out, _, code := cli(t, "squeue", "-t", "PD", "-h", "--nats", url); code != 0 || out != "" {
		t.Errorf("squeue -t PD of a running job = %d %q", code, out)
	}
	if _, errOut, code := cli(t, "scancel", "--signal=HUP", "slurm-1", "--nats", url); code != 1 || !strings.Contains(errOut, "--signal=HUP cannot be delivered") {
		t.Errorf("scancel --signal=HUP: %d %q", code, errOut)
	}
	if out, errOut, code := cli(t, "scancel", "slurm-1", "--nats", url); code != 0 || out != "" {
		t.Fatalf("scancel = %d %q %q", code, out, errOut)
	}
	testenv.Eventually(t, 30*time.Second, func() error {
		out, errOut, code := cli(t, "sacct", "-j", "slurm-1", "-o", "JobID,State", "--nats", url)
		want := "       JobID      State \n------------ ---------- \n     slurm-1  CANCELLED \n"
		if code != 0 || out != want {
			return fmt.Errorf("sacct -j -o JobID,State = %d\n%s%s", code, out, errOut)
		}
		return nil
	})
	out, _, code = cli(t, "sacct", "-j", "slurm-1", "-P", "-n", "-o", "jobid,jobname,nnodes,exitcode", "--nats", url)
	if code != 0 || out != "slurm-1|train|2|0:0\n" {
		t.Errorf("sacct -P -n = %d %q", code, out)
	}
	// Ended, it leaves squeue's default view; -j still shows it.
	if out, _, _ := cli(t, "squeue", "-h", "--nats", url); out != "" {
		t.Errorf("squeue after the cancel = %q", out)
	}
	if out, _, _ := cli(t, "squeue", "-h", "-j", "slurm-1", "-o", "%i %T", "--nats", url); out != "slurm-1 CANCELLED\n" {
		t.Errorf("squeue -j after the cancel = %q", out)
	}
	if _, errOut, code := cli(t, "scancel", "slurm-1", "--nats", url); code != 1 || !strings.Contains(errOut, "already ended") {
		t.Errorf("scancel of an ended job = %d %q", code, errOut)
	}
}

// scancel --signal with the job's checkpoint signal is Lockstep's
// checkpoint: the ranks get it, and the job is requeued (sleep dies of
// SIGUSR1, which ends the drain at once).
func TestSlurmScancelSignalCheckpoints(t *testing.T) {
	url := startDevCluster(t)
	spec := writeFile(t, "long.json", `{"id":"ckpt-1","gang":{"nodes":1,"gpusPerNode":8},"command":["sleep","300"]}`)
	mustSubmit(t, url, spec)
	testenv.Eventually(t, 30*time.Second, func() error {
		if out, _, _ := cli(t, "squeue", "-h", "-j", "ckpt-1", "-o", "%t", "--nats", url); out != "R\n" {
			return fmt.Errorf("squeue: %q", out)
		}
		return nil
	})
	if out, errOut, code := cli(t, "scancel", "--signal=USR1", "ckpt-1", "--nats", url); code != 0 || out != "" {
		t.Fatalf("scancel --signal=USR1 = %d %q %q", code, out, errOut)
	}
	testenv.Eventually(t, 30*time.Second, func() error {
		out, _, _ := cli(t, "scontrol", "show", "job", "ckpt-1", "--nats", url)
		if !strings.Contains(out, "Restarts=0") || strings.Contains(out, "JobState=CANCELLED") {
			return fmt.Errorf("not requeued without a restart charged:\n%s", out)
		}
		out, _, _ = cli(t, "describe", "ckpt-1", "-o", "json", "--nats", url)
		if !strings.Contains(out, `"attempt": 2`) {
			return fmt.Errorf("not requeued: %s", out)
		}
		return nil
	})
}

func TestSlurmCommandLineErrors(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"squeue", "-o", "%y"}, "squeue -o/--format: unknown field %y"},
		{[]string{"squeue", "-t", "XX"}, `squeue -t/--states: invalid job state "XX"`},
		{[]string{"squeue", "--bogus"}, "unknown flag: --bogus"},
		{[]string{"scancel"}, "no job identification provided"},
		{[]string{"scancel", "--signal=NOPE", "1"}, `scancel -s/--signal: unknown signal "NOPE"`},
		{[]string{"sacct", "-o", "JobID,Bogus"}, `sacct -o/--format: unknown field "Bogus"`},
		{[]string{"sacct", "-S", "yesterday"}, "sacct -S/--starttime"},
	} {
		_, errOut, code := cli(t, tc.args...)
		if code != 2 || !strings.Contains(errOut, tc.want) {
			t.Errorf("%q: exit %d, %q; want 2 and %q", tc.args, code, errOut, tc.want)
		}
	}
	// squeue's and sinfo's -h is Slurm's --noheader, not help; --help is
	// help. scancel's, sacct's and scontrol's -h is help, as in Slurm.
	for _, name := range []string{"squeue", "sinfo"} {
		if out, _, code := cli(t, name, "--help"); code != 0 || !strings.Contains(out, "-h, --noheader") {
			t.Errorf("%s --help = %d %q", name, code, out)
		}
	}
	for _, name := range []string{"scancel", "sacct", "scontrol"} {
		if out, _, code := cli(t, name, "-h"); code != 0 || !strings.Contains(out, "-h, --help") {
			t.Errorf("%s -h = %d %q", name, code, out)
		}
	}
	if _, errOut, code := cli(t, "srun", "hostname"); code != 2 || !strings.Contains(errOut, "srun runs inside a Lockstep batch job") {
		t.Errorf("srun: %d %q", code, errOut)
	}
}

func TestSlurmShims(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "bin")
	out, errOut, code := cli(t, "slurm-shims", dir, "--target", "/opt/lockstep/bin/lockstep")
	if code != 0 {
		t.Fatalf("slurm-shims = %d %q", code, errOut)
	}
	// A target not here (it may be, where the links are used) is said.
	if !strings.Contains(errOut, "--target /opt/lockstep/bin/lockstep is not an executable file here") {
		t.Errorf("no warning for a target that is not here: %q", errOut)
	}
	for _, name := range slurmNames {
		if got, err := os.Readlink(filepath.Join(dir, name)); err != nil || got != "/opt/lockstep/bin/lockstep" {
			t.Errorf("%s -> %q, %v", name, got, err)
		}
	}
	if strings.Count(out, "->") != len(slurmNames) {
		t.Errorf("output %q", out)
	}
	// Again: the links are replaced.
	if _, errOut, code := cli(t, "slurm-shims", dir, "--target", "/other"); code != 0 {
		t.Errorf("second slurm-shims = %d %q", code, errOut)
	}
	if got := shimArgs("/x/bin/squeue", []string{"-h"}); strings.Join(got, " ") != "squeue -h" {
		t.Errorf("shimArgs(squeue) = %q", got)
	}
	if got := shimArgs("/x/bin/lockstep", []string{"queue"}); strings.Join(got, " ") != "queue" {
		t.Errorf("shimArgs(lockstep) = %q", got)
	}
}

// scontrol show hostnames reads SLURM_JOB_NODELIST without a list, as
// scripts call it; none needs a cluster.
func TestScontrolHostlistsNeedNoCluster(t *testing.T) {
	t.Setenv("LOCKSTEP_NATS", deadNATS)
	t.Setenv("SLURM_JOB_NODELIST", "node-[01-02],gpu7")
	if out, errOut, code := cli(t, "scontrol", "show", "hostnames"); code != 0 || out != "node-01\nnode-02\ngpu7\n" {
		t.Errorf("show hostnames from SLURM_JOB_NODELIST = %d %q %q", code, out, errOut)
	}
	// In the given order, as Slurm's (its hostlistsorted sorts).
	if out, _, code := cli(t, "scontrol", "show", "hostlist", "n3,n1,n2,x[5-6]"); code != 0 || out != "n[3,1-2],x[5-6]\n" {
		t.Errorf("show hostlist = %d %q", code, out)
	}
	t.Setenv("SLURM_JOB_NODELIST", "")
	for _, args := range [][]string{{"scontrol", "show", "hostnames"}, {"scontrol", "show", "hostnames", "n[1-"}, {"scontrol", "update", "x"}, {"scontrol"},
		{"scontrol", "show", "host", "n1"}, {"scontrol", "show", "hostnamesx", "n1"}} {
		if _, errOut, code := cli(t, args...); code != 2 || !strings.Contains(errOut, "scontrol") {
			t.Errorf("%q = %d %q; want a usage error", args, code, errOut)
		}
	}
}
