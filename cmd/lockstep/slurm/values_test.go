package slurm

import (
	"slices"
	"testing"
	"time"
)

// sbatch(1) --array: "0-15", "0,6,16-32", "0-15:4" (= 0,4,8,12), "0-15%4".
func TestParseArray(t *testing.T) {
	for _, tc := range []struct {
		in      string
		indexes []int
		limit   int
	}{
		{"0-15", []int{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15}, 0},
		{"0,6,16-20", []int{0, 6, 16, 17, 18, 19, 20}, 0},
		{"0-15:4", []int{0, 4, 8, 12}, 0},
		{"0-15%4", []int{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15}, 4},
		{"1-7:2%2", []int{1, 3, 5, 7}, 2},
		{"3,1,3", []int{1, 3}, 0},
		{"[1-3]", []int{1, 2, 3}, 0},
		{"7", []int{7}, 0},
	} {
		got, err := ParseArray(tc.in)
		if err != nil {
			t.Errorf("ParseArray(%q): %v", tc.in, err)
			continue
		}
		if !slices.Equal(got.Indexes(), tc.indexes) || got.Limit != tc.limit {
			t.Errorf("ParseArray(%q) = %v %%%d, want %v %%%d", tc.in, got.Indexes(), got.Limit, tc.indexes, tc.limit)
		}
	}
	if n := must(ParseArray("0-15:4,3,3")).Count(); n != 6 {
		t.Errorf("Count = %d, want 6", n)
	}
	checkRejects(t, "ParseArray", ParseArray, "", "-1", "1-", "5-3", "1-3:0", "1:2", "a", "1,,2", "1%0", "1%x", "0-4000001", "1-3:", "1%2%3")
}

// sbatch(1) --dependency: "afterok:20:21,afterany:23" (all), with '?' (any).
func TestParseDependency(t *testing.T) {
	j := func(ids ...string) []DependencyJob {
		var out []DependencyJob
		for _, id := range ids {
			out = append(out, DependencyJob{ID: id})
		}
		return out
	}
	for _, tc := range []struct {
		in   string
		want Dependency
	}{
		{"afterok:20:21,afterany:23", Dependency{Items: []DependencyItem{{"afterok", j("20", "21")}, {"afterany", j("23")}}}},
		{"afterok:20:21?afterany:23", Dependency{Any: true, Items: []DependencyItem{{"afterok", j("20", "21")}, {"afterany", j("23")}}}},
		{"afternotok:job-7", Dependency{Items: []DependencyItem{{"afternotok", j("job-7")}}}},
		{"singleton", Dependency{Items: []DependencyItem{{Type: "singleton"}}}},
		{"singleton,afterok:12", Dependency{Items: []DependencyItem{{Type: "singleton"}, {"afterok", j("12")}}}},
		{"123", Dependency{Items: []DependencyItem{{"afterany", j("123")}}}}, // afterany is the default type
		{"afterok:12_3", Dependency{Items: []DependencyItem{{"afterok", j("12_3")}}}},
		{"after:12+10:13", Dependency{Items: []DependencyItem{{"after", []DependencyJob{{"12", 10 * time.Minute}, {"13", 0}}}}}},
	} {
		tc.want.Raw = tc.in
		checkParse(t, "ParseDependency", ParseDependency, tc.in, tc.want)
	}
	checkRejects(t, "ParseDependency", ParseDependency,
		"", "afterok", "afterok:", "afterok:1,", "afterok:1?afterany:2,afterok:3", "aftercorr:1",
		"afterburstbuffer:1", "expand:1", "afterok:Job-1", "afterok:1+5", "after:1+x", "singleton:1", "afterok:1_x",
	)
}

func TestParseExport(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want Export
	}{
		{"ALL", Export{All: true}},
		{"all", Export{All: true}},
		{"NONE", Export{None: true}},
		{"NIL", Export{None: true}},
		{"EDITOR", Export{Names: []string{"EDITOR"}}},
		{"EDITOR=/bin/emacs", Export{Set: []EnvVar{{"EDITOR", "/bin/emacs"}}}},
		{"ALL,FOO=bar,HOME", Export{All: true, Names: []string{"HOME"}, Set: []EnvVar{{"FOO", "bar"}}}},
		{`"A=x,y",B=1`, Export{Set: []EnvVar{{"A", "x,y"}, {"B", "1"}}}},
		{`A="x,y"`, Export{Set: []EnvVar{{"A", `"x,y"`}}}}, // find_quote_token keeps inner quotes
		{"A=", Export{Set: []EnvVar{{"A", ""}}}},
	} {
		tc.want.Raw = tc.in
		checkParse(t, "ParseExport", ParseExport, tc.in, tc.want)
	}
	checkRejects(t, "ParseExport", ParseExport, "", `"A=1`, `A='x`)
}

func TestParseGPUs(t *testing.T) {
	for _, tc := range []struct {
		gres bool
		in   string
		want GPUs
	}{
		{false, "8", GPUs{Count: 8}},
		{false, "volta:3", GPUs{"volta", 3}}, // sbatch(1)
		{true, "gpu:2", GPUs{Count: 2}},      // sbatch(1)
		{true, "gpu:kepler:2", GPUs{"kepler", 2}},
		{true, "gpu", GPUs{Count: 1}},
		{true, "gpu:a100", GPUs{"a100", 1}},
		{true, "gres/gpu:4", GPUs{Count: 4}},
	} {
		parse := parseGPUs
		if tc.gres {
			parse = parseGRES
		}
		got, err := parse(tc.in)
		if err != nil || got != tc.want {
			t.Errorf("parse(gres=%v, %q) = %+v, %v, want %+v", tc.gres, tc.in, got, err, tc.want)
		}
	}
	checkRejects(t, "parseGPUs", parseGPUs, "", "0", "x", "volta:3,kepler:1", "a:b:c")
	checkRejects(t, "parseGRES", parseGRES, "", "nvme:1", "gpu:0", "gpu::2", "gpu:a:b", "gpu:a:1:2", "gpu:1,nvme:1", "gpu:2K")
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}
