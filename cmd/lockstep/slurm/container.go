package slurm

import (
	"strings"

	"github.com/cockroachdb/errors"

	"github.com/lockstep-dev/lockstep/shared/contract/jobspec"
)

// Container is the pyxis options (NVIDIA's Slurm container plugin), as
// sites running pyxis spell them; zero when none was given.
type Container struct {
	// Image is --container-image, in the engine's spelling (pyxis's
	// enroot "registry#image" becomes "registry/image").
	Image string
	// Mounts is --container-mounts=SRC[:DST[:FLAGS]][,...].
	Mounts []jobspec.Mount
	// Workdir is --container-workdir.
	Workdir string
	// EnvNames is --container-env=NAME[,NAME...]: variables whose value
	// comes from where the job is submitted (pyxis: from the host, over
	// the image's).
	EnvNames []string
}

// given reports whether any container option was.
func (c Container) given() bool {
	return c.Image != "" || len(c.Mounts) > 0 || c.Workdir != "" || len(c.EnvNames) > 0
}

// ParseContainerImage parses --container-image as pyxis takes it,
// [USER@][REGISTRY#]IMAGE[:TAG] or a squashfs file, into an image
// reference for the node's engine: "nvcr.io#nvidia/pytorch:24.10-py3" is
// "nvcr.io/nvidia/pytorch:24.10-py3". A squashfs file and credentials in
// USER@ have no engine equivalent and are refused.
func ParseContainerImage(s string) (string, error) {
	switch {
	case s == "":
		return "", errors.New("empty image")
	case strings.HasPrefix(s, "/") || strings.HasPrefix(s, ".") || strings.HasSuffix(s, ".sqsh"):
		return "", errors.New("a squashfs file is not supported: Lockstep runs OCI images through the node's container engine")
	case strings.Contains(s, "@") && !strings.Contains(s, "@sha256:") || strings.Count(s, "@") > 1:
		return "", errors.New("USER@ (registry credentials) is not supported: the node's engine holds them")
	}
	ref := strings.Replace(s, "#", "/", 1)
	if !jobspec.ValidImage(ref) {
		return "", errors.Newf("%q is not an image reference ([registry#]name[:tag][@digest], lower-case name)", s)
	}
	return ref, nil
}

// ParseContainerMounts parses --container-mounts: a comma-separated list
// of SRC:DST[:FLAGS], or SRC alone for the same path inside. FLAGS are
// "+"-separated; ro and rw set the mode, and the propagation Lockstep's
// binds already have (rprivate, private) is accepted; others are refused.
func ParseContainerMounts(s string) ([]jobspec.Mount, error) {
	if s == "" {
		return nil, errors.New("empty mount list")
	}
	var out []jobspec.Mount
	for _, item := range strings.Split(s, ",") {
		parts := strings.Split(item, ":")
		if len(parts) > 3 || parts[0] == "" {
			return nil, errors.Newf("%q: want SRC[:DST[:FLAGS]]", item)
		}
		m := jobspec.Mount{Source: parts[0], Target: parts[0]}
		if len(parts) > 1 {
			m.Target = parts[1]
		}
		if len(parts) > 2 {
			for _, f := range strings.Split(parts[2], "+") {
				switch f {
				case "ro":
					m.ReadOnly = true
				case "rw":
					m.ReadOnly = false
				case "rprivate", "private":
				default:
					return nil, errors.Newf("%q: mount flag %q is not supported (ro, rw, rprivate)", item, f)
				}
			}
		}
		for _, p := range []string{m.Source, m.Target} {
			if !strings.HasPrefix(p, "/") {
				return nil, errors.Newf("%q: %q is not an absolute path", item, p)
			}
		}
		out = append(out, m)
	}
	if len(out) > jobspec.MaxMounts {
		return nil, errors.Newf("%d mounts, more than the %d allowed", len(out), jobspec.MaxMounts)
	}
	return out, nil
}

// parseContainerEnv parses --container-env's NAME[,NAME...].
func parseContainerEnv(s string) ([]string, error) {
	var out []string
	for _, name := range strings.Split(s, ",") {
		if !jobspec.ValidEnvName(name) {
			return nil, errors.Newf("%q is not an environment variable name", name)
		}
		out = append(out, name)
	}
	return out, nil
}

func parseWorkdir(s string) (string, error) {
	if !strings.HasPrefix(s, "/") {
		return "", errors.New("not an absolute path")
	}
	return s, nil
}

// containerJobSpec is the spec's container section of the pyxis options
// (nil when none was given); EnvNames are left to the caller, who knows
// the submitter's environment.
func (c Container) jobSpec() (*jobspec.Container, error) {
	if !c.given() {
		return nil, nil
	}
	if c.Image == "" {
		return nil, errors.New("--container-mounts, --container-workdir and --container-env need --container-image")
	}
	return &jobspec.Container{Image: c.Image, Mounts: c.Mounts, Workdir: c.Workdir}, nil
}
