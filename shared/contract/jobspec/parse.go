package jobspec

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"regexp"
	"time"

	"github.com/cockroachdb/errors"

	"github.com/lockstep-dev/lockstep/shared/contract/errs"
	"github.com/lockstep-dev/lockstep/shared/contract/validate"
)

// InvalidError is a spec that failed validation. Fields names every
// violation; Error() joins them into one line.
type InvalidError struct {
	Fields []validate.FieldError
}

func (e *InvalidError) Error() string { return "invalid job spec: " + validate.Join(e.Fields) }

// Parse validates raw JSON against the v1 schema and the rules a schema
// cannot express, fills every default (WithDefaults), and returns the
// spec. Any violation is an *InvalidError marked errs.ErrInvalidSpec.
func Parse(raw []byte) (Spec, error) {
	if len(raw) > MaxSpecBytes {
		return Spec{}, invalid(validate.Errorf("", "spec is %d bytes, more than the %d allowed", len(raw), MaxSpecBytes))
	}
	fes, err := schemaCheck(raw)
	if err != nil {
		return Spec{}, errors.Wrap(err, "load job spec schema")
	}
	if fes != nil {
		return Spec{}, invalid(fes...)
	}
	var s Spec
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&s); err != nil {
		// The schema accepted it but Go cannot hold it: JSON Schema calls
		// 1.0 and 1e3 integers, encoding/json will not put them in an int.
		// That is the submitter's input, not our fault: reject it, never
		// retry it.
		return Spec{}, invalid(decodeFieldError(err))
	}
	s = s.WithDefaults()
	if fes := s.semanticChecks(); fes != nil {
		return Spec{}, invalid(fes...)
	}
	if fe, ok := arraySize(s, len(raw)); !ok {
		return Spec{}, invalid(fe)
	}
	return s, nil
}

// arraySize bounds what an array's task records weigh together: each task
// is a job record holding the whole spec, so the count and the spec's size
// are bounded apart (MaxArrayTasks, MaxSpecBytes) and also multiplied.
func arraySize(s Spec, specBytes int) (validate.FieldError, bool) {
	if s.Array == nil {
		return validate.FieldError{}, true
	}
	ranges, err := ParseArrayIndexes(s.Array.Indexes)
	if err != nil {
		return validate.FieldError{}, true // arrayChecks named it
	}
	n := ArrayCount(ranges)
	if n*specBytes <= MaxArrayBytes {
		return validate.FieldError{}, true
	}
	return validate.Errorf("array.indexes", "%d tasks of a %d KiB spec are %d MiB of job records, more than the %d MiB allowed: fewer tasks, or a smaller spec",
		n, (specBytes+1023)>>10, (n*specBytes)>>20, MaxArrayBytes>>20), false
}

// decodeFieldError names the field a decoding error is about.
func decodeFieldError(err error) validate.FieldError {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		switch te.Type.Kind() {
		case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
			reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
			return validate.Errorf(te.Field, "must be an integer written without a fraction or exponent, got %s", te.Value)
		}
		if te.Type == durationType {
			return validate.Errorf(te.Field, "must be a Go duration of at most a year (90m, 2h30m), got %s", te.Value)
		}
		return validate.Errorf(te.Field, "must be %s, got %s", te.Type, te.Value)
	}
	return validate.Errorf("", "cannot decode: %v", err)
}

func invalid(fes ...validate.FieldError) error {
	return errs.MarkInvalid(&InvalidError{Fields: fes})
}

// semanticChecks are the rules JSON Schema cannot say.
func (s Spec) semanticChecks() []validate.FieldError {
	var out []validate.FieldError
	// The ID keys the job's record, and so admission's verdict: one that
	// admission would not take as the job's (claimedID) would leave a
	// client build, which leaves the schema to admission, waiting on a
	// record filed under another ID.
	if s.ID != "" && !ValidBaseID(s.ID) {
		out = append(out, validate.Errorf("id", "%q is not a DNS label (lower-case letters, digits and '-', at most 63)", s.ID))
	}
	// The schema keeps tasksPerNode ≥ 1; the client build, which leaves the
	// schema to admission, must not divide by what it did not check.
	if t := s.Gang.TasksPerNode; t > 0 && s.Gang.GPUsPerNode%t != 0 {
		out = append(out, validate.Errorf("gang.tasksPerNode",
			"%d ranks cannot share %d GPUs evenly; tasksPerNode must divide gpusPerNode", s.Gang.TasksPerNode, s.Gang.GPUsPerNode))
	}
	for _, d := range []struct {
		field string
		value Duration
	}{
		{"timeLimit", s.TimeLimit},
		{"topology.waitForSwitches", s.Topology.WaitForSwitches},
		{"topology.preferredWait", s.Topology.PreferredWait},
		{"checkpoint.gracePeriod", s.Checkpoint.GracePeriod},
	} {
		if fe, ok := checkDuration(d.field, d.value); !ok {
			out = append(out, fe)
		}
	}
	for _, d := range []struct{ field, value string }{
		{"workdir", s.Workdir},
		{"checkpoint.dir", s.Checkpoint.Dir},
	} {
		if fe, ok := CheckPath(d.field, d.value); !ok {
			out = append(out, fe)
		}
	}
	if !s.Topology.WaitForSwitches.IsZero() && s.Topology.MaxSwitches == 0 {
		out = append(out, validate.Errorf("topology.waitForSwitches", "only means something with topology.maxSwitches"))
	}
	if !s.Topology.PreferredWait.IsZero() && s.Topology.Preferred == "" {
		out = append(out, validate.Errorf("topology.preferredWait", "only means something with topology.preferred"))
	}
	out = append(out, s.dependencyChecks()...)
	out = append(out, s.arrayChecks()...)
	if s.Container != nil {
		out = append(out, s.Container.Check("container")...)
	}
	// A gang of fewer than one node is the schema's to refuse (gang.nodes),
	// not a maxSwitches the client build would blame.
	if s.Gang.Nodes >= 1 && s.Topology.MaxSwitches > s.Gang.Nodes {
		out = append(out, validate.Errorf("topology.maxSwitches", "%d is more than the gang's %d nodes", s.Topology.MaxSwitches, s.Gang.Nodes))
	}
	return out
}

// dependencyChecks bounds the IDs named in all and refuses a job that
// names itself, which could never start.
func (s Spec) dependencyChecks() []validate.FieldError {
	var out []validate.FieldError
	n := 0
	for i, d := range s.Dependencies {
		n += len(d.Jobs)
		for k, id := range d.Jobs {
			if s.ID != "" && id == s.ID {
				out = append(out, validate.Errorf(fmt.Sprintf("dependencies.%d.jobs.%d", i, k), "job %s cannot depend on itself", id))
			}
		}
	}
	if n > MaxDependencyJobs {
		out = append(out, validate.Errorf("dependencies", "names %d jobs, more than the %d allowed", n, MaxDependencyJobs))
	}
	return out
}

// checkDuration validates an optional positive duration of at most a
// year. Decoding parsed it: whether it is a duration at all was settled
// there.
func checkDuration(field string, value Duration) (validate.FieldError, bool) {
	d := value.Duration()
	switch {
	case value.IsZero():
		return validate.FieldError{}, true
	case d <= 0:
		return validate.Errorf(field, "must be positive"), false
	case d > 365*24*time.Hour:
		return validate.Errorf(field, "%s is more than a year", d), false
	}
	return validate.FieldError{}, true
}

// idPattern is the rule for an ID a submission may give its job (a DNS
// label), also in the schema. "_" is reserved: it joins an array's ID and
// a task's index (TaskID). The length (at most maxIDBytes) is checked
// apart: a bounded repeat such as {0,61} compiles into that many copies,
// which cost every process that links this package tens of µs and 44 KB
// at start.
var idPattern = regexp.MustCompile(`^[a-z0-9]([a-z0-9-]*[a-z0-9])?$`)

// maxIDBytes is a DNS label's length.
const maxIDBytes = 63

// ValidID reports whether id is a valid job ID as records, keys, subjects
// and commands name jobs: a submitted ID (ValidBaseID) or an array task's
// (TaskID).
func ValidID(id string) bool {
	if ValidBaseID(id) {
		return true
	}
	_, _, ok := SplitTaskID(id)
	return ok
}

// ValidBaseID reports whether id is valid as a submission's own ID (and
// an array's): a DNS label, so without the "_" of a task ID.
func ValidBaseID(id string) bool { return len(id) <= maxIDBytes && idPattern.MatchString(id) }

// DeriveID picks a job's ID: the spec's own, else the Nats-Msg-Id when it is
// a valid ID, else one derived from the message's stream sequence (stable
// across redeliveries of the same message).
func DeriveID(specID, msgID string, streamSeq uint64) string {
	switch {
	case specID != "":
		return specID
	case ValidBaseID(msgID):
		return msgID
	default:
		return fmt.Sprintf("job-%d", streamSeq)
	}
}
