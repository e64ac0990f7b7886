package jobspec

import (
	"encoding/json"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/errors"

	"github.com/lockstep-dev/lockstep/schemas"
	"github.com/lockstep-dev/lockstep/shared/contract/errs"
)

func TestParseFillsDefaults(t *testing.T) {
	s, err := Parse([]byte(`{"gang":{"nodes":2,"gpusPerNode":8},"command":["train.py"]}`))
	if err != nil {
		t.Fatal(err)
	}
	if s.Queue != "default" || s.Gang.TasksPerNode != 8 || s.MaxRestarts() != 3 || s.Priority != 0 {
		t.Errorf("defaults not filled: %+v", s)
	}
	if s.GPUs() != 16 || s.Ranks() != 16 || s.GPUsPerTask() != 1 {
		t.Errorf("derived counts wrong: gpus %d ranks %d per task %d", s.GPUs(), s.Ranks(), s.GPUsPerTask())
	}
}

func TestParseKeepsExplicitValues(t *testing.T) {
	s, err := Parse([]byte(`{"id":"a-1","name":"n","queue":"research","priority":7,
		"gang":{"nodes":1,"gpusPerNode":8,"tasksPerNode":2,"cpusPerTask":4},
		"command":["x"],"env":{"A":"b"},"timeLimit":"1h30m","restartPolicy":{"maxRestarts":0}}`))
	if err != nil {
		t.Fatal(err)
	}
	if s.ID != "a-1" || s.Queue != "research" || s.Priority != 7 || s.Gang.TasksPerNode != 2 ||
		s.GPUsPerTask() != 4 || s.MaxRestarts() != 0 || s.TimeLimit.Duration().Minutes() != 90 || s.Env["A"] != "b" {
		t.Errorf("explicit values lost: %+v", s)
	}
}

// Durations are parsed once, into typed fields, and re-encode as written.
func TestParseDurations(t *testing.T) {
	raw := `{"gang":{"nodes":2,"gpusPerNode":8},"command":["x"],"timeLimit":"90m",
		"topology":{"maxSwitches":1,"waitForSwitches":"1.5h","preferred":"spine","preferredWait":"250ms"},
		"checkpoint":{"gracePeriod":"45s"}}`
	s, err := Parse([]byte(raw))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		field string
		got   Duration
		want  time.Duration
		text  string
	}{
		{"timeLimit", s.TimeLimit, 90 * time.Minute, "90m"},
		{"topology.waitForSwitches", s.Topology.WaitForSwitches, 90 * time.Minute, "1.5h"},
		{"topology.preferredWait", s.Topology.PreferredWait, 250 * time.Millisecond, "250ms"},
		{"checkpoint.gracePeriod", s.Checkpoint.GracePeriod, 45 * time.Second, "45s"},
	} {
		if c.got.Duration() != c.want || c.got.String() != c.text {
			t.Errorf("%s = %v (%q), want %v (%q)", c.field, c.got.Duration(), c.got, c.want, c.text)
		}
	}
	enc, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"timeLimit":"90m"`, `"waitForSwitches":"1.5h"`, `"preferredWait":"250ms"`, `"gracePeriod":"45s"`} {
		if !strings.Contains(string(enc), want) {
			t.Errorf("re-encoded spec lacks %s: %s", want, enc)
		}
	}
	// An absent duration stays absent.
	s, err = Parse([]byte(`{"gang":{"nodes":1,"gpusPerNode":1},"command":["x"]}`))
	if err != nil {
		t.Fatal(err)
	}
	if !s.TimeLimit.IsZero() || s.TimeLimit.Duration() != 0 || !s.Topology.PreferredWait.IsZero() {
		t.Errorf("absent durations are set: %+v", s)
	}
	if enc, _ := json.Marshal(s); strings.Contains(string(enc), "timeLimit") || strings.Contains(string(enc), "preferredWait") {
		t.Errorf("absent durations are written: %s", enc)
	}
}

// A spec read back from a job record (no Parse) gets its durations parsed
// by decoding; an empty one, which Parse refuses, reads as absent.
func TestRecordDurationsDecode(t *testing.T) {
	var s Spec
	err := json.Unmarshal([]byte(`{"gang":{"nodes":1,"gpusPerNode":8,"tasksPerNode":8},"command":["x"],
		"timeLimit":"2h","topology":{"preferredWait":""},"checkpoint":{"gracePeriod":null}}`), &s)
	if err != nil {
		t.Fatal(err)
	}
	if s.TimeLimit.Duration() != 2*time.Hour || !s.Topology.PreferredWait.IsZero() || !s.Checkpoint.GracePeriod.IsZero() {
		t.Errorf("decoded %+v", s)
	}
	if err := json.Unmarshal([]byte(`{"timeLimit":"soon"}`), &s); err == nil {
		t.Error("a duration Go cannot parse decoded")
	}
}

func TestDurationOf(t *testing.T) {
	for d, want := range map[time.Duration]string{0: "", 90 * time.Minute: "1h30m0s", 1500 * time.Nanosecond: "1.5us"} {
		if got := DurationOf(d); got.String() != want || got.Duration() != d || got.IsZero() != (d == 0) {
			t.Errorf("DurationOf(%v) = %q (%v)", d, got, got.Duration())
		}
	}
}

type badSpec struct {
	name, spec, field string
}

// badSpecs are bad inputs with the field their error must name; they are
// also seeds of FuzzParse's corpus.
func badSpecs() []badSpec {
	return []badSpec{
		{"malformed JSON", `{"gang":`, "malformed JSON"},
		{"not an object", `[1,2]`, "object"},
		{"unknown field", `{"gang":{"nodes":1,"gpusPerNode":1},"command":["x"],"colour":"red"}`, "colour"},
		{"unknown gang field", `{"gang":{"nodes":1,"gpusPerNode":1,"gpus":3},"command":["x"]}`, "gpus"},
		{"missing command", `{"gang":{"nodes":1,"gpusPerNode":1}}`, "command"},
		{"empty command", `{"gang":{"nodes":1,"gpusPerNode":1},"command":[]}`, "command"},
		{"empty argv0", `{"gang":{"nodes":1,"gpusPerNode":1},"command":[""]}`, "command.0"},
		{"missing gang", `{"command":["x"]}`, "gang"},
		{"zero nodes", `{"gang":{"nodes":0,"gpusPerNode":1},"command":["x"]}`, "gang.nodes"},
		{"negative gpus", `{"gang":{"nodes":1,"gpusPerNode":-8},"command":["x"]}`, "gang.gpusPerNode"},
		{"absurd nodes", `{"gang":{"nodes":100000000,"gpusPerNode":8},"command":["x"]}`, "gang.nodes"},
		{"fractional nodes", `{"gang":{"nodes":1.5,"gpusPerNode":8},"command":["x"]}`, "gang.nodes"},
		{"tasks do not divide gpus", `{"gang":{"nodes":1,"gpusPerNode":8,"tasksPerNode":3},"command":["x"]}`, "gang.tasksPerNode"},
		{"invalid id", `{"id":"Bad_ID!","gang":{"nodes":1,"gpusPerNode":1},"command":["x"]}`, "id"},
		{"id too long", `{"id":"` + strings.Repeat("a", 64) + `","gang":{"nodes":1,"gpusPerNode":1},"command":["x"]}`, "id"},
		{"bad time limit", `{"gang":{"nodes":1,"gpusPerNode":1},"command":["x"],"timeLimit":"soon"}`, "timeLimit"},
		// Durations are parsed once, when the spec is decoded: one the
		// schema's pattern lets through but Go cannot hold is refused there,
		// naming its field.
		{"time limit overflows", `{"gang":{"nodes":1,"gpusPerNode":1},"command":["x"],"timeLimit":"9999999999h"}`, "timeLimit: must be a Go duration"},
		{"switch wait overflows", `{"gang":{"nodes":2,"gpusPerNode":1},"command":["x"],"topology":{"maxSwitches":1,"waitForSwitches":"99999999999999999999ns"}}`, "topology.waitForSwitches: must be a Go duration"},
		{"time limit over a year", `{"gang":{"nodes":1,"gpusPerNode":1},"command":["x"],"timeLimit":"8761h"}`, "timeLimit: 8761h0m0s is more than a year"},
		{"zero grace period", `{"gang":{"nodes":1,"gpusPerNode":1},"command":["x"],"checkpoint":{"gracePeriod":"0s"}}`, "checkpoint.gracePeriod: must be positive"},
		{"preferred wait without preferred", `{"gang":{"nodes":1,"gpusPerNode":1},"command":["x"],"topology":{"preferredWait":"1m"}}`, "topology.preferredWait: only means something"},
		{"bad env name", `{"gang":{"nodes":1,"gpusPerNode":1},"command":["x"],"env":{"1X":"y"}}`, "env"},
		{"env not string", `{"gang":{"nodes":1,"gpusPerNode":1},"command":["x"],"env":{"X":1}}`, "env.X"},
		{"priority out of range", `{"gang":{"nodes":1,"gpusPerNode":1},"command":["x"],"priority":1e12}`, "priority"},
		// JSON Schema calls 1.0 an integer; Go cannot decode it into one.
		// Before, that was an internal error admission retried for ever.
		{"integer-valued float nodes", `{"gang":{"nodes":1.0,"gpusPerNode":8},"command":["x"]}`, "gang.nodes: must be an integer"},
		{"exponent priority", `{"gang":{"nodes":1,"gpusPerNode":8},"command":["x"],"priority":1e3}`, "priority: must be an integer"},
		{"float maxRestarts", `{"gang":{"nodes":1,"gpusPerNode":8},"command":["x"],"restartPolicy":{"maxRestarts":2.0}}`, "restartPolicy.maxRestarts: must be an integer"},
		{"workdir relative", `{"gang":{"nodes":1,"gpusPerNode":1},"command":["x"],"workdir":"x/y"}`, "workdir"},
		{"workdir dotdot", `{"gang":{"nodes":1,"gpusPerNode":1},"command":["x"],"workdir":"/x/../../../etc"}`, `workdir: "/x/../../../etc" has a ".." element`},
		{"workdir trailing dotdot", `{"gang":{"nodes":1,"gpusPerNode":1},"command":["x"],"workdir":"/x/.."}`, "workdir"},
		{"workdir NUL", `{"gang":{"nodes":1,"gpusPerNode":1},"command":["x"],"workdir":"/x\u0000y"}`, "workdir: control character"},
		{"workdir escape", `{"gang":{"nodes":1,"gpusPerNode":1},"command":["x"],"workdir":"/x\u001b[2Jy"}`, "workdir: control character"},
		{"workdir unclean", `{"gang":{"nodes":1,"gpusPerNode":1},"command":["x"],"workdir":"/x//y/./z/"}`, `write "/x/y/z"`},
		{"checkpoint dir relative", `{"gang":{"nodes":1,"gpusPerNode":1},"command":["x"],"checkpoint":{"dir":"ckpt"}}`, "checkpoint.dir"},
		{"checkpoint dir dotdot", `{"gang":{"nodes":1,"gpusPerNode":1},"command":["x"],"checkpoint":{"dir":"/ckpt/../../root"}}`, `checkpoint.dir: "/ckpt/../../root" has a ".." element`},
		{"checkpoint dir newline", `{"gang":{"nodes":1,"gpusPerNode":1},"command":["x"],"checkpoint":{"dir":"/ckpt\n"}}`, "checkpoint.dir: control character"},
		{"gpuType empty", `{"gang":{"nodes":1,"gpusPerNode":1,"gpuType":""},"command":["x"]}`, "gang.gpuType"},
		{"gpuType punctuation only", `{"gang":{"nodes":1,"gpusPerNode":1,"gpuType":"-"},"command":["x"]}`, "gang.gpuType"},
		{"gpuType newline", `{"gang":{"nodes":1,"gpusPerNode":1,"gpuType":"H100\n"},"command":["x"]}`, "gang.gpuType"},
		{"gpuType long", `{"gang":{"nodes":1,"gpusPerNode":1,"gpuType":"` + strings.Repeat("H", 65) + `"},"command":["x"]}`, "gang.gpuType"},
		{"gpuType number", `{"gang":{"nodes":1,"gpusPerNode":1,"gpuType":100},"command":["x"]}`, "gang.gpuType"},
		{"minGPUMemoryMiB negative", `{"gang":{"nodes":1,"gpusPerNode":1,"minGPUMemoryMiB":-1},"command":["x"]}`, "gang.minGPUMemoryMiB"},
		{"minGPUMemoryMiB huge", `{"gang":{"nodes":1,"gpusPerNode":1,"minGPUMemoryMiB":1e30},"command":["x"]}`, "gang.minGPUMemoryMiB"},
		{"minGPUMemoryMiB fraction", `{"gang":{"nodes":1,"gpusPerNode":1,"minGPUMemoryMiB":1.5},"command":["x"]}`, "gang.minGPUMemoryMiB"},
		{"unknown dependency type", `{"gang":{"nodes":1,"gpusPerNode":1},"command":["x"],"dependencies":[{"type":"afterfoo","jobs":["a"]}]}`, "dependencies.0.type"},
		{"dependency without jobs", `{"gang":{"nodes":1,"gpusPerNode":1},"command":["x"],"dependencies":[{"type":"afterok","jobs":[]}]}`, "dependencies.0.jobs"},
		{"dependency jobs missing", `{"gang":{"nodes":1,"gpusPerNode":1},"command":["x"],"dependencies":[{"type":"afterok"}]}`, "dependencies.0"},
		{"dependency on a bad id", `{"gang":{"nodes":1,"gpusPerNode":1},"command":["x"],"dependencies":[{"type":"afterok","jobs":["ok","Bad ID"]}]}`, "dependencies.0.jobs.1"},
		{"dependency unknown field", `{"gang":{"nodes":1,"gpusPerNode":1},"command":["x"],"dependencies":[{"type":"afterok","jobs":["a"],"state":"x"}]}`, "state"},
		{"dependency on itself", `{"id":"me","gang":{"nodes":1,"gpusPerNode":1},"command":["x"],"dependencies":[{"type":"after","jobs":["a","me"]}]}`, "dependencies.0.jobs.1: job me cannot depend on itself"},
		{"array indexes not a list", `{"gang":{"nodes":1,"gpusPerNode":1},"command":["x"],"array":{"indexes":"1-x"}}`, "array.indexes: array range"},
		{"array range backwards", `{"gang":{"nodes":1,"gpusPerNode":1},"command":["x"],"array":{"indexes":"5-3"}}`, "array.indexes: array range \"5-3\" ends before it starts"},
		{"array index too large", `{"gang":{"nodes":1,"gpusPerNode":1},"command":["x"],"array":{"indexes":"4000001"}}`, "array.indexes"},
		{"array too many tasks", `{"gang":{"nodes":1,"gpusPerNode":1},"command":["x"],"array":{"indexes":"0-10000"}}`, "array.indexes: names 10001 tasks, more than the 10000 allowed"},
		{"array with a percent limit", `{"gang":{"nodes":1,"gpusPerNode":1},"command":["x"],"array":{"indexes":"0-3%2"}}`, "array.indexes"},
		{"array without indexes", `{"gang":{"nodes":1,"gpusPerNode":1},"command":["x"],"array":{"maxConcurrent":2}}`, "array"},
		{"array negative limit", `{"gang":{"nodes":1,"gpusPerNode":1},"command":["x"],"array":{"indexes":"0-3","maxConcurrent":-1}}`, "array.maxConcurrent"},
		{"array id with underscore", `{"id":"sweep_3","gang":{"nodes":1,"gpusPerNode":1},"command":["x"],"array":{"indexes":"0-3"}}`, "id"},
		{"plain id with underscore", `{"id":"sweep_3","gang":{"nodes":1,"gpusPerNode":1},"command":["x"]}`, "id"},
		{"dependency on a bad task id", `{"gang":{"nodes":1,"gpusPerNode":1},"command":["x"],"dependencies":[{"type":"afterok","jobs":["a_01"]}]}`, "dependencies.0.jobs.0"},
		{"singleton not boolean", `{"gang":{"nodes":1,"gpusPerNode":1},"command":["x"],"singleton":"yes"}`, "singleton"},
		{"oversized", `{"gang":{"nodes":1,"gpusPerNode":1},"command":["x"],"name":"` + strings.Repeat("a", MaxSpecBytes) + `"}`, "bytes"},
	}
}

// Every bad input names the field at fault.
func TestParseRejectsBadInput(t *testing.T) {
	for _, tc := range badSpecs() {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse([]byte(tc.spec))
			if err == nil {
				t.Fatal("accepted")
			}
			if !errs.IsInvalid(err) || !errs.IsPermanent(err) {
				t.Errorf("error not marked invalid+permanent: %v", err)
			}
			if !strings.Contains(err.Error(), tc.field) {
				t.Errorf("error %q does not name %q", err, tc.field)
			}
			var ie *InvalidError
			if !errors.As(err, &ie) || len(ie.Fields) == 0 {
				t.Errorf("no field errors in %v", err)
			}
		})
	}
}

func TestParseGPUModelFields(t *testing.T) {
	s, err := Parse([]byte(`{"gang":{"nodes":1,"gpusPerNode":8,"gpuType":"H100 80GB","minGPUMemoryMiB":80000},"command":["x"]}`))
	if err != nil {
		t.Fatal(err)
	}
	if s.Gang.GPUType != "H100 80GB" || s.Gang.MinGPUMemoryMiB != 80000 {
		t.Errorf("%+v", s.Gang)
	}
}

func TestParseDependencies(t *testing.T) {
	s, err := Parse([]byte(`{"id":"c","gang":{"nodes":1,"gpusPerNode":1},"command":["x"],"singleton":true,
		"dependencies":[{"type":"afterok","jobs":["a","b"]},{"type":"afternotok","jobs":["a"]}]}`))
	if err != nil {
		t.Fatal(err)
	}
	want := []Dependency{{Type: DependAfterOK, Jobs: []string{"a", "b"}}, {Type: DependAfterNotOK, Jobs: []string{"a"}}}
	if !reflect.DeepEqual(s.Dependencies, want) || !s.Singleton {
		t.Errorf("dependencies %+v singleton %v", s.Dependencies, s.Singleton)
	}
	many := make([]string, MaxDependencyJobs)
	for i := range many {
		many[i] = "j" + strconv.Itoa(i)
	}
	raw, _ := json.Marshal(map[string]any{"gang": map[string]int{"nodes": 1, "gpusPerNode": 1}, "command": []string{"x"},
		"dependencies": []Dependency{{Type: DependAfterAny, Jobs: many}, {Type: DependAfter, Jobs: []string{"one-more"}}}})
	if _, err := Parse(raw); err == nil || !strings.Contains(err.Error(), "dependencies: names 257 jobs") {
		t.Errorf("too many dependency jobs: %v", err)
	}
}

func TestParseAcceptsCleanAbsolutePaths(t *testing.T) {
	s, err := Parse([]byte(`{"gang":{"nodes":1,"gpusPerNode":1},"command":["x"],
		"workdir":"/home/ada/run 1","checkpoint":{"dir":"/"}}`))
	if err != nil {
		t.Fatal(err)
	}
	if s.Workdir != "/home/ada/run 1" || s.Checkpoint.Dir != "/" {
		t.Errorf("paths changed: %q %q", s.Workdir, s.Checkpoint.Dir)
	}
}

func TestDeriveID(t *testing.T) {
	if got := DeriveID("mine", "msg-1", 9); got != "mine" {
		t.Errorf("spec id should win, got %s", got)
	}
	if got := DeriveID("", "pipeline-run-42", 9); got != "pipeline-run-42" {
		t.Errorf("valid msg id should be used, got %s", got)
	}
	if got := DeriveID("", "Not A Valid ID", 9); got != "job-9" {
		t.Errorf("invalid msg id should fall back to the sequence, got %s", got)
	}
	// A redelivery carries the same stream sequence, so it gets the same
	// ID; another message gets another.
	if got := DeriveID("", "", 9); got != "job-9" {
		t.Errorf("without a spec or message ID the sequence should name the job, got %s", got)
	}
	if DeriveID("", "", 9) == DeriveID("", "", 10) {
		t.Error("two messages got the same derived ID")
	}
}

// TestSpecMatchesSchema keeps the Go struct and the JSON Schema in step:
// every schema property is a struct field and vice versa, recursively.
func TestSpecMatchesSchema(t *testing.T) {
	sch := jobSpecSchema(t)
	compare(t, "spec", sch, reflect.TypeOf(Spec{}))
}

// jobSpecSchema reads schemas/jobspec.v1.json.
func jobSpecSchema(t *testing.T) map[string]any {
	t.Helper()
	raw, err := schemas.FS.ReadFile(schemas.JobSpecV1)
	if err != nil {
		t.Fatal(err)
	}
	var sch map[string]any
	if err := json.Unmarshal(raw, &sch); err != nil {
		t.Fatal(err)
	}
	return sch
}

func compare(t *testing.T, path string, sch map[string]any, typ reflect.Type) {
	props, _ := sch["properties"].(map[string]any)
	var schemaNames, goNames []string
	for k := range props {
		schemaNames = append(schemaNames, k)
	}
	fields := map[string]reflect.Type{}
	for i := range typ.NumField() {
		f := typ.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		goNames = append(goNames, name)
		fields[name] = f.Type
	}
	sort.Strings(schemaNames)
	sort.Strings(goNames)
	if !reflect.DeepEqual(schemaNames, goNames) {
		t.Errorf("%s: schema properties %v != Go fields %v", path, schemaNames, goNames)
	}
	for name, ft := range fields {
		sub, _ := props[name].(map[string]any)
		if ft.Kind() == reflect.Pointer {
			ft = ft.Elem()
		}
		if ft.Implements(reflect.TypeFor[json.Marshaler]()) {
			// Written as a JSON scalar (Duration): a leaf of the schema.
			if sub["type"] != "string" {
				t.Errorf("%s.%s: a %s is a string, the schema says %v", path, name, ft, sub["type"])
			}
			continue
		}
		if ft.Kind() == reflect.Struct && sub != nil {
			compare(t, path+"."+name, sub, ft)
		}
	}
}
