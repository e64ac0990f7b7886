package agent

import (
	"io"
	"os"
	"syscall"

	"github.com/cockroachdb/errors"
	"golang.org/x/sys/unix"
)

// Files in a job's directory are the job owner's to make: a rank can put
// a symbolic link, a FIFO or a device where the agent, often root, expects
// a file of its own. These open such paths only as what they should be: a
// link is not followed, a FIFO does not block, anything but a regular file
// is refused.

// openUserFile opens path (flags as os.OpenFile's, mode for a new file)
// without following a final symbolic link and only if it is a regular
// file with one name: a hard link the owner planted (to /etc/passwd or
// /etc/shadow, say, where the kernel's protected_hardlinks is off) is a
// regular file too, which the agent, root, would append to or read. Opened
// for writing, it must also be the agent's own.
func openUserFile(path string, flags int, mode os.FileMode) (*os.File, error) {
	f, err := os.OpenFile(path, flags|unix.O_NOFOLLOW|unix.O_NONBLOCK, mode)
	if err != nil {
		return nil, err
	}
	if err := checkUserFile(f, path, flags); err != nil {
		_ = f.Close()
		return nil, err
	}
	return f, nil
}

// checkUserFile refuses what openUserFile opened unless it is a regular
// file with one name and, opened for writing, the agent's own.
func checkUserFile(f *os.File, path string, flags int) error {
	info, err := f.Stat()
	if err != nil {
		return errors.Wrapf(err, "stat %s", path)
	}
	if !info.Mode().IsRegular() {
		return errors.Newf("%s is not a regular file (%s)", path, info.Mode().Type())
	}
	st, ok := info.Sys().(*syscall.Stat_t)
	switch {
	case !ok:
		return nil
	case st.Nlink != 1:
		return errors.Newf("%s has %d names (a hard link): not opened", path, st.Nlink)
	case flags&(os.O_WRONLY|os.O_RDWR) != 0 && int(st.Uid) != os.Geteuid():
		return errors.Newf("%s belongs to uid %d, not this agent: not written", path, st.Uid)
	}
	return nil
}

// readUserFile reads at most limit bytes of the regular file at path (a
// longer one is an error: nothing the agent reads there is large).
func readUserFile(path string, limit int64) ([]byte, error) {
	f, err := openUserFile(path, os.O_RDONLY, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	raw, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err == nil && int64(len(raw)) > limit {
		err = errors.Newf("%s is larger than %d bytes", path, limit)
	}
	return raw, err
}
