package jobspec

import (
	"strconv"
	"strings"

	"github.com/cockroachdb/errors"

	"github.com/lockstep-dev/lockstep/shared/contract/slurmenv"
	"github.com/lockstep-dev/lockstep/shared/contract/validate"
)

// MaxArrayIndex is the largest array index accepted: one less than
// Slurm's largest MaxArraySize (4000001).
const MaxArrayIndex = 4_000_000

// MaxArrayTasks bounds the tasks one array expands to: admission writes
// one job record per task, so this is a cluster bound on what one
// submission may cost (Slurm's default MaxArraySize is 1001).
const MaxArrayTasks = 10_000

// MaxArrayBytes bounds an array's tasks times its spec's size: each task's
// record holds the whole spec, and the services that follow the records
// keep the pending ones in memory.
const MaxArrayBytes = 64 << 20

// ArrayRange is the indexes First..Last stepping by Step (1 when not
// given).
type ArrayRange struct{ First, Last, Step int }

// ParseArrayIndexes parses an array's index list: comma-separated
// indexes N, ranges N-M and stepped ranges N-M:S, each optionally in
// one pair of brackets ("0-15", "1,3,10-20:5"), indexes 0 to
// MaxArrayIndex. It knows no "%limit": that is Slurm's spelling of
// Array.MaxConcurrent.
func ParseArrayIndexes(s string) ([]ArrayRange, error) {
	var out []ArrayRange
	for _, tok := range strings.Split(s, ",") {
		r, err := parseArrayRange(tok)
		if err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, nil
}

func parseArrayRange(tok string) (ArrayRange, error) {
	// slurm_parse_array_tok also strips one pair of brackets.
	tok = strings.TrimSuffix(strings.TrimPrefix(tok, "["), "]")
	span, step, hasStep := strings.Cut(tok, ":")
	first, last, isRange := strings.Cut(span, "-")
	r := ArrayRange{Step: 1}
	var err error
	if r.First, err = arrayIndex(first); err != nil {
		return ArrayRange{}, errors.Wrapf(err, "array range %q", tok)
	}
	r.Last = r.First
	if isRange {
		if r.Last, err = arrayIndex(last); err != nil {
			return ArrayRange{}, errors.Wrapf(err, "array range %q", tok)
		}
		if r.Last < r.First {
			return ArrayRange{}, errors.Newf("array range %q ends before it starts", tok)
		}
	}
	if hasStep {
		if !isRange {
			return ArrayRange{}, errors.Newf("array index %q has a step but is not a range", tok)
		}
		if r.Step, err = slurmenv.NonNegativeInt(step); err != nil {
			return ArrayRange{}, errors.Wrapf(err, "array step in %q", tok)
		}
		if r.Step == 0 {
			return ArrayRange{}, errors.Newf("array step in %q must be at least 1", tok)
		}
	}
	return r, nil
}

func arrayIndex(s string) (int, error) {
	n, err := slurmenv.NonNegativeInt(s)
	if err != nil {
		return 0, err
	}
	if n > MaxArrayIndex {
		return 0, errors.Newf("index %d is more than %d", n, MaxArrayIndex)
	}
	return n, nil
}

// ArrayCount is how many tasks ranges name, an index given twice counted
// twice (as Slurm counts before it builds its bitmap).
func ArrayCount(ranges []ArrayRange) int {
	n := 0
	for _, r := range ranges {
		n += (r.Last-r.First)/r.Step + 1
	}
	return n
}

// ArrayIndexes lists the task indexes of ranges, sorted and unique, as
// Slurm's bitmap holds them. The caller bounds ArrayCount first: this
// allocates one entry per index.
func ArrayIndexes(ranges []ArrayRange) []int {
	seen := map[int]bool{}
	maxIdx := 0
	for _, r := range ranges {
		for i := r.First; i <= r.Last; i += r.Step {
			seen[i] = true
			maxIdx = max(maxIdx, i)
		}
	}
	out := make([]int, 0, len(seen))
	for i := 0; i <= maxIdx; i++ {
		if seen[i] {
			out = append(out, i)
		}
	}
	return out
}

// ArrayStep is the step of an array whose indexes are one stepped range
// (Slurm sets SLURM_ARRAY_TASK_STEP only then), and whether they are.
func ArrayStep(indexes []int) (int, bool) {
	if len(indexes) < 2 {
		return 1, len(indexes) == 1
	}
	step := indexes[1] - indexes[0]
	for i := 2; i < len(indexes); i++ {
		if indexes[i]-indexes[i-1] != step {
			return 0, false
		}
	}
	return step, true
}

// Tasks are the array's task indexes, sorted and unique. Parse has
// checked the list and its size, so on a parsed spec it does not fail.
func (a Array) Tasks() ([]int, error) {
	ranges, err := ParseArrayIndexes(a.Indexes)
	if err != nil {
		return nil, errors.Wrap(err, "array.indexes")
	}
	if n := ArrayCount(ranges); n > MaxArrayTasks {
		return nil, errors.Newf("array.indexes: %d tasks, more than the %d allowed", n, MaxArrayTasks)
	}
	return ArrayIndexes(ranges), nil
}

// arrayChecks validates array.indexes and bounds the task count.
func (s Spec) arrayChecks() []validate.FieldError {
	if s.Array == nil {
		return nil
	}
	ranges, err := ParseArrayIndexes(s.Array.Indexes)
	if err != nil {
		return []validate.FieldError{validate.Errorf("array.indexes", "%v", err)}
	}
	if n := ArrayCount(ranges); n > MaxArrayTasks {
		return []validate.FieldError{validate.Errorf("array.indexes", "names %d tasks, more than the %d allowed", n, MaxArrayTasks)}
	}
	return nil
}

// TaskID is the job ID of task index of array arrayID, as Slurm prints
// it: "job-42_7".
func TaskID(arrayID string, index int) string {
	return arrayID + "_" + strconv.Itoa(index)
}

// SplitTaskID is TaskID's inverse: ok only for an array task's ID (a
// valid base ID, "_", an index of at most MaxArrayIndex without leading
// zeros).
func SplitTaskID(id string) (arrayID string, index int, ok bool) {
	base, idx, found := strings.Cut(id, "_")
	if !found || !ValidBaseID(base) || !slurmenv.IsDigits(idx) || (len(idx) > 1 && idx[0] == '0') || len(idx) > 7 {
		return "", 0, false
	}
	n, _ := strconv.Atoi(idx)
	if n > MaxArrayIndex {
		return "", 0, false
	}
	return base, n, true
}
