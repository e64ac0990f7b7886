package reexec

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// The hand-made stand-ins for os/exec and path/filepath answer as they do.
func TestStartHelpersAnswerAsTheStandardLibrary(t *testing.T) {
	env := []string{"A=1", "B=2", "A=3", "C", "B=4", "D=5"}
	if got, want := dedupEnv(env), []string{"A=3", "B=4", "C", "D=5"}; !slices.Equal(got, want) {
		t.Errorf("dedupEnv(%q) = %q, want %q", env, got, want)
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
	exe := filepath.Join(dir, "tool")
	plain := filepath.Join(dir, "data")
	for path, mode := range map[string]os.FileMode{exe: 0o755, plain: 0o644} {
		if err := os.WriteFile(path, []byte("#!/bin/sh\n"), mode); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv("PATH", "relative:"+dir+":/nonexistent")
	if got, err := lookPath("tool"); err != nil || got != exe {
		t.Errorf("lookPath(tool) = %q, %v; want %q", got, err, exe)
	}
	if got, err := lookPath("data"); err == nil {
		t.Errorf("lookPath found %q, which is not executable", got)
	}
	if got, err := lookPath("./tool"); err != nil || got != "./tool" {
		t.Errorf("lookPath(./tool) = %q, %v: a name with a slash is used as it is", got, err)
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
