package agent

import (
	"strings"

	"github.com/cockroachdb/errors"

	"github.com/lockstep-dev/lockstep/shared/contract/domain"
	"github.com/lockstep-dev/lockstep/shared/contract/subjects"
	"github.com/lockstep-dev/lockstep/shared/contract/validate"
	"github.com/lockstep-dev/lockstep/shared/core/place"
	"github.com/lockstep-dev/lockstep/shared/plumbing/store"
)

// assignmentIsFor checks that an assignment is for the job its key names,
// on this node: until it is, nothing it says about either is believed,
// not even enough to report it refused.
func assignmentIsFor(key string, as domain.Assignment, node string) error {
	switch {
	case !subjects.Token(as.JobID) || strings.ContainsAny(as.JobID, `/\`) || len(as.JobID) > 256:
		return errors.Newf("jobId: %q is not a job ID", as.JobID)
	case store.LastSegment(key) != as.JobID:
		return errors.Newf("jobId: %q does not match its key %s", as.JobID, key)
	case as.Node != node:
		return errors.Newf("node: %q is not this node (%s)", as.Node, node)
	}
	return nil
}

// checkAssignment checks an assignment read from etcd against what the
// agent knows for itself — its key, this node — before anything of it runs
// or touches the disk: an etcd value is input like any other. The job ID
// names a directory under the data dir, so it must be one path element.
// The error names the offending field.
func checkAssignment(key string, as domain.Assignment, node domain.Node) error {
	if err := assignmentIsFor(key, as, node.Name); err != nil {
		return err
	}
	switch {
	case as.Attempt < 1:
		return errors.Newf("attempt: %d is not positive", as.Attempt)
	case len(as.Command) == 0 || as.Command[0] == "":
		return errors.New("command: empty")
	case len(as.Ranks) == 0:
		return errors.New("ranks: none on this node")
	case as.Owner != "" && !accountName(as.Owner):
		return errors.Newf("owner: %q is not a user name", as.Owner)
	}
	if as.Container != nil {
		// The image, mounts and user reach the engine: the spec's rules
		// again, on what the bus delivered.
		if fes := as.Container.Check("container"); len(fes) > 0 {
			return errors.Newf("%s", validate.Join(fes))
		}
	}
	used := map[int]bool{}
	cores := map[int]bool{}
	for _, c := range place.NodeCPUs(node) {
		cores[c] = true
	}
	usedCores := map[int]bool{}
	for i, r := range as.Ranks {
		for _, g := range r.GPUs {
			if g < 0 || g >= node.GPUs {
				return errors.Newf("ranks[%d].gpus: GPU %d does not exist on this node (%d GPUs)", i, g, node.GPUs)
			}
			if used[g] {
				return errors.Newf("ranks[%d].gpus: GPU %d given to two ranks", i, g)
			}
			used[g] = true
		}
		// The cores become the rank's affinity and memory policy: only
		// this node's own, each to one rank.
		for _, c := range r.CPUs {
			if !cores[c] {
				return errors.Newf("ranks[%d].cpus: core %d is not one of this node's", i, c)
			}
			if usedCores[c] {
				return errors.Newf("ranks[%d].cpus: core %d given to two ranks", i, c)
			}
			usedCores[c] = true
		}
	}
	return nil
}

// accountName reports whether s can name a local account: the owner is
// looked up in the node's user database, whose fields are ':'-separated
// lines.
func accountName(s string) bool {
	if len(s) > 256 || strings.HasPrefix(s, "-") {
		return false
	}
	for _, r := range s {
		if r <= ' ' || r == 0x7f || r == ':' || r == '/' || r == '\\' {
			return false
		}
	}
	return true
}
