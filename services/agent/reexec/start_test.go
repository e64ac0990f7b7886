package reexec

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
)

// The hand-made stand-ins for os/exec and path/filepath answer as they do
// (this test may import them: a test binary's init order is its own).
func TestStartHelpersAnswerAsTheStandardLibrary(t *testing.T) {
	env := []string{"A=1", "B=2", "A=3", "C", "", "B=4", "=W=1", "D=5", "C", "=W=2", "=X=3"}
	cmd := exec.Command("/bin/true")
	cmd.Env = env
	if got, want := dedupEnv(env), cmd.Environ(); !slices.Equal(got, want) {
		t.Errorf("dedupEnv(%q) = %q, os/exec says %q", env, got, want)
	}
	for _, p := range []string{"/sys/fs/cgroup/lockstep/agent/rank-0", "/a", "/", "/a/b"} {
		if got, want := parentDir(p), filepath.Dir(p); got != want {
			t.Errorf("parentDir(%q) = %q, filepath.Dir says %q", p, got, want)
		}
	}
	for _, p := range []string{"/usr/bin/lockstep-lifeline", "lockstep-lifeline", "./x/y"} {
		if got, want := baseName(p), filepath.Base(p); got != want {
			t.Errorf("baseName(%q) = %q, filepath.Base says %q", p, got, want)
		}
	}

	dir := t.TempDir()
	for name, mode := range map[string]os.FileMode{"tool": 0o755, "data": 0o644} {
		for _, d := range []string{"bin", "rel", "bin2"} {
			if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, d, name), []byte("#!/bin/sh\n"), mode); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := os.Mkdir(filepath.Join(dir, "bin", "adir"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Chdir(dir)
	for _, path := range []string{
		filepath.Join(dir, "bin") + ":/nonexistent",
		"/nonexistent:" + filepath.Join(dir, "bin2") + ":" + filepath.Join(dir, "bin"),
		"rel:" + filepath.Join(dir, "bin"), // found relative first: refused
		":" + filepath.Join(dir, "bin"),    // "" is ".": nothing there
		"bin2:rel",
	} {
		t.Setenv("PATH", path)
		for _, name := range []string{"tool", "data", "adir", "missing", "./bin/tool", "./bin/data", filepath.Join(dir, "bin", "tool")} {
			// (os/exec returns a path it refuses with its error.)
			want, wantErr := exec.LookPath(name)
			got, err := lookPath(name)
			if (err == nil) != (wantErr == nil) || (err == nil && got != want) {
				t.Errorf("PATH=%s: lookPath(%q) = %q, %v; os/exec says %q, %v", path, name, got, err, want, wantErr)
			}
		}
	}
}

// A process started by startProcess reads /dev/null, not the caller's
// standard input, and sees the last value of a variable set twice.
func TestStartProcessGivesTheRankNullInputAndOneValueEach(t *testing.T) {
	out := filepath.Join(t.TempDir(), "out")
	f, err := os.Create(out)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	p, err := startProcess("/bin/sh", []string{"sh", "-c", `cat; echo "$V"`},
		&os.ProcAttr{Env: []string{"V=old", "V=new"}, Files: []*os.File{nil, f, os.Stderr}})
	if err != nil {
		t.Fatal(err)
	}
	if st, err := p.Wait(); err != nil || !st.Success() {
		t.Fatalf("%v %v", st, err)
	}
	if b, _ := os.ReadFile(out); string(b) != "new\n" {
		t.Errorf("the process wrote %q, want %q", b, "new\n")
	}
}
