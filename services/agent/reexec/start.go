package reexec

import (
	"bytes"
	"fmt"
	"os"
	"slices"
	"syscall"
)

// This package starts processes with os.StartProcess, not os/exec, and
// does without strings, bufio and path/filepath: importing any of them
// puts its init behind many others (see the package comment).

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

// dedupEnv is os/exec's: of a variable set twice the last value, in the
// order of the last occurrences; an entry without "=" is kept as it is,
// an empty one dropped.
func dedupEnv(env []string) []string {
	out := make([]string, 0, len(env))
	saw := make(map[string]bool, len(env))
	for n := len(env); n > 0; n-- {
		kv := env[n-1]
		i := bytes.IndexByte([]byte(kv), '=')
		if i == 0 {
			// A name that starts with "=" (Windows has such): to the next.
			i = bytes.IndexByte([]byte(kv[1:]), '=') + 1
		}
		if i < 0 {
			if kv != "" {
				out = append(out, kv)
			}
			continue
		}
		if name := kv[:i]; !saw[name] {
			saw[name] = true
			out = append(out, kv)
		}
	}
	slices.Reverse(out)
	return out
}

// lookPath is os/exec's LookPath on Linux: a name with a slash as it is
// (if executable), else the first executable file of that name in $PATH,
// an empty element meaning the current directory; a match found through a
// relative directory is refused, as os/exec refuses it (ErrDot). Unlike
// os/exec it joins a $PATH directory and the name without cleaning the
// result (a "/a/../b" entry is left to the kernel to resolve).
func lookPath(name string) (string, error) {
	if bytes.IndexByte([]byte(name), '/') >= 0 {
		if err := executable(name); err != nil {
			return "", fmt.Errorf("exec: %q: %w", name, err)
		}
		return name, nil
	}
	for dir := range bytes.SplitSeq([]byte(os.Getenv("PATH")), []byte(":")) {
		if len(dir) == 0 {
			dir = []byte(".")
		}
		path := string(dir) + "/" + name
		if executable(path) != nil {
			continue
		}
		if dir[0] != '/' {
			return "", fmt.Errorf("exec: %q cannot run executable found relative to current directory", path)
		}
		return path, nil
	}
	return "", fmt.Errorf("exec: %q: executable file not found in $PATH", name)
}

// executable is os/exec's test: not a directory, and executable by this
// process's effective user (faccessat with AT_EACCESS), or by anyone where
// the kernel cannot say.
func executable(path string) error {
	st, err := os.Stat(path)
	if err != nil {
		return err
	}
	if st.IsDir() {
		return syscall.EISDIR
	}
	switch err := syscall.Faccessat(atFDCWD, path, xOK, atEaccess); err {
	case syscall.ENOSYS, syscall.EPERM, syscall.EINVAL:
		if st.Mode().Perm()&0o111 != 0 {
			return nil
		}
		return syscall.EACCES
	default:
		return err
	}
}

// faccessat's arguments (linux/fcntl.h, unistd.h), which package syscall
// does not name.
const (
	atFDCWD   = -0x64
	atEaccess = 0x200
	xOK       = 0x1
)
