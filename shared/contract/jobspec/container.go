package jobspec

import (
	"fmt"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/lockstep-dev/lockstep/shared/contract/validate"
)

// Container, when set on a spec, runs every rank in its own container made
// from Image by the node's container engine (docs/containers.md). The rank
// environment, pinning, GPUs, signals and logs are those of a bare rank.
type Container struct {
	// Image is an OCI image reference: [registry[:port]/]name[:tag][@digest].
	Image string `json:"image"`
	// PullPolicy is PullIfNotPresent, PullAlways or PullNever.
	PullPolicy string `json:"pullPolicy,omitempty"`
	// PullTimeout bounds the gang's pull phase: from the reservation until
	// every node has the image (default DefaultPullTimeout). The launch
	// timeout starts after it.
	PullTimeout Duration `json:"pullTimeout,omitzero"`
	// Mounts are host paths bound into every rank's container.
	Mounts []Mount `json:"mounts,omitempty"`
	// Workdir is the ranks' working directory inside the container
	// (default: the image's).
	Workdir string `json:"workdir,omitempty"`
	// Env is added to the rank environment (over the spec's env; what
	// Lockstep sets still wins).
	Env map[string]string `json:"env,omitempty"`
	// ShmSize is the size in bytes of a private /dev/shm for a node's
	// only rank (a per-node launcher such as torchrun, its workers in one
	// container). Where a node runs several ranks of the job they share
	// the host's IPC namespace (NCCL needs it) and it does not apply.
	ShmSize int64 `json:"shmSize,omitempty"`
	// User is who the ranks run as inside: empty or the job's owner (by
	// name, uid or uid:gid). Nothing else: a container is never a way to
	// run as somebody else.
	User string `json:"user,omitempty"`
}

// Mount binds Source on the node at Target in the container.
type Mount struct {
	Source   string `json:"source"`
	Target   string `json:"target"`
	ReadOnly bool   `json:"readOnly,omitempty"`
}

// Pull policies, as Kubernetes spells them.
const (
	PullIfNotPresent = "IfNotPresent"
	PullAlways       = "Always"
	PullNever        = "Never"
	// DefaultPullPolicy is container.pullPolicy's default.
	DefaultPullPolicy = PullIfNotPresent
	// DefaultPullTimeout is container.pullTimeout's default: a 20 GB image
	// over a 1 Gbit/s link with room to spare.
	DefaultPullTimeout = 10 * time.Minute
	// MaxPullTimeout bounds container.pullTimeout: GPUs held idle for
	// longer than a day waiting on a registry is a mistake.
	MaxPullTimeout = 24 * time.Hour
)

// Bounds of a container section.
const (
	MaxImageRef = 512
	MaxMounts   = 64
	MaxShmSize  = 1 << 40 // 1 TiB
	// ReservedTarget is where the agent mounts its own binary into rank
	// containers (the Slurm commands, the lifeline): no mount may go there.
	ReservedTarget = "/.lockstep"
	maxEnv         = 256
	maxEnvValue    = 64 << 10
	maxUserBytes   = 64
)

// imageRef is the distribution reference grammar (docker/distribution
// reference/regexp.go), without the normalisation the engine applies.
// Compiled on first use: it is large, and most commands check no image.
var imageRef = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^` +
		`(?:(?:[a-zA-Z0-9](?:[a-zA-Z0-9-]*[a-zA-Z0-9])?(?:\.[a-zA-Z0-9](?:[a-zA-Z0-9-]*[a-zA-Z0-9])?)*|\[[0-9a-fA-F:]+\])(?::[0-9]+)?/)?` +
		`[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*(?:/[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*)*` +
		`(?::[A-Za-z0-9_][A-Za-z0-9_.-]{0,127})?` +
		`(?:@[a-z0-9]+(?:[.+_-][a-z0-9]+)*:[0-9a-fA-F]{32,})?$`)
})

var (
	userSpec = regexp.MustCompile(`^[a-z_][a-z0-9_.-]*\$?$|^[0-9]+(:[0-9]+)?$`)
)

// ValidImage reports whether ref is an image reference the engine accepts.
func ValidImage(ref string) bool { return len(ref) <= MaxImageRef && imageRef().MatchString(ref) }

// WithDefaults fills the container's defaults.
func (c Container) WithDefaults() Container {
	if c.PullPolicy == "" {
		c.PullPolicy = DefaultPullPolicy
	}
	if c.PullTimeout.IsZero() {
		c.PullTimeout = DurationOf(DefaultPullTimeout)
	}
	return c
}

// Check validates a container section under field prefix (e.g.
// "container"). It holds every rule, the schema's too: an assignment
// carries the section past no schema, and the agent checks it again.
func (c Container) Check(prefix string) []validate.FieldError {
	var out []validate.FieldError
	f := func(name string) string { return prefix + "." + name }
	switch {
	case c.Image == "":
		out = append(out, validate.Errorf(f("image"), "is required"))
	case !ValidImage(c.Image):
		out = append(out, validate.Errorf(f("image"), "%q is not an image reference ([registry[:port]/]name[:tag][@digest], lower-case name, at most %d bytes)", c.Image, MaxImageRef))
	}
	switch c.PullPolicy {
	case "", PullIfNotPresent, PullAlways, PullNever:
	default:
		out = append(out, validate.Errorf(f("pullPolicy"), "%q is not one of %s, %s, %s", c.PullPolicy, PullIfNotPresent, PullAlways, PullNever))
	}
	if fe, ok := checkDuration(f("pullTimeout"), c.PullTimeout); !ok {
		out = append(out, fe)
	} else if d := c.PullTimeout.Duration(); d > MaxPullTimeout {
		out = append(out, validate.Errorf(f("pullTimeout"), "%s is more than the %s allowed", d, MaxPullTimeout))
	}
	if len(c.Mounts) > MaxMounts {
		out = append(out, validate.Errorf(f("mounts"), "%d mounts, more than the %d allowed", len(c.Mounts), MaxMounts))
	}
	targets := map[string]bool{}
	for i, m := range c.Mounts {
		p := fmt.Sprintf("%s.%d.", f("mounts"), i)
		for _, x := range []struct{ field, value string }{{p + "source", m.Source}, {p + "target", m.Target}} {
			if x.value == "" {
				out = append(out, validate.Errorf(x.field, "is required"))
			} else if fe, ok := CheckPath(x.field, x.value); !ok {
				out = append(out, fe)
			}
		}
		if m.Target == "/" {
			out = append(out, validate.Errorf(p+"target", "cannot be the container's root"))
		}
		if m.Target == ReservedTarget || strings.HasPrefix(m.Target, ReservedTarget+"/") {
			out = append(out, validate.Errorf(p+"target", "%s is Lockstep's own (the agent mounts srun and the rank's lifeline there)", ReservedTarget))
		}
		if targets[m.Target] && m.Target != "" {
			out = append(out, validate.Errorf(p+"target", "%q is mounted twice", m.Target))
		}
		targets[m.Target] = true
	}
	if fe, ok := CheckPath(f("workdir"), c.Workdir); !ok {
		out = append(out, fe)
	}
	if len(c.Env) > maxEnv {
		out = append(out, validate.Errorf(f("env"), "%d variables, more than the %d allowed", len(c.Env), maxEnv))
	}
	for k, v := range c.Env {
		if !ValidEnvName(k) {
			out = append(out, validate.Errorf(f("env"), "%q is not a variable name", k))
		}
		if len(v) > maxEnvValue {
			out = append(out, validate.Errorf(f("env."+k), "%d bytes, more than the %d allowed", len(v), maxEnvValue))
		}
	}
	if c.ShmSize < 0 || c.ShmSize > MaxShmSize {
		out = append(out, validate.Errorf(f("shmSize"), "%d bytes is not between 0 and %d (1 TiB)", c.ShmSize, int64(MaxShmSize)))
	}
	if c.User != "" && (len(c.User) > maxUserBytes || !userSpec.MatchString(c.User)) {
		out = append(out, validate.Errorf(f("user"), "%q is neither a user name nor uid[:gid]", c.User))
	}
	return out
}
