package agent

import (
	"io/fs"
	"path"
	"strconv"
	"strings"

	"github.com/cockroachdb/errors"

	"github.com/lockstep-dev/lockstep/services/agent/containers"
	"github.com/lockstep-dev/lockstep/shared/contract/jobspec"
)

// checkMountSources allows a container job's bind mounts only from under
// the trees this node's admin named (Config.ContainerMountsUnder), and
// only through no symbolic link. The engine resolves a mount's source as
// root, so without this a user could mount any host path, another user's
// home included (its 0700 parent no obstacle to root), or a link in their
// own directory pointing anywhere. lstat is os.Lstat outside tests.
//
// A user who owns a directory inside an allowed tree could still swap one
// of its components for a link between this check and the engine's mount;
// docs/containers.md says to allow trees users cannot write into, or data
// only they own, where that matters.
func checkMountSources(mounts []jobspec.Mount, under []string, lstat func(string) (fs.FileInfo, error)) error {
	for i, m := range mounts {
		field := "container.mounts." + strconv.Itoa(i) + ".source"
		src := path.Clean(m.Source)
		root, ok := mountRoot(src, under)
		if !ok {
			if len(under) == 0 {
				return errors.Newf("%s: %s: this node allows no host mounts (its agent's --container-mounts-under names none)", field, src)
			}
			return errors.Newf("%s: %s is not under a tree this node allows mounts from (%s)", field, src, strings.Join(under, ", "))
		}
		// Every component from the allowed root down, the root included.
		for p := src; ; p = path.Dir(p) {
			fi, err := lstat(p)
			if err != nil {
				return errors.Wrapf(err, "%s: %s", field, src)
			}
			if fi.Mode()&fs.ModeSymlink != 0 {
				return errors.Newf("%s: %s is a symbolic link (mount what it points to, if that is allowed)", field, p)
			}
			if p == root {
				break
			}
		}
	}
	return nil
}

// mountRoot is the allowed tree src lies in (itself or below it).
func mountRoot(src string, under []string) (string, bool) {
	for _, u := range under {
		u = path.Clean(u)
		if containers.Within(src, u) {
			return u, true
		}
	}
	return "", false
}
