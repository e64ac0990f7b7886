package slurmenv

import "testing"

func TestExpandPattern(t *testing.T) {
	step0 := 0
	// sbatch(1) FILENAME PATTERN's examples: a 4-task step 0 of job 128.
	sbatchStep := PatternVars{JobID: "128", StepID: &step0, TaskID: 1}
	job := PatternVars{JobID: "1234", JobName: "llama-train", User: "alice", Node: "node-01", NodeID: 0}
	array := PatternVars{JobID: "1240", JobName: "sweep", ArrayJobID: "1234", ArrayTaskID: 17}
	for _, tc := range []struct {
		pattern string
		vars    PatternVars
		want    string
	}{
		{"job%J.out", sbatchStep, "job128.0.out"},
		{"job%4j.out", sbatchStep, "job0128.out"},
		{"job%2j-%2t.out", sbatchStep, "job128-01.out"},
		{"/mnt/nvme/logs/%j.out", job, "/mnt/nvme/logs/1234.out"}, // the seed's --output
		{"%x-%j.out", job, "llama-train-1234.out"},
		{"%u/%N/%n.log", job, "alice/node-01/0.log"},
		{"%J %s", job, "1234 batch"}, // the batch script is no numbered step
		{"100%%", job, "100%"},
		{"%A_%a.out", array, "1234_17.out"},
		{"%A_%4a.out", array, "1234_0017.out"},
		{"%b", array, "7"},
		{"%A", job, "1234"},         // not an array: the job ID
		{"%12j", job, "0000001234"}, // padding stops at 10
		{"%0005j", job, "01234"},
		{"%5x", job, "llama-train"}, // no padding for text
		{"%r", PatternVars{RestartCount: 2}, "2"},
		{"%q %5q", job, "%q %5q"}, // not a symbol: as written
		{"%S", job, "%S"},         // no SLUID in Lockstep
		{"a%", job, "a"},          // a lone trailing % goes
		{"a%12", job, "a%12"},
		{`\%j-%x`, job, "%j-%x"}, // a backslash: no expansion at all
		{`a\\b%j`, job, "ab%j"},
		{"%4j", PatternVars{JobID: "job-7"}, "job-7"}, // a non-numeric ID is not padded
		{"%j.out", PatternVars{JobID: "7", WorkDir: "/home/a"}, "/home/a/7.out"},
		{"%j.out", PatternVars{JobID: "7", WorkDir: "/home/a/"}, "/home/a/7.out"},
		{"/abs/%j.out", PatternVars{JobID: "7", WorkDir: "/home/a"}, "/abs/7.out"},
		{"", job, ""},
	} {
		if got := ExpandPattern(tc.pattern, tc.vars); got != tc.want {
			t.Errorf("ExpandPattern(%q) = %q, want %q", tc.pattern, got, tc.want)
		}
	}
}
