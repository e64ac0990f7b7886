//go:build !lockstep_client

package main

import (
	"maps"
	"strings"
	"testing"
)

func TestExportedEnv(t *testing.T) {
	environ := []string{"A=1", "B=2", "bad-name=x", "PATH=/bin"}
	for _, tc := range []struct {
		export string
		want   map[string]string
	}{
		{"ALL", map[string]string{"A": "1", "B": "2", "PATH": "/bin"}},
		{"NONE", map[string]string{}},
		{"A,C=3,D", map[string]string{"A": "1", "C": "3"}},
		{"ALL,B=9", map[string]string{"A": "1", "B": "9", "PATH": "/bin"}},
		// As sbatch reads it: any case, ALL anywhere in the list.
		{"all", map[string]string{"A": "1", "B": "2", "PATH": "/bin"}},
		{"none", map[string]string{}},
		{"B=9,ALL", map[string]string{"A": "1", "B": "9", "PATH": "/bin"}},
	} {
		got, err := exportedEnv(tc.export, environ)
		if err != nil || !maps.Equal(got, tc.want) {
			t.Errorf("--export=%s: %v (%v), want %v", tc.export, got, err, tc.want)
		}
	}
	if _, err := exportedEnv("1X=2", environ); err == nil {
		t.Error("--export=1X=2 accepted")
	}
}

// Outside a batch job, and with options it does not have, srun says so.
func TestSrunOutsideAJob(t *testing.T) {
	t.Setenv("LOCKSTEP_AGENT_SOCKET", "")
	if _, errOut, code := cli(t, "srun", "hostname"); code != 2 || !strings.Contains(errOut, "batch job") {
		t.Errorf("srun outside a job = %d %q", code, errOut)
	}
	if _, errOut, code := cli(t, "srun", "--mpi=pmix", "hostname"); code != 2 || !strings.Contains(errOut, "--mpi") {
		t.Errorf("srun --mpi = %d %q; want a usage error naming it", code, errOut)
	}
	t.Setenv("LOCKSTEP_AGENT_SOCKET", "/nonexistent")
	t.Setenv("LOCKSTEP_ACK_TOKEN", "t")
	t.Setenv("LOCKSTEP_JOB_ID", "j")
	// -K takes its value attached, also after an option whose value is
	// the next argument.
	for _, opts := range [][]string{{"--kill-on-bad-exit=2"}, {"-K2"}, {"-N", "1", "-K2"}, {"--ntasks", "2", "-l", "-K2"}} {
		args := append(append([]string{"srun"}, opts...), "hostname")
		if _, errOut, code := cli(t, args...); code != 2 || !strings.Contains(errOut, `--kill-on-bad-exit="2"`) {
			t.Errorf("srun %s = %d %q", strings.Join(opts, " "), code, errOut)
		}
	}
	// pyxis's options name themselves and what to do instead.
	if _, errOut, code := cli(t, "srun", "--container-image=nvcr.io#nvidia/pytorch:24.10-py3", "python", "t.py"); code != 2 ||
		!strings.Contains(errOut, "srun: --container-image: a step cannot run in a container of its own; steps run in the batch job's image") {
		t.Errorf("srun --container-image = %d %q", code, errOut)
	}
}
