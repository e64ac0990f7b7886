// Package atomicfile replaces a file whole: a reader (or a crash) sees the
// old contents or the new, never half of them, and the new file has the
// mode asked for, whatever was at its temporary path or the umask.
package atomicfile

import (
	"os"
	"path/filepath"

	"github.com/cockroachdb/errors"
)

// Write replaces path with data, mode fileMode, creating its directory with
// dirMode. The data goes to a new temporary file of a random name beside
// it (never an existing file or a link planted there), is synced, and is
// renamed over path.
func Write(path string, data []byte, dirMode, fileMode os.FileMode) error {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, dirMode); err != nil {
		return errors.Wrapf(err, "create %s", dir)
	}
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+".*.tmp")
	if err != nil {
		return errors.Wrapf(err, "write %s", path)
	}
	defer os.Remove(tmp.Name()) // a no-op once renamed
	err = tmp.Chmod(fileMode)
	if err == nil {
		_, err = tmp.Write(data)
	}
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return errors.Wrapf(err, "write %s", tmp.Name())
	}
	return errors.Wrapf(os.Rename(tmp.Name(), path), "replace %s", path)
}
