package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lockstep-dev/lockstep/cmd/lockstep/slurm"
	"github.com/lockstep-dev/lockstep/shared/contract/jobspec"
)

// testSubmitter is a login node: a user's directory, host and a small
// environment with what must and must not travel.
var testSubmitter = sbatchSubmitter{dir: "/home/alice/proj", host: "login1", environ: []string{
	"PATH=/home/alice/venv/bin:/usr/bin", "HOME=/home/alice", "USER=alice", "LANG=C.UTF-8",
	"LOCKSTEP_CREDS=/home/alice/.lockstep/alice.creds", "SLURM_JOB_ID=outer-1", "NCCL_DEBUG=INFO",
}}

// corpusSpec submits a corpus script (testdata/slurm) with a command line,
// as `lockstep sbatch ARGS... SCRIPT SCRIPT_ARGS...` would, up to the spec.
func corpusSpec(t *testing.T, args []string) (jobspec.Spec, []string, error) {
	t.Helper()
	read := func(operands []string) (sbatchScript, error) {
		in := append([]string{filepath.Join("testdata", "slurm", operands[0])}, operands[1:]...)
		return readBatchScript(strings.NewReader(""), in)
	}
	d, sc, ignore, err := parseSbatch(args, func(string, string) error { return nil }, read)
	if err != nil {
		return jobspec.Spec{}, nil, err
	}
	spec, raw, warnings, err := sbatchSpec(d, sc, testSubmitter, ignore)
	if err != nil {
		return spec, warnings, err
	}
	if _, err := jobspec.Parse(raw); err != nil {
		t.Errorf("%q: the spec does not parse: %v", args, err)
	}
	if want, _ := os.ReadFile(filepath.Join("testdata", "slurm", sc.name)); spec.Batch == nil || spec.Batch.Script != string(want) {
		t.Errorf("%q: batch.script is not the script", args)
	}
	return spec, append(d.Warnings, warnings...), nil
}

// Each script of the corpus, as its users submit it, becomes this spec
// (batch.script and env aside, checked above and below).
func TestSbatchCorpusSpecs(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--job-name=llama-train", "--nodes=2", "--gpus-per-node=8", "submit_job.sh"},
			`{"name":"llama-train","priority":0,"gang":{"nodes":2,"gpusPerNode":8,"tasksPerNode":8,"cpusPerTask":12,"gpuBind":"closest"},` +
				`"command":["submit_job.sh"],"workdir":"/home/alice/proj","restartPolicy":{},"topology":{"maxSwitches":1,"waitForSwitches":"15m0s"},` +
				`"checkpoint":{},"batch":{"script":"","output":"/mnt/nvme/logs/%j.out"}}`},
		{[]string{"torchrun.sh", "--config", "big.yaml"},
			`{"name":"gpt-pretrain","queue":"train","priority":0,"gang":{"nodes":4,"gpusPerNode":8,"tasksPerNode":1,"cpusPerTask":96,"gpuType":"h100"},` +
				`"command":["torchrun.sh","--config","big.yaml"],"workdir":"/home/alice/proj","timeLimit":"48h0m0s","restartPolicy":{},"topology":{},` +
				`"checkpoint":{},"batch":{"script":"","output":"logs/%x-%j.out","error":"logs/%x-%j.err"}}`},
		{[]string{"mpi.sh"},
			`{"name":"allreduce-bench","priority":0,"gang":{"nodes":2,"gpusPerNode":8,"tasksPerNode":8,"cpusPerTask":8,"gpuBind":"closest"},` +
				`"command":["mpi.sh"],"workdir":"/home/alice/proj","timeLimit":"30m0s","restartPolicy":{},"topology":{},` +
				`"checkpoint":{},"batch":{"script":"","output":"bench-%j.out"}}`},
		// The command line wins over the script: -t and the array's limit.
		{[]string{"-t", "2:00:00", "--array=0-15:3,20%2", "array.sh"},
			`{"name":"sweep","priority":5,"gang":{"nodes":1,"gpusPerNode":1,"tasksPerNode":1},` +
				`"command":["array.sh"],"workdir":"/home/alice/proj","timeLimit":"2h0m0s","restartPolicy":{},"topology":{},` +
				`"checkpoint":{},"batch":{"script":"","output":"sweep/%A_%a.out"},"array":{"indexes":"0-15:3,20","maxConcurrent":2}}`},
		{[]string{"array.sh"},
			`{"name":"sweep","priority":5,"gang":{"nodes":1,"gpusPerNode":1,"tasksPerNode":1},` +
				`"command":["array.sh"],"workdir":"/home/alice/proj","timeLimit":"1h0m0s","restartPolicy":{},"topology":{},` +
				`"checkpoint":{},"batch":{"script":"","output":"sweep/%A_%a.out"},"array":{"indexes":"0-15","maxConcurrent":4}}`},
		// The command line's -d adds to nothing: it replaces the script's
		// singleton, as any option given twice.
		{[]string{"-d", "afterok:prep-1:prep-2,afterany:eval-1,afterok:prep-3", "chain.sh", "train"},
			`{"name":"pipeline","priority":0,"gang":{"nodes":1,"gpusPerNode":8,"tasksPerNode":1},` +
				`"command":["chain.sh","train"],"workdir":"/home/alice/proj/stages","restartPolicy":{"maxRestarts":0},"topology":{},` +
				`"checkpoint":{},"dependencies":[{"type":"afterok","jobs":["prep-1","prep-2","prep-3"]},{"type":"afterany","jobs":["eval-1"]}],"batch":{"script":""}}`},
		{[]string{"-D", "/scratch/alice", "chain.sh", "eval"},
			`{"name":"pipeline","priority":0,"gang":{"nodes":1,"gpusPerNode":8,"tasksPerNode":1},` +
				`"command":["chain.sh","eval"],"workdir":"/scratch/alice","restartPolicy":{"maxRestarts":0},"topology":{},` +
				`"checkpoint":{},"singleton":true,"batch":{"script":""}}`},
		{[]string{"--ignore-unsupported", "checkpoint.sh"},
			`{"name":"ckpt-train","priority":0,"gang":{"nodes":2,"gpusPerNode":8,"tasksPerNode":8},` +
				`"command":["checkpoint.sh"],"workdir":"/home/alice/proj","timeLimit":"4h0m0s","restartPolicy":{},"topology":{},` +
				`"checkpoint":{"signal":"SIGUSR1","gracePeriod":"2m0s"},"batch":{"script":""}}`},
	} {
		spec, warnings, err := corpusSpec(t, tc.args)
		if err != nil {
			t.Errorf("%q: %v", tc.args, err)
			continue
		}
		if spec.Env[envSubmitDir] != "/home/alice/proj" || spec.Env[envSubmitHost] != "login1" {
			t.Errorf("%q: env lacks the submit dir and host: %v", tc.args, spec.Env)
		}
		spec.Env, spec.Batch.Script = nil, ""
		got, _ := json.Marshal(spec)
		if string(got) != tc.want {
			t.Errorf("%q:\n got %s\nwant %s", tc.args, got, tc.want)
		}
		if wantWarn := strings.Contains(strings.Join(tc.args, " "), "--ignore-unsupported"); wantWarn != (len(warnings) > 0) {
			t.Errorf("%q: warnings %q", tc.args, warnings)
		}
	}
}

// mpi.sh's --export=NONE,NCCL_DEBUG=WARN sends only its own value; the
// default, ALL, sends the submitter's environment but what stays behind.
func TestSbatchCorpusEnv(t *testing.T) {
	spec, _, err := corpusSpec(t, []string{"mpi.sh"})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"NCCL_DEBUG": "WARN", envSubmitDir: "/home/alice/proj", envSubmitHost: "login1"}
	if !mapsEqual(spec.Env, want) {
		t.Errorf("mpi.sh env = %v, want %v", spec.Env, want)
	}
	spec, _, err = corpusSpec(t, []string{"torchrun.sh"})
	if err != nil {
		t.Fatal(err)
	}
	want = map[string]string{"PATH": "/home/alice/venv/bin:/usr/bin", "LANG": "C.UTF-8", "NCCL_DEBUG": "INFO",
		envSubmitDir: "/home/alice/proj", envSubmitHost: "login1"}
	if !mapsEqual(spec.Env, want) {
		t.Errorf("torchrun.sh env = %v, want %v", spec.Env, want)
	}
}

func mapsEqual(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

// What the corpus cannot do as written, and what sbatch refuses: errors
// naming the option (and the script's line for a directive).
func TestSbatchCorpusRefusals(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"checkpoint.sh"}, "checkpoint.sh: line 11: --open-mode=append is not supported by Lockstep"},
		{[]string{"--mem=80G", "mpi.sh"}, "sbatch: --mem=80G is not supported by Lockstep"},
		{[]string{"--exclusive=user", "mpi.sh"}, "--exclusive=user is not supported by Lockstep"},
		{[]string{"--requeue=expedite", "mpi.sh"}, "--requeue=expedite is not supported by Lockstep"},
		{[]string{"--signal=R:USR1@60", "mpi.sh"}, "--signal's R: flag (reservations) is not supported by Lockstep"},
		{[]string{"-d", "afterok:a-1?afterok:b-1", "chain.sh", "x"}, "'?' (any one of the conditions) is not supported"},
		{[]string{"-d", "after:a-1+10", "chain.sh", "x"}, "after:a-1+10 (start minutes after the job started) is not supported"},
		{[]string{"-d", "afterok:A-1", "chain.sh", "x"}, `"A-1" is not a job ID`},
		{[]string{"--ntasks=3", "mpi.sh"}, "--ntasks=3 cannot be spread evenly over --nodes=2"},
		{[]string{"-o", "logs/", "mpi.sh"}, "--output=logs/ names a directory"},
		{[]string{"-e", "a\tb", "mpi.sh"}, "--error=\"a\\tb\": a control character (byte 1)"},
		{[]string{"-D", "rel/../..", "mpi.sh"}, ""}, // /home: fine
		{[]string{"--array=0-3%200000", "array.sh"}, "a limit of 200000 tasks at once is more than the 100000 allowed"},
		{[]string{"--export=BAD-NAME", "mpi.sh"}, `--export: "BAD-NAME" is not an environment variable name`},
		{[]string{"--bogus", "mpi.sh"}, "unrecognized option '--bogus'"},
	} {
		_, _, err := corpusSpec(t, tc.args)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%q: %v", tc.args, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%q: %v; want %q", tc.args, err, tc.want)
		}
	}
	// Unsupported options, as the front end judges them, are marked so.
	if _, _, err := corpusSpec(t, []string{"--exclusive=mcs", "mpi.sh"}); !slurm.IsUnsupported(err) {
		t.Errorf("--exclusive=mcs: %v is not marked unsupported", err)
	}
	// With --ignore-unsupported each is a warning naming it.
	_, warnings, err := corpusSpec(t, []string{"--ignore-unsupported", "--mem=80G", "--exclusive=user", "--requeue=expedite", "mpi.sh"})
	got := strings.Join(warnings, "\n")
	if err != nil || !strings.Contains(got, "--mem=80G is not supported by Lockstep; ignored") ||
		!strings.Contains(got, "--exclusive=user is not supported by Lockstep; ignored") || !strings.Contains(got, "--requeue=expedite") {
		t.Errorf("--ignore-unsupported: %v, warnings:\n%s", err, got)
	}
}

// pyxis's options become the spec's container section, --container-env
// taking its values from the submitter's environment (an unset name is a
// warning, not sent); the spec passes the contract (the script and its
// steps run in the image).
func TestSbatchContainerOptions(t *testing.T) {
	d, _, err := slurm.ParseOptions([]string{"--gpus-per-node=8", "--container-image=nvcr.io#nvidia/pytorch:24.10-py3",
		"--container-mounts=/datasets/c4:/data:ro", "--container-workdir=/workspace", "--container-env=NCCL_DEBUG,HF_TOKEN", "train.sh"})
	if err != nil {
		t.Fatal(err)
	}
	sc := sbatchScript{text: []byte("#!/bin/sh\nsrun python train.py\n"), name: "train.sh"}
	var warnings []string
	s, err := sbatchSpecOf(d, sc, testSubmitter, &warnings)
	if err != nil {
		t.Fatal(err)
	}
	c := s.Container
	if c == nil || c.Image != "nvcr.io/nvidia/pytorch:24.10-py3" || c.Workdir != "/workspace" ||
		len(c.Mounts) != 1 || c.Mounts[0] != (jobspec.Mount{Source: "/datasets/c4", Target: "/data", ReadOnly: true}) ||
		len(c.Env) != 1 || c.Env["NCCL_DEBUG"] != "INFO" {
		t.Errorf("container %+v", c)
	}
	if len(warnings) != 1 || warnings[0] != "--container-env: not set here, not sent: HF_TOKEN" {
		t.Errorf("warnings %q", warnings)
	}
	if _, _, _, err := sbatchSpec(d, sc, testSubmitter, false); err != nil {
		t.Errorf("sbatchSpec = %v, want a batch job in a container", err)
	}
}
