package health

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/errors"
)

func TestJudgeProgram(t *testing.T) {
	for _, tc := range []struct {
		name string
		res  ProgramResult
		node string
		gpus []NamedGPU
	}{
		{"exit 0 whatever it says", ProgramResult{Output: []byte("gpu 3: hot\nwarning: disk 91% full\n")}, "", nil},
		{"node reason is the first line", ProgramResult{ExitCode: 1, Output: []byte("\n  /scratch is not mounted \nsecond line\n")}, "health-check program (exit 1): /scratch is not mounted", nil},
		{"no output", ProgramResult{ExitCode: 3}, "health-check program exited 3 with no output", nil},
		{"killed", ProgramResult{Err: errors.New("/etc/lockstep/hc was killed after 1m0s")}, "health-check program: /etc/lockstep/hc was killed after 1m0s", nil},
		{"named GPUs only", ProgramResult{ExitCode: 1, Output: []byte("checking 8 GPUs\ngpu 3: fan failed\nGPU GPU-a1b2c3d8-0000-4000-8000-000000000004 : dcgmi diag level 1 failed\n")}, "", []NamedGPU{
			{"3", "health-check program: fan failed"},
			{"GPU-a1b2c3d8-0000-4000-8000-000000000004", "health-check program: dcgmi diag level 1 failed"},
		}},
		{"a GPU line without a reason", ProgramResult{ExitCode: 1, Output: []byte("gpu 2:\n")}, "", []NamedGPU{{"2", "health-check program: named by the health-check program"}}},
	} {
		v := JudgeProgram(tc.res)
		if v.Node != tc.node || len(v.GPUs) != len(tc.gpus) {
			t.Errorf("%s: %+v", tc.name, v)
			continue
		}
		for i := range tc.gpus {
			if v.GPUs[i] != tc.gpus[i] {
				t.Errorf("%s: gpu %+v, want %+v", tc.name, v.GPUs[i], tc.gpus[i])
			}
		}
	}
}

func TestCheckerRunsProgram(t *testing.T) {
	out := "gpu 3: fan failed\ngpu 9: not on this node\ngpu GPU-a1b2c3d4-0000-4000-8000-000000000000: hot\n"
	prog := func(context.Context) ProgramResult { return ProgramResult{ExitCode: 1, Output: []byte(out)} }
	c := newChecker(t, dgxGPUs(t), fixedSMI(readFixture(t, "dgx-h100-healthy.csv"), nil, nil), WithProgram(prog))
	r := check(t, c)
	got := unhealthy(r)
	if len(got) != 2 || !strings.HasSuffix(got[3], ": health-check program: fan failed") || !strings.HasSuffix(got[0], ": health-check program: hot") {
		t.Errorf("unhealthy %v", got)
	}
	if r.NodeReason() != "health-check program: not on this node (names gpu 9, which this node does not have)" {
		t.Errorf("node reason %q", r.NodeReason())
	}
}

// script writes an executable shell script.
func script(t *testing.T, body string) string {
	t.Helper()
	if runtime.GOOS == "windows" {
		t.Skip("shell scripts")
	}
	path := filepath.Join(t.TempDir(), "hc.sh")
	if err := os.WriteFile(path, []byte("#!/bin/sh\n"+body+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestCommandProgram(t *testing.T) {
	ctx := context.Background()
	if res := CommandProgram(script(t, "echo all good"), time.Minute)(ctx); res.Err != nil || res.ExitCode != 0 || string(res.Output) != "all good\n" {
		t.Errorf("exit 0: %+v", res)
	}
	res := CommandProgram(script(t, "echo 'gpu 1: ECC' >&2; exit 4"), time.Minute)(ctx)
	if v := JudgeProgram(res); res.ExitCode != 4 || len(v.GPUs) != 1 || v.GPUs[0].Reason != "health-check program: ECC" {
		t.Errorf("exit 4: %+v, %+v", res, v)
	}
	res = CommandProgram(script(t, "yes lockstep | head -c 1000000; exit 1"), time.Minute)(ctx)
	if len(res.Output) != maxProgramOutput || res.ExitCode != 1 {
		t.Errorf("chatty program: %d bytes kept, exit %d", len(res.Output), res.ExitCode)
	}
	if res := CommandProgram(filepath.Join(t.TempDir(), "missing"), time.Minute)(ctx); res.Err == nil {
		t.Errorf("missing program: %+v", res)
	}
}

// A hung program and the children it started are killed at the timeout.
func TestCommandProgramTimeout(t *testing.T) {
	start := time.Now()
	res := CommandProgram(script(t, "sleep 30 & sleep 30; echo late"), 200*time.Millisecond)(context.Background())
	if took := time.Since(start); took > 10*time.Second {
		t.Errorf("took %s", took)
	}
	if res.Err == nil || !strings.Contains(res.Err.Error(), "killed after 200ms") || bytes.Contains(res.Output, []byte("late")) {
		t.Errorf("%+v", res)
	}
}

// Command keeps what nvidia-smi printed when it exits non-zero, as it does
// with a GPU lost.
func TestCommandKeepsOutputOnFailure(t *testing.T) {
	path := script(t, "cat "+filepath.Join(mustAbs(t, "testdata"), "dgx-h100-gpu-lost.txt")+"; exit 15")
	out, err := Command(path)(context.Background(), QueryArgs(HealthFields)...)
	if err == nil || !bytes.Contains(out, []byte("GPU is lost")) {
		t.Fatalf("%v, %q", err, out)
	}
	c := newChecker(t, dgxGPUs(t), Command(path))
	if got := unhealthy(check(t, c)); len(got) != 1 || !strings.Contains(got[3], "GPU is lost") {
		t.Errorf("unhealthy %v", got)
	}
}

func mustAbs(t *testing.T, p string) string {
	t.Helper()
	abs, err := filepath.Abs(p)
	if err != nil {
		t.Fatal(err)
	}
	return abs
}
