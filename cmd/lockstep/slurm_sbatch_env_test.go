package main

import (
	"fmt"
	"strings"
	"testing"

	"github.com/lockstep-dev/lockstep/cmd/lockstep/slurm"
	"github.com/lockstep-dev/lockstep/shared/contract/domain"
)

func export(t *testing.T, s string) *slurm.Export {
	t.Helper()
	e, err := slurm.ParseExport(s)
	if err != nil {
		t.Fatal(err)
	}
	return &e
}

// --export as Slurm has it, over what a Lockstep rank gets anyway.
func TestSbatchEnvExport(t *testing.T) {
	sub := sbatchSubmitter{dir: "/d", host: "h", environ: []string{
		"PATH=/venv/bin:/usr/bin", "EDITOR=vi", "HOME=/home/a", "SHELL=/bin/zsh", "RANK=3", "CUDA_VISIBLE_DEVICES=0,1",
		"MASTER_ADDR=n9", "SLURM_ARRAY_TASK_ID=7", "LOCKSTEP_CREDS=/a.creds", "LOCKSTEP_NATS=nats://x",
		"NCCL_IB_HCA=mlx5_0", "BASH_FUNC_module%%=() {  eval x\n}", "LATIN=caf\xe9", "EDITOR=ignored (second)",
	}}
	base := map[string]string{envSubmitDir: "/d", envSubmitHost: "h"}
	with := func(kv ...string) map[string]string {
		m := map[string]string{}
		for k, v := range base {
			m[k] = v
		}
		for i := 0; i < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return m
	}
	for _, tc := range []struct {
		export  string // "" for none given
		want    map[string]string
		skipped string
	}{
		{"", with("PATH", "/venv/bin:/usr/bin", "EDITOR", "vi", "NCCL_IB_HCA", "mlx5_0"), "BASH_FUNC_module%%, LATIN"},
		{"ALL", with("PATH", "/venv/bin:/usr/bin", "EDITOR", "vi", "NCCL_IB_HCA", "mlx5_0"), "BASH_FUNC_module%%, LATIN"},
		{"NONE", base, ""},
		{"NIL", base, ""},
		// Named variables travel even when ALL would keep them behind:
		// the user asked for them; an unset one is nothing.
		{"EDITOR,HOME,UNSET,X=1", with("EDITOR", "vi", "HOME", "/home/a", "X", "1"), ""},
		{"ALL,EDITOR=emacs,SLURM_SUBMIT_DIR=/elsewhere", with("PATH", "/venv/bin:/usr/bin", "EDITOR", "emacs", "NCCL_IB_HCA", "mlx5_0"), "BASH_FUNC_module%%, LATIN"},
		{"NONE,'A=x,y'", with("A", "x,y"), ""},
	} {
		var e *slurm.Export
		if tc.export != "" {
			e = export(t, tc.export)
		}
		env, skipped, err := sbatchEnv(e, sub)
		if err != nil {
			t.Errorf("--export=%s: %v", tc.export, err)
			continue
		}
		if !mapsEqual(env, tc.want) || strings.Join(skipped, ", ") != tc.skipped {
			t.Errorf("--export=%s:\n got %v, skipped %q\nwant %v, skipped %q", tc.export, env, skipped, tc.want, tc.skipped)
		}
	}
	for _, tc := range []struct{ export, want string }{
		{"LATIN", "the value of LATIN is not UTF-8 text"},
		{"BASH_FUNC_module%%", `"BASH_FUNC_module%%" is not an environment variable name`},
	} {
		if _, _, err := sbatchEnv(export(t, tc.export), sub); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("--export=%s: %v, want %q", tc.export, err, tc.want)
		}
	}
}

// What a spec cannot carry is an error naming it, with what to do.
func TestSbatchEnvBounds(t *testing.T) {
	many := sbatchSubmitter{dir: "/d", host: "h"}
	for i := range 300 {
		many.environ = append(many.environ, fmt.Sprintf("V%d=x", i))
	}
	if _, _, err := sbatchEnv(nil, many); err == nil || !strings.Contains(err.Error(), "--export=ALL (sbatch's default): 302 environment variables to send, more than the 256") {
		t.Errorf("300 variables: %v", err)
	}
	if env, _, err := sbatchEnv(export(t, "NONE,V1,V2"), many); err != nil || len(env) != 4 {
		t.Errorf("--export=NONE,V1,V2 of 300: %v %v", env, err)
	}
	long := sbatchSubmitter{dir: "/d", host: "h", environ: []string{"BIG=" + strings.Repeat("x", 70000)}}
	if _, _, err := sbatchEnv(nil, long); err == nil || !strings.Contains(err.Error(), "BIG is 70000 characters long, more than the 65536") {
		t.Errorf("a 70000-character value: %v", err)
	}
	// 200 variables of 2000 bytes fit the env's bounds, not the spec's.
	large := sbatchSubmitter{dir: "/d", host: "h"}
	for i := range 200 {
		large.environ = append(large.environ, fmt.Sprintf("V%03d=%s", i, strings.Repeat("y", 2000+i)))
	}
	d := slurm.Directives{GPUsPerNode: &slurm.GPUs{Count: 8}}
	sc := sbatchScript{text: []byte("#!/bin/sh\ntrue\n"), name: "job.sh"}
	_, _, _, err := sbatchSpec(d, sc, large, false)
	if err == nil || !strings.Contains(err.Error(), "more than the 262144 allowed: the script is 15 bytes, the environment") ||
		!strings.Contains(err.Error(), "(the largest V199, 2199 bytes)") {
		t.Errorf("a 400 KB environment: %v", err)
	}
	// A script the spec cannot carry as sent.
	for _, tc := range []struct {
		text, want string
	}{
		{"#!/bin/sh\necho caf\xe9\n", "the script is not UTF-8 text (byte 18)"},
		{"#!/bin/sh\n" + strings.Repeat("# padding\n", 14000), "the script is 140010 characters, more than the 131072"},
	} {
		sc := sbatchScript{text: []byte(tc.text), name: "job.sh"}
		if _, _, _, err := sbatchSpec(d, sc, sbatchSubmitter{dir: "/d"}, false); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("script: %v, want %q", err, tc.want)
		}
	}
	// The submit directory must be one a spec can name.
	if _, _, _, err := sbatchSpec(d, sc, sbatchSubmitter{dir: "/a\nb"}, false); err == nil || !strings.Contains(err.Error(), "the current directory") {
		t.Errorf("a submit directory with a newline: %v", err)
	}
}

// sbatch -W exits with the job's exit code; 1 when the job has none of
// its own (Slurm: "terminated due to a signal rather than a normal exit").
func TestSbatchExitCode(t *testing.T) {
	code := func(n int) *int { return &n }
	for _, tc := range []struct {
		job  domain.Job
		want int
	}{
		{domain.Job{State: domain.StateSucceeded, ExitCode: code(0)}, 0},
		{domain.Job{State: domain.StateSucceeded}, 0},
		{domain.Job{State: domain.StateFailed, ExitCode: code(3)}, 3},
		{domain.Job{State: domain.StateFailed, ExitCode: code(137)}, 137},
		{domain.Job{State: domain.StateFailed, ExitCode: code(-1)}, 1},
		{domain.Job{State: domain.StateFailed, ExitCode: code(0)}, 1}, // failed, e.g. a lost node
		{domain.Job{State: domain.StateFailed}, 1},
		{domain.Job{State: domain.StateCancelled}, 1},
		{domain.Job{State: domain.StateTimeout, ExitCode: code(0)}, 1},
		{domain.Job{State: domain.StateRejected}, 1},
	} {
		if got := sbatchExitCode(tc.job); got != tc.want {
			t.Errorf("%s exit %v: %d, want %d", tc.job.State, tc.job.ExitCode, got, tc.want)
		}
	}
}
