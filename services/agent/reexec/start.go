package reexec

import (
	"bytes"
	"fmt"
	"os"
)

// This package starts processes with os.StartProcess, not os/exec, and
// does without strings, bufio and path/filepath: importing any of them
// puts its init behind some 170 others (see the package comment).

// startProcess starts path with argv as os/exec's Cmd.Start does for a
// command with Path set: standard input on /dev/null (attr.Files[0] is
// set here), and of a variable set twice in attr.Env the last value.
func startProcess(path string, argv []string, attr *os.ProcAttr) (*os.Process, error) {
	null, err := os.Open(os.DevNull)
	if err != nil {
		return nil, err
	}
	defer null.Close()
	attr.Files[0] = null
	if attr.Env != nil {
		attr.Env = dedupEnv(attr.Env)
	}
	return os.StartProcess(path, argv, attr)
}

// dedupEnv keeps the last value of each variable, in the order of the
// variables' first appearance (as os/exec does).
func dedupEnv(env []string) []string {
	last := make(map[string]int, len(env))
	for i, kv := range env {
		last[envName(kv)] = i
	}
	out := make([]string, 0, len(last))
	seen := make(map[string]bool, len(last))
	for _, kv := range env {
		name := envName(kv)
		if !seen[name] {
			seen[name] = true
			out = append(out, env[last[name]])
		}
	}
	return out
}

func envName(kv string) string {
	if i := bytes.IndexByte([]byte(kv), '='); i > 0 {
		return kv[:i]
	}
	return kv
}

// lookPath is exec.LookPath: a name with a slash as it is, else the first
// executable regular file of that name in a directory of $PATH (relative
// directories skipped, as os/exec refuses what they would find).
func lookPath(name string) (string, error) {
	if bytes.IndexByte([]byte(name), '/') >= 0 {
		return name, nil
	}
	for dir := range bytes.SplitSeq([]byte(os.Getenv("PATH")), []byte(":")) {
		if len(dir) == 0 || dir[0] != '/' {
			continue
		}
		path := string(dir) + "/" + name
		if st, err := os.Stat(path); err == nil && st.Mode().IsRegular() && st.Mode().Perm()&0o111 != 0 {
			return path, nil
		}
	}
	return "", fmt.Errorf("exec: %q: executable file not found in $PATH", name)
}
