package jobspec

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/cockroachdb/errors"
)

func TestParseArray(t *testing.T) {
	s, err := Parse([]byte(`{"id":"sweep","gang":{"nodes":1,"gpusPerNode":1},"command":["x"],"array":{"indexes":"0-15:4,3,3","maxConcurrent":2}}`))
	if err != nil {
		t.Fatal(err)
	}
	if s.Array == nil || s.Array.MaxConcurrent != 2 {
		t.Fatalf("array lost: %+v", s.Array)
	}
	got, err := s.Array.Tasks()
	if err != nil || !slices.Equal(got, []int{0, 3, 4, 8, 12}) {
		t.Errorf("Tasks() = %v, %v", got, err)
	}
	// Exactly the bound is allowed.
	if _, err := Parse([]byte(`{"gang":{"nodes":1,"gpusPerNode":1},"command":["x"],"array":{"indexes":"0-9999"}}`)); err != nil {
		t.Errorf("%d tasks refused: %v", MaxArrayTasks, err)
	}
	// A sparse array far out is fine: the bound is on tasks, not indexes.
	if _, err := Parse([]byte(`{"gang":{"nodes":1,"gpusPerNode":1},"command":["x"],"array":{"indexes":"0,4000000"}}`)); err != nil {
		t.Errorf("sparse array refused: %v", err)
	}
}

// Each task's record holds the whole spec: 10,000 tasks of a spec near
// the size bound would be gigabytes of records, held by every service
// that follows them. The product is bounded too, the field named.
func TestParseArrayBoundsTasksTimesSpecSize(t *testing.T) {
	spec := func(indexes string, pad int) []byte {
		v := strings.Repeat("x", pad/4) // an env value is at most 64 KiB
		return []byte(`{"gang":{"nodes":1,"gpusPerNode":1},"command":["x"],"env":{"A":"` + v + `","B":"` + v + `","C":"` + v + `","D":"` + v + `"},"array":{"indexes":"` + indexes + `"}}`)
	}
	raw := spec("0-9999", 200<<10)
	_, err := Parse(raw)
	var ie *InvalidError
	if !errors.As(err, &ie) || len(ie.Fields) != 1 || ie.Fields[0].Field != "array.indexes" || !strings.Contains(ie.Fields[0].Message, "MiB of job records") {
		t.Fatalf("10,000 tasks of a %d KiB spec: %v", len(raw)>>10, err)
	}
	// The same spec with as many tasks as fit is accepted.
	if fit := MaxArrayBytes / len(raw); fit > 1 {
		if _, err := Parse(spec(fmt.Sprintf("0-%d", fit-1), 200<<10)); err != nil {
			t.Errorf("%d tasks of the same spec refused: %v", fit, err)
		}
	}
}

func TestParseArrayIndexes(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []int
	}{
		{"0-5", []int{0, 1, 2, 3, 4, 5}},
		{"1,3,10-20:5", []int{1, 3, 10, 15, 20}},
		{"[1-3]", []int{1, 2, 3}},
		{"7", []int{7}},
	} {
		r, err := ParseArrayIndexes(tc.in)
		if err != nil || !slices.Equal(ArrayIndexes(r), tc.want) {
			t.Errorf("%q: %v %v, want %v", tc.in, ArrayIndexes(r), err, tc.want)
		}
	}
	for _, bad := range []string{"", "-1", "1-", "5-3", "1-3:0", "1:2", "a", "1,,2", "0-4000001", "1-3:", "1%2", "99999999999"} {
		if _, err := ParseArrayIndexes(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

func TestArrayStep(t *testing.T) {
	for _, tc := range []struct {
		in   []int
		step int
		ok   bool
	}{
		{[]int{0, 1, 2}, 1, true},
		{[]int{1, 5, 9}, 4, true},
		{[]int{7}, 1, true},
		{[]int{1, 2, 4}, 0, false},
		{nil, 1, false},
	} {
		step, ok := ArrayStep(tc.in)
		if ok != tc.ok || (ok && step != tc.step) {
			t.Errorf("ArrayStep(%v) = %d %v, want %d %v", tc.in, step, ok, tc.step, tc.ok)
		}
	}
}

func TestTaskIDs(t *testing.T) {
	if id := TaskID("job-42", 7); id != "job-42_7" {
		t.Errorf("TaskID = %s", id)
	}
	for _, tc := range []struct {
		id    string
		base  string
		index int
		ok    bool
	}{
		{"job-42_7", "job-42", 7, true},
		{"a_0", "a", 0, true},
		{"a_4000000", "a", 4000000, true},
		{"a_4000001", "", 0, false},
		{"a_07", "", 0, false},
		{"a_", "", 0, false},
		{"_3", "", 0, false},
		{"a_3_4", "", 0, false},
		{"A_3", "", 0, false},
		{"job-42", "", 0, false},
		{"a_-1", "", 0, false},
		{strings.Repeat("a", 63) + "_1", strings.Repeat("a", 63), 1, true},
		{strings.Repeat("a", 64) + "_1", "", 0, false},
	} {
		base, idx, ok := SplitTaskID(tc.id)
		if ok != tc.ok || base != tc.base || idx != tc.index {
			t.Errorf("SplitTaskID(%q) = %q %d %v", tc.id, base, idx, ok)
		}
		// Read back, a task ID is a job ID; submitted, it is not.
		if ValidID(tc.id) != (tc.ok || ValidBaseID(tc.id)) {
			t.Errorf("ValidID(%q) = %v", tc.id, ValidID(tc.id))
		}
		if tc.ok && ValidBaseID(tc.id) {
			t.Errorf("ValidBaseID(%q): a task ID is not a submission's ID", tc.id)
		}
	}
	// A Nats-Msg-Id shaped like a task ID is not taken as a job's ID: it
	// would collide with the task of an array.
	if got := DeriveID("", "sweep_3", 9); got != "job-9" {
		t.Errorf("DeriveID took a task-shaped msg id: %s", got)
	}
}
