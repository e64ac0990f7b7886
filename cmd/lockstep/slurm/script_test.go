package slurm

import (
	"fmt"
	"slices"
	"strings"
	"testing"
)

// Which lines are directives: sbatch's _opt_batch_script.
func TestParseScriptReadsUntilTheFirstCommand(t *testing.T) {
	for _, tc := range []struct {
		name, script string
		job          string
		nodes        int
	}{
		{"directives then command", "#!/bin/sh\n#SBATCH -J a\n#SBATCH -N 2\nhostname\n", "a", 2},
		{"blank lines and comments between", "#!/bin/sh\n\n# setup\n   \n#SBATCH -J a\n\t# more\n#SBATCH -N 2\n", "a", 2},
		{"after the first command: ignored", "#!/bin/sh\n#SBATCH -J a\necho hi\n#SBATCH -N 2\n", "a", 0},
		{"an indented command stops too", "#!/bin/sh\n#SBATCH -J a\n  module load x\n#SBATCH -N 2\n", "a", 0},
		{"indented #SBATCH is a comment", "#!/bin/sh\n  #SBATCH -J b\n#SBATCH -N 2\n", "", 2},
		{"# SBATCH is a comment", "#!/bin/sh\n# SBATCH -J b\n##SBATCH -J c\n#SBATCH -N 2\n", "", 2},
		{"several options on a line", "#!/bin/sh\n#SBATCH -J a -N 3 --wait\n", "a", 3},
		{"no space after #SBATCH", "#!/bin/sh\n#SBATCH--nodes=3\n", "", 3},
		{"later directives win", "#!/bin/sh\n#SBATCH -N 2\n#SBATCH -N 5\n", "", 5},
		{"trailing comment", "#!/bin/sh\n#SBATCH -J a # the name\n#SBATCH -N 2 #-N 9\n", "a", 2},
		{"no final newline", "#!/bin/sh\n#SBATCH -N 2", "", 2},
		{"#SLURM works, with a warning", "#!/bin/sh\n#SLURM -N 2\n", "", 2},
		{"an option value on the next word", "#!/bin/sh\n#SBATCH -J\n#SBATCH a\n", "a", 0}, // one argv, as in sbatch
	} {
		d, err := ParseScript([]byte(tc.script))
		if err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		if d.JobName != tc.job || d.Nodes != tc.nodes {
			t.Errorf("%s: job %q nodes %d, want %q %d", tc.name, d.JobName, d.Nodes, tc.job, tc.nodes)
		}
	}
}

// Splitting a directive line: sbatch's get_argument.
func TestDirectiveWords(t *testing.T) {
	for _, tc := range []struct {
		line string
		want []string
	}{
		{" -J a -N 2", []string{"-J", "a", "-N", "2"}},
		{"\t--job-name=a\t", []string{"--job-name=a"}},
		{` --job-name="a b"`, []string{"--job-name=a b"}},
		{` --job-name='a "b"'`, []string{`--job-name=a "b"`}},
		{` -J "a"'b'c`, []string{"-J", "abc"}},
		{` -J a\ b`, []string{"-J", "a b"}},
		{` -J a\"b`, []string{"-J", `a"b`}},
		{` -J "a\"b"`, []string{"-J", `a"b`}},
		{` -J a\#b`, []string{"-J", "a#b"}},
		{` -J "a#b"`, []string{"-J", "a#b"}},
		{` -J a#b -N 2`, []string{"-J", "a"}},
		{` # -J a`, nil},
		{``, nil},
		{`   `, nil},
		{" -o /x/%j.out\r", []string{"-o", "/x/%j.out"}},
	} {
		got, err := directiveWords(tc.line)
		if err != nil || !slices.Equal(got, tc.want) {
			t.Errorf("directiveWords(%q) = %q, %v, want %q", tc.line, got, err, tc.want)
		}
	}
	checkRejects(t, "directiveWords", directiveWords, ` -J "a`, ` -J 'a`, ` :`, ` -J a :b`)
}

func TestParseScriptErrors(t *testing.T) {
	for _, tc := range []struct{ script, want string }{
		{"", "empty"},
		{" \n\t\n", "empty"},
		{"echo hi\n", "first line must start with #!"},
		{"\n#!/bin/sh\n", "first line must start with #!"},
		{"#!/bin/sh\r\n#SBATCH -N 2\r\n", "DOS line breaks"},
		{"#!/bin/sh\n#SBATCH -N 2\x00\n", "NUL"},
		{"#!/bin/sh\n\n#SBATCH -N x\n", "line 3: -N x"},
		{"#!/bin/sh\n#SBATCH -N 2\n#SBATCH --mem=4G\n", "line 3: --mem=4G is not supported by Lockstep"},
		{"#!/bin/sh\n#SBATCH --frob\n", "line 2: unrecognized option '--frob'"},
		{"#!/bin/sh\n#SBATCH -N 2 script.sh\n", `line 2: #SBATCH "script.sh" is not an option`},
		{"#!/bin/sh\n#SBATCHING\n", `line 2: #SBATCH "ING" is not an option`},
		{"#!/bin/sh\n#SBATCH -J \"a\n", "line 2: unmatched \""},
		{"#!/bin/sh\n#SBATCH -N 2\n#SBATCH hetjob\n#SBATCH -N 1\n", "line 3: heterogeneous jobs"},
		{"#!/bin/sh\n#SBATCH -J\n", "line 2: option requires an argument -- 'J'"},
		{"#!/bin/sh\n" + strings.Repeat("#", MaxScriptBytes), "more than"},
	} {
		_, err := ParseScript([]byte(tc.script))
		checkInvalid(t, fmt.Sprintf("ParseScript(%.40q)", tc.script), err, tc.want)
	}
}

func TestParseScriptWarnings(t *testing.T) {
	d, err := ParseScript([]byte("#!/bin/sh\n#SLURM -N 2\n#SLURM -J a\n#SBATCH --mem=4G --qos high\n"), WithIgnoreUnsupported())
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"line 2: change #SLURM to #SBATCH and check the options are valid in sbatch",
		"line 4: --mem=4G is not supported by Lockstep; ignored",
		"line 4: --qos=high is not supported by Lockstep; ignored",
	}
	if !slices.Equal(d.Warnings, want) || d.Nodes != 2 || d.JobName != "a" {
		t.Errorf("got %+v, warnings %q, want %q", d, d.Warnings, want)
	}
}
