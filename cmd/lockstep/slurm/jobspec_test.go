package slurm

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lockstep-dev/lockstep/shared/contract/jobspec"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// The seed's production script (issue 18), submitted as the seed submits
// it: its directives and command line become this job spec.
func TestSeedScriptGolden(t *testing.T) {
	script, err := os.ReadFile(filepath.Join("..", "testdata", "slurm", "submit_job.sh")) // the corpus's copy
	if err != nil {
		t.Fatal(err)
	}
	args := []string{"--job-name=llama-train", "--nodes=2", "--gpus-per-node=8", "submit_job.sh"}
	_, operands, err := ParseOptions(args)
	if err != nil {
		t.Fatal(err)
	}
	if len(operands) != 1 || operands[0] != "submit_job.sh" {
		t.Fatalf("operands = %q", operands)
	}
	d, err := ParseScript(script)
	if err != nil {
		t.Fatal(err)
	}
	d, _, err = d.Apply(args)
	if err != nil {
		t.Fatal(err)
	}
	if d.Output != "/mnt/nvme/logs/%j.out" || len(d.Warnings) != 0 {
		t.Errorf("output %q, warnings %q", d.Output, d.Warnings)
	}
	spec, err := d.JobSpec([]string{"/bin/bash", "submit_job.sh"})
	if err != nil {
		t.Fatal(err)
	}
	got, err := json.MarshalIndent(spec, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	got = append(got, '\n')
	golden := filepath.Join("testdata", "submit_job.spec.json")
	if *update {
		if err := os.WriteFile(golden, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("spec differs from %s (go test -update rewrites it):\n%s", golden, got)
	}
	// The spec is one Lockstep accepts, and its defaults are Slurm's
	// where the script said nothing.
	parsed, err := jobspec.Parse(got)
	if err != nil {
		t.Fatalf("jobspec.Parse: %v", err)
	}
	if parsed.Ranks() != 16 || parsed.GPUsPerTask() != 1 || parsed.Topology.WaitForSwitches.String() != "15m0s" {
		t.Errorf("parsed spec: %d ranks, %d GPUs per task, wait %s", parsed.Ranks(), parsed.GPUsPerTask(), parsed.Topology.WaitForSwitches)
	}
}

func TestJobSpec(t *testing.T) {
	cmd := []string{"/bin/sh", "job.sh"}
	for _, tc := range []struct {
		name  string
		args  []string
		check func(jobspec.Spec) bool
	}{
		{"defaults: one node, one task per node", []string{"--gpus-per-node=8"}, func(s jobspec.Spec) bool {
			return s.Gang.Nodes == 1 && s.Gang.TasksPerNode == 1 && s.Gang.GPUsPerNode == 8
		}},
		{"--gres=gpu:N", []string{"--gres=gpu:4", "-N3"}, func(s jobspec.Spec) bool { return s.Gang.GPUsPerNode == 4 && s.Gang.Nodes == 3 }},
		{"--gres=gpu:type:N", []string{"--gres=gpu:h100:8"}, func(s jobspec.Spec) bool { return s.Gang.GPUsPerNode == 8 && s.Gang.GPUType == "h100" }},
		{"--gpus-per-node=type:N", []string{"--gpus-per-node=tesla_v100:2"}, func(s jobspec.Spec) bool { return s.Gang.GPUType == "tesla_v100" }},
		{"--ntasks over --nodes", []string{"--gpus-per-node=8", "-N2", "-n16"}, func(s jobspec.Spec) bool { return s.Gang.TasksPerNode == 8 }},
		{"--ntasks and --ntasks-per-node give nodes", []string{"--gpus-per-node=8", "-n16", "--ntasks-per-node=8"}, func(s jobspec.Spec) bool {
			return s.Gang.Nodes == 2 && s.Gang.TasksPerNode == 8
		}},
		{"time rounds up, switches", []string{"--gpus-per-node=1", "-t", "1:30:01", "--switches=1@5"}, func(s jobspec.Spec) bool {
			return s.TimeLimit.String() == "1h31m0s" && s.Topology.MaxSwitches == 1 && s.Topology.WaitForSwitches.String() == "5m0s"
		}},
		{"unlimited time: no limit", []string{"--gpus-per-node=1", "-t", "UNLIMITED"}, func(s jobspec.Spec) bool { return s.TimeLimit.IsZero() }},
		{"switches above nodes are capped", []string{"--gpus-per-node=1", "-N2", "--switches=4"}, func(s jobspec.Spec) bool {
			return s.Topology.MaxSwitches == 2 && s.Topology.WaitForSwitches.IsZero()
		}},
		{"partition, priority, nice", []string{"--gpus-per-node=1", "-p", "research", "--priority=50", "--nice=10"}, func(s jobspec.Spec) bool {
			return s.Queue == "research" && s.Priority == 40
		}},
		{"negative nice raises", []string{"--gpus-per-node=1", "--nice=-7"}, func(s jobspec.Spec) bool { return s.Priority == 7 }},
		{"signal", []string{"--gpus-per-node=1", "--signal=B:USR2@300"}, func(s jobspec.Spec) bool {
			return s.Checkpoint.Signal == "SIGUSR2" && s.Checkpoint.GracePeriod.String() == "5m0s"
		}},
		{"signal by number, default time", []string{"--gpus-per-node=1", "--signal=15"}, func(s jobspec.Spec) bool {
			return s.Checkpoint.Signal == "SIGTERM" && s.Checkpoint.GracePeriod.String() == "1m0s"
		}},
		{"no-requeue", []string{"--gpus-per-node=1", "--no-requeue"}, func(s jobspec.Spec) bool {
			return s.RestartPolicy.MaxRestarts != nil && *s.RestartPolicy.MaxRestarts == 0
		}},
		{"requeue keeps the default", []string{"--gpus-per-node=1", "--requeue"}, func(s jobspec.Spec) bool { return s.RestartPolicy.MaxRestarts == nil }},
		{"export NAME=value to env", []string{"--gpus-per-node=1", "--export=ALL,A=1,HOME"}, func(s jobspec.Spec) bool {
			return len(s.Env) == 1 && s.Env["A"] == "1"
		}},
		{"gpu-bind", []string{"--gpus-per-node=1", "--gpu-bind=closest", "-c", "6"}, func(s jobspec.Spec) bool {
			return s.Gang.GPUBind == "closest" && s.Gang.CPUsPerTask == 6
		}},
	} {
		d, _, err := ParseOptions(tc.args)
		if err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		s, err := d.JobSpec(cmd)
		if err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		if !tc.check(s) {
			t.Errorf("%s: spec %+v", tc.name, s)
		}
		raw, _ := json.Marshal(s)
		if _, err := jobspec.Parse(raw); err != nil {
			t.Errorf("%s: the spec does not parse: %v", tc.name, err)
		}
	}
}

func TestJobSpecErrors(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{nil, "no GPUs requested"},
		{[]string{"--gpus-per-node=8", "--gres=gpu:8"}, "mutually exclusive"},
		{[]string{"--gpus-per-node=a100/x:8"}, "--gpus-per-node: GPU type \"a100/x\" is not a GPU model"},
		{[]string{"--gres=gpu:_a100:8"}, "--gres=gpu: GPU type"},
		{[]string{"--gpus-per-node=65"}, "--gpus-per-node: 65 GPUs per node"},
		{[]string{"--gpus-per-node=8", "-N2", "-n3"}, "--ntasks=3 cannot be spread evenly over --nodes=2"},
		{[]string{"--gpus-per-node=8", "-N2", "-n8", "--ntasks-per-node=8"}, "--ntasks=8 is not --nodes=2 times --ntasks-per-node=8"},
		{[]string{"--gpus-per-node=8", "-n12", "--ntasks-per-node=8"}, "--ntasks=12 is not a multiple of --ntasks-per-node=8"},
		{[]string{"--gpus-per-node=8", "--ntasks-per-node=3"}, "--gpus-per-node=8 cannot be shared evenly by 3 tasks per node"},
		{[]string{"--gres=gpu:8", "-n", "5"}, "--gres=gpu=8 cannot be shared evenly by 5 tasks"},
		{[]string{"--gpus-per-node=8", "-N5000"}, "--nodes: 5000 nodes"},
		{[]string{"--gpus-per-node=8", "-c2000"}, "--cpus-per-task: 2000"},
		{[]string{"--gpus-per-node=8", "-t", "400-0"}, "--time: 9600h0m0s is more than a year"},
		{[]string{"--gpus-per-node=8", "--switches=1@UNLIMITED"}, "--switches: a wait of more than a year"},
		{[]string{"--gpus-per-node=8", "-p", "a,b"}, "--partition=a,b: a list of partitions"},
		{[]string{"--gpus-per-node=8", "-p", "GPU"}, "--partition=GPU: a Lockstep queue name"},
		{[]string{"--gpus-per-node=8", "--priority=2000000"}, "--priority/--nice: priority 2000000"},
		{[]string{"--gpus-per-node=8", "--nice=-2000000"}, "--priority/--nice"},
		{[]string{"--gpus-per-node=8", "--signal=KILL"}, "--signal: Lockstep's checkpoint signal is one of SIGUSR1, SIGUSR2, SIGTERM, SIGINT, SIGHUP, not SIGKILL"},
		{[]string{"--gpus-per-node=8", "--signal=40"}, "not signal 40"},
		{[]string{"--gpus-per-node=8", "--signal=USR1@0"}, "--signal: a sig_time of 0"},
		{[]string{"--gpus-per-node=8", "--export=1A=x"}, "--export: \"1A\" is not an environment variable name"},
		{[]string{"--gpus-per-node=8", "-J", strings.Repeat("n", 129)}, "--job-name: 129 characters"},
	} {
		d, _, err := ParseOptions(tc.args)
		if err != nil {
			t.Errorf("ParseOptions(%q): %v", tc.args, err)
			continue
		}
		_, err = d.JobSpec([]string{"x"})
		checkInvalid(t, fmt.Sprintf("JobSpec of %q", tc.args), err, tc.want)
	}
	d, _, _ := ParseOptions([]string{"--gpus-per-node=1"})
	if _, err := d.JobSpec(nil); err == nil {
		t.Error("JobSpec(nil) succeeded")
	}
}
