package jobspec

import (
	"path"
	"regexp"
	"strings"

	"github.com/lockstep-dev/lockstep/shared/contract/validate"
)

// CheckPath validates an optional directory the agent will use on every
// node of the gang (workdir, checkpoint.dir). The agent runs ranks there
// and hands it to them in the environment, so it must say exactly what it
// looks like: absolute, clean (no "." or ".." elements, no doubled or
// trailing slash, which is what path.Clean would change) and free of
// control characters, which have no business in a path and can carry
// terminal escapes into logs and `describe`.
func CheckPath(field, p string) (validate.FieldError, bool) {
	if p == "" {
		return validate.FieldError{}, true
	}
	if i := strings.IndexFunc(p, isControl); i >= 0 {
		return validate.Errorf(field, "control character %U at byte %d; a path may not contain one", []rune(p[i:])[0], i), false
	}
	if !strings.HasPrefix(p, "/") {
		return validate.Errorf(field, "%q is relative; it must be an absolute path", p), false
	}
	for _, el := range strings.Split(p, "/") {
		if el == ".." {
			return validate.Errorf(field, "%q has a \"..\" element; it must name its directory directly", p), false
		}
	}
	if c := path.Clean(p); c != p {
		return validate.Errorf(field, "%q is not a clean path; write %q", p, c), false
	}
	return validate.FieldError{}, true
}

// envNamePattern is the env name rule, also in the schema (env and
// container.env property names), with its length (at most
// maxEnvNameBytes) checked apart (see idPattern).
var envNamePattern = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

const maxEnvNameBytes = 128

// ValidEnvName reports whether name may name a variable of a job's
// environment: ^[A-Za-z_][A-Za-z0-9_]{0,127}$.
func ValidEnvName(name string) bool {
	return len(name) <= maxEnvNameBytes && envNamePattern.MatchString(name)
}

// isControl matches C0 controls (NUL included), DEL and C1 controls.
func isControl(r rune) bool { return r < 0x20 || (r >= 0x7f && r < 0xa0) }
