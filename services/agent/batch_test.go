package agent

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/lockstep-dev/lockstep/shared/contract/domain"
	"github.com/lockstep-dev/lockstep/shared/contract/jobspec"
)

// The batch output file's name: Slurm's defaults (slurm-%j.out, and
// slurm-%A_%a.out for an array task) and patterns, whose %A and %a are an
// array task's array ID and index, relative to the working directory.
func TestOpenBatchOutputNames(t *testing.T) {
	task := &domain.ArrayTask{JobID: "sweep", Index: 7, Count: 16, Max: 15}
	for _, tc := range []struct {
		name          string
		as            domain.Assignment
		wantOut, want string
	}{
		{"default", domain.Assignment{JobID: "train-1", Batch: &jobspec.Batch{}}, "slurm-train-1.out", ""},
		{"array default", domain.Assignment{JobID: "sweep_7", Array: task, Batch: &jobspec.Batch{}}, "slurm-sweep_7.out", ""},
		{"array pattern", domain.Assignment{JobID: "sweep_7", JobName: "sw", Array: task,
			Batch: &jobspec.Batch{Output: "%x-%A.%a.out", Error: "%j.err"}}, "sw-sweep.7.out", "sweep_7.err"},
		{"not an array", domain.Assignment{JobID: "one", Batch: &jobspec.Batch{Output: "%A_%a-%j.out"}}, "one_0-one.out", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			out, errOut, err := openBatchOutput(tc.as, account{Name: "alice"}, "node-01", dir)
			if err != nil {
				t.Fatal(err)
			}
			defer out.Close()
			defer errOut.Close()
			if out.Name() != filepath.Join(dir, tc.wantOut) {
				t.Errorf("output %s, want %s", out.Name(), tc.wantOut)
			}
			wantErr := tc.wantOut
			if tc.want != "" {
				wantErr = tc.want
			}
			if errOut.Name() != filepath.Join(dir, wantErr) {
				t.Errorf("error %s, want %s", errOut.Name(), wantErr)
			}
			if _, err := os.Stat(filepath.Join(dir, wantErr)); err != nil {
				t.Errorf("not created: %v", err)
			}
		})
	}
}

// The Slurm command shims stay first on PATH when the spec carries a
// PATH of its own (sbatch --export=ALL sends the submitter's), or a batch
// script would not find srun; the assignment's env is left as it was.
func TestShimsFirstOnSpecPath(t *testing.T) {
	as := domain.Assignment{JobID: "j", Env: map[string]string{"PATH": "/venv/bin:/usr/bin"}}
	env := rankEnv(rankSetup{as: as, shimDir: "/shims", node: "node-01"}, domain.Rank{})
	path := ""
	for _, kv := range env {
		if p, ok := strings.CutPrefix(kv, "PATH="); ok {
			path = p // exec keeps the last
		}
	}
	if path != "/shims:/venv/bin:/usr/bin" {
		t.Errorf("PATH=%q, want the shims before the spec's PATH", path)
	}
	if as.Env["PATH"] != "/venv/bin:/usr/bin" {
		t.Errorf("the assignment's env was changed: %q", as.Env["PATH"])
	}
}

// batch.output is opened with the owner's groups, not the agent's: a
// file writable by a group the agent is in (as a raw disk is by disk, for
// an agent started from a root shell) stays closed to an owner outside
// that group.
func TestBatchOutputOpensWithTheOwnersGroupsOnly(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root")
	}
	const disk = 4242 // a group the agent is in and the owner is not
	orig, err := syscall.Getgroups()
	if err != nil {
		t.Fatal(err)
	}
	if err := syscall.Setgroups(append(slices.Clone(orig), disk)); err != nil {
		t.Skipf("cannot join a group: %v", err)
	}
	t.Cleanup(func() { _ = syscall.Setgroups(orig) })
	dir := t.TempDir()
	for _, d := range []string{filepath.Dir(dir), dir} { // the owner must reach it
		if err := os.Chmod(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	target := filepath.Join(dir, "group-writable")
	if err := os.WriteFile(target, nil, 0o660); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(target, 0, disk); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(target, 0o660); err != nil {
		t.Fatal(err)
	}
	nobody := account{Name: "nobody", Cred: &syscall.Credential{Uid: 65534, Gid: 65534, Groups: []uint32{}}}
	if f, err := openAs(target, nobody); err == nil {
		_ = f.Close()
		t.Fatal("an owner outside the group opened a file only the group may write")
	}
	member := account{Name: "nobody", Cred: &syscall.Credential{Uid: 65534, Gid: 65534, Groups: []uint32{disk}}}
	f, err := openAs(target, member)
	if err != nil {
		t.Fatalf("an owner in the group: %v", err)
	}
	_ = f.Close()
}
