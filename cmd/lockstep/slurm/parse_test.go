package slurm

import (
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestParseOptionsForms(t *testing.T) {
	// Every spelling getopt_long accepts gives the same directives.
	want := Directives{Nodes: 2, JobName: "x y", Wait: true, TimeLimit: &Time{Duration: 90 * time.Minute}}
	for _, args := range [][]string{
		{"--nodes=2", "--job-name=x y", "--wait", "--time=90"},
		{"--nodes", "2", "--job-name", "x y", "-W", "-t", "90"},
		{"-N2", "-Jx y", "-W", "-t90"},
		{"-N", "2", "-J", "x y", "-Wt", "90"},
		{"-WN2", "-J", "x y", "--time=1:30:00"},           // clustered shorts
		{"--nodes=2", "--job=x y", "-W", "-t", "1:30:00"}, // a unique prefix of --job-name
	} {
		got, rest, err := ParseOptions(append(args, "script.sh", "--nodes=9"))
		if err != nil {
			t.Errorf("ParseOptions(%q): %v", args, err)
			continue
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("ParseOptions(%q) = %+v, want %+v", args, got, want)
		}
		if !slices.Equal(rest, []string{"script.sh", "--nodes=9"}) {
			t.Errorf("ParseOptions(%q) operands = %q", args, rest)
		}
	}
}

func TestParseOptionsOperands(t *testing.T) {
	for _, tc := range []struct {
		args []string
		rest []string
	}{
		{nil, nil},
		{[]string{"-N2"}, nil},
		{[]string{"-N2", "--", "-x.sh", "a"}, []string{"-x.sh", "a"}},
		{[]string{"-", "a"}, []string{"-", "a"}}, // a lone "-" is an operand (stdin)
		{[]string{"--nodes", "--", "s"}, []string{"s"}},
	} {
		_, rest, err := ParseOptions(tc.args)
		if tc.args != nil && tc.args[0] == "--nodes" {
			// --nodes takes the next word even when it is "--": then "--" is
			// not a number.
			if err == nil {
				t.Errorf("ParseOptions(%q) succeeded", tc.args)
			}
			continue
		}
		if err != nil || !slices.Equal(rest, tc.rest) {
			t.Errorf("ParseOptions(%q) = %q, %v, want %q", tc.args, rest, err, tc.rest)
		}
	}
}

func TestParseOptionsValues(t *testing.T) {
	p := func(n int) *int { return &n }
	for _, tc := range []struct {
		args []string
		want Directives
	}{
		{[]string{"-n", "16", "--ntasks-per-node=8", "-c12"}, Directives{NTasks: 16, NTasksPerNode: 8, CPUsPerTask: 12}},
		{[]string{"--tasks-per-node=4"}, Directives{NTasksPerNode: 4}},
		{[]string{"--tasks=4"}, Directives{NTasksPerNode: 4}}, // prefix of both spellings of one option
		{[]string{"-N", "2-2"}, Directives{Nodes: 2}},
		{[]string{"--gpus-per-node=8", "--gpu-bind=closest"}, Directives{GPUsPerNode: &GPUs{Count: 8}, GPUBind: "closest"}},
		{[]string{"--gres=gpu:4", "--gpu-bind=verbose,none"}, Directives{GRESGPU: &GPUs{Count: 4}, GPUBind: "none"}},
		{[]string{"--gres=gpu:4", "--gres=none"}, Directives{}},
		{[]string{"--switches=1@00:15:00"}, Directives{Switches: &Switches{Count: 1, Wait: &Time{Duration: 15 * time.Minute}}}},
		{[]string{"-t", "0:30"}, Directives{TimeLimit: &Time{Duration: time.Minute}}}, // seconds round up to a minute
		{[]string{"-t", "1:01"}, Directives{TimeLimit: &Time{Duration: 2 * time.Minute}}},
		{[]string{"-t", "0"}, Directives{TimeLimit: &Time{Unlimited: true}}},
		{[]string{"-t", "UNLIMITED"}, Directives{TimeLimit: &Time{Unlimited: true}}},
		{[]string{"-p", "gpu", "--priority=10", "--nice"}, Directives{Partition: "gpu", Priority: p(10), Nice: p(100)}},
		{[]string{"--nice=-5"}, Directives{Nice: p(-5)}},
		{[]string{"-o", "%x-%j.out", "-e", "err", "-D", "/tmp"}, Directives{Output: "%x-%j.out", Error: "err", Chdir: "/tmp"}},
		{[]string{"--requeue", "--no-requeue"}, Directives{Requeue: new(false)}},
		{[]string{"--no-requeue", "--requeue=expedite"}, Directives{Requeue: new(true), RequeueExpedite: true}},
		{[]string{"--signal=B:USR1@90"}, Directives{Signal: &Signal{Name: "USR1", Number: 10, Time: 90 * time.Second, BatchOnly: true}}},
		{[]string{"--exclusive"}, Directives{Exclusive: "exclusive"}},
		{[]string{"--exclusive=user"}, Directives{Exclusive: "user"}},
		{[]string{"--parsable", "--test-only", "-Q", "-vv", "-h", "-V"}, Directives{Parsable: true, TestOnly: true, Quiet: true, Verbose: 2, Help: true, Version: true}},
		{[]string{"-a", "0-15%4"}, Directives{Array: &Array{Raw: "0-15%4", Ranges: []ArrayRange{{First: 0, Last: 15, Step: 1}}, Limit: 4}}},
		{[]string{"-d", "singleton"}, Directives{Dependency: &Dependency{Raw: "singleton", Items: []DependencyItem{{Type: "singleton"}}}}},
		{[]string{"--export=NONE"}, Directives{Export: &Export{Raw: "NONE", None: true}}},
	} {
		got, _, err := ParseOptions(tc.args)
		if err != nil {
			t.Errorf("ParseOptions(%q): %v", tc.args, err)
			continue
		}
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("ParseOptions(%q) =\n  %+v\nwant\n  %+v", tc.args, got, tc.want)
		}
	}
}

func TestParseOptionsErrors(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--foo"}, "unrecognized option '--foo'"},
		{[]string{"-z"}, "invalid option -- 'z'"},
		{[]string{"--nodes"}, "option '--nodes' requires an argument"},
		{[]string{"-N"}, "option requires an argument -- 'N'"},
		{[]string{"--wait=1"}, "option '--wait' doesn't allow an argument"},
		{[]string{"--n=1"}, "option '--n' is ambiguous"},
		{[]string{"--no=1"}, "ambiguous"},
		{[]string{"--node=1"}, "possibilities: --nodes --nodefile --nodelist"},
		{[]string{"--wai"}, "ambiguous"}, // --wait and --wait-all-nodes
		{[]string{"-N", "x"}, "-N x: \"x\" is not a non-negative integer"},
		{[]string{"--nodes=0"}, "--nodes=0"},
		{[]string{"--nodes=1-4"}, "a node range (1-4) is not supported"},
		{[]string{"--ntasks=-1"}, "--ntasks=-1"},
		{[]string{"--time=1:2:3:4"}, "--time=1:2:3:4"},
		{[]string{"--gpu-bind=map_gpu:0,1"}, "--gpu-bind=map_gpu:0,1"},
		{[]string{"--priority=TOP"}, "TOP is not supported"},
		{[]string{"--priority=-1"}, "--priority=-1"},
		{[]string{"--nice=x"}, "--nice=x"},
		{[]string{"--requeue=now"}, "--requeue=now"},
		{[]string{"--exclusive=nope"}, "--exclusive=nope"},
		{[]string{"--signal=USR3"}, "--signal=USR3"},
		{[]string{"--switches=0"}, "--switches=0"},
		{[]string{"-J", ""}, "-J : empty value"},
		{[]string{"--mem=4G"}, "--mem=4G is not supported by Lockstep"},
		{[]string{"--mem", "4G"}, "--mem=4G is not supported by Lockstep"},
		{[]string{"-A", "acct"}, "-A acct is not supported by Lockstep"},
		{[]string{"--hold"}, "--hold is not supported by Lockstep"},
	} {
		_, _, err := ParseOptions(tc.args)
		if !checkInvalid(t, fmt.Sprintf("ParseOptions(%q)", tc.args), err, tc.want) {
			continue
		}
		if got := IsUnsupported(err); got != strings.Contains(tc.want, "not supported by Lockstep") {
			t.Errorf("ParseOptions(%q): IsUnsupported = %v", tc.args, got)
		}
	}
}

func TestIgnoreUnsupported(t *testing.T) {
	got, rest, err := ParseOptions([]string{"--mem", "4G", "-N2", "--hold", "-A", "acct", "--qos=high", "s.sh"}, WithIgnoreUnsupported())
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"--mem=4G is not supported by Lockstep; ignored",
		"--hold is not supported by Lockstep; ignored",
		"-A acct is not supported by Lockstep; ignored",
		"--qos=high is not supported by Lockstep; ignored",
	}
	if got.Nodes != 2 || !slices.Equal(got.Warnings, want) || !slices.Equal(rest, []string{"s.sh"}) {
		t.Errorf("got %+v %q, want nodes 2, warnings %q", got, rest, want)
	}
	// An option sbatch does not have is an error regardless.
	if _, _, err := ParseOptions([]string{"--frobnicate"}, WithIgnoreUnsupported()); err == nil {
		t.Error("--frobnicate was accepted")
	}
}

func TestApplyOverridesDirectives(t *testing.T) {
	script := "#!/bin/bash\n#SBATCH --nodes=4 --job-name=from-script --time=10\n#SBATCH --requeue -p a\nsrun x\n"
	d, err := ParseScript([]byte(script))
	if err != nil {
		t.Fatal(err)
	}
	got, rest, err := d.Apply([]string{"-N", "2", "--no-requeue", "s.sh", "arg"})
	if err != nil {
		t.Fatal(err)
	}
	if got.Nodes != 2 || got.JobName != "from-script" || *got.Requeue || got.Partition != "a" ||
		got.TimeLimit.Duration != 10*time.Minute || !slices.Equal(rest, []string{"s.sh", "arg"}) {
		t.Errorf("Apply = %+v %q", got, rest)
	}
	if d.Nodes != 4 || !*d.Requeue {
		t.Errorf("Apply changed its receiver: %+v", d)
	}
}

// The front end's own options split the command line as sbatch's do, and
// stay unknown to a script and to a parse without them.
func TestWithLongOption(t *testing.T) {
	var nats string
	ignore := false
	opts := []Option{
		WithLongOption("nats", true, func(v string) error { nats = v; return nil }),
		WithLongOption("ignore-unsupported", false, func(string) error { ignore = true; return nil }),
		WithLongOption("context", true, func(string) error { t.Error("sbatch's --context was taken"); return nil }),
	}
	d, rest, err := ParseOptions([]string{"-N", "2", "--nats", "nats://h:1", "--ignore-unsupported", "job.sh", "--nats", "x"}, opts...)
	if err != nil || d.Nodes != 2 || nats != "nats://h:1" || !ignore || strings.Join(rest, " ") != "job.sh --nats x" {
		t.Errorf("= %+v %q %v (nats %q, ignore %v)", d, rest, err, nats, ignore)
	}
	if _, _, err := ParseOptions([]string{"--nats=x", "job.sh"}); err == nil || !strings.Contains(err.Error(), "unrecognized option '--nats'") {
		t.Errorf("without the option: %v", err)
	}
	if _, _, err := ParseOptions([]string{"--context=x", "job.sh"}, opts...); !IsUnsupported(err) {
		t.Errorf("--context is sbatch's (unsupported): %v", err)
	}
	if _, err := ParseScript([]byte("#!/bin/sh\n#SBATCH --nats=x\n")); err == nil {
		t.Error("a script's --nats was accepted")
	}
}
