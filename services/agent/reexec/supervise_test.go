package reexec

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestCredArgRoundTrips(t *testing.T) {
	for _, s := range []string{"-", "65534:65534:", "1000:100:100,27,1001"} {
		c, err := parseCredArg(s)
		if err != nil || CredArg(c) != s {
			t.Errorf("%q: %v %v", s, CredArg(c), err)
		}
	}
	for _, bad := range []string{"", "0", "a:b:c", "1:2:x"} {
		if _, err := parseCredArg(bad); err == nil {
			t.Errorf("%q parsed", bad)
		}
	}
	if c, _ := parseCredArg("1000:100:"); c == nil || c.Uid != 1000 || c.Gid != 100 || len(c.Groups) != 0 {
		t.Errorf("1000:100: parsed as %+v", c)
	}
}

func TestRankEnvRoundTrips(t *testing.T) {
	env := []string{"A=1", "B=two words", "C=", "D=x=y"}
	got, err := readRankEnv(strings.NewReader(string(EncodeRankEnv(env))))
	if err != nil || strings.Join(got, "|") != strings.Join(env, "|") {
		t.Fatalf("got %q, %v", got, err)
	}
	if _, err := readRankEnv(strings.NewReader("A=1\x00B=2")); err == nil {
		t.Error("an environment cut mid-variable was read")
	}
}

func TestReadStatus(t *testing.T) {
	for in, want := range map[string]string{
		"ok 42\n":                     "",
		"error: exec: no such file\n": "exec: no such file",
		"":                            "rank supervisor gave no answer: EOF",
		"hello\n":                     `rank supervisor answered "hello"`,
	} {
		pid, err := ReadStatus(strings.NewReader(in))
		switch {
		case want == "" && (err != nil || pid != 42):
			t.Errorf("%q: %d, %v", in, pid, err)
		case want != "" && (err == nil || err.Error() != want):
			t.Errorf("%q: %v, want %q", in, err, want)
		}
	}
}

// The supervisor, started without its pipes as by anyone but the agent,
// runs nothing, even with one of them open (before the check, an open
// environment descriptor alone let the rank start).
func TestSupervisorNeedsItsPipes(t *testing.T) {
	devNull, err := os.Open(os.DevNull)
	if err != nil {
		t.Fatal(err)
	}
	defer devNull.Close()
	for name, files := range map[string][]*os.File{
		"none":             nil,
		"environment only": {nil, nil, devNull},
	} {
		t.Run(name, func(t *testing.T) {
			mark := filepath.Join(t.TempDir(), "ran")
			r, w, err := os.Pipe()
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			p, err := os.StartProcess("/proc/self/exe", []string{SupervisorArg0, "-", "/bin/sh", "sh", "-c", "touch " + mark},
				&os.ProcAttr{Files: append([]*os.File{nil, nil, w}, files...)})
			_ = w.Close()
			if err != nil {
				t.Fatal(err)
			}
			out, _ := io.ReadAll(r)
			st, err := p.Wait()
			if err != nil {
				t.Fatal(err)
			}
			_, statErr := os.Stat(mark)
			if st.ExitCode() != 127 || statErr == nil || !strings.Contains(string(out), "started without its pipes") {
				t.Errorf("exit %d, rank ran %v, stderr %q", st.ExitCode(), statErr == nil, out)
			}
		})
	}
}
