package main

import (
	"io"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"
)

// deadNATS is a NATS URL nothing answers at: a command that needs no server
// must not notice it.
const deadNATS = "nats://127.0.0.1:1"

// parse builds the command tree and parses a command line as run does, up
// to running the command: the flags, then the global flags' checks and
// their handover to config (PersistentPreRunE).
func parse(t *testing.T, args ...string) (*app, *cobra.Command) {
	t.Helper()
	a := newApp(&cliEnv{stdout: io.Discard, stderr: io.Discard, stdin: strings.NewReader("")})
	root := newRoot(a)
	cmd, rest, err := root.Find(args)
	if err != nil {
		t.Fatalf("%q: %v", args, err)
	}
	if err := cmd.ParseFlags(rest); err != nil {
		t.Fatalf("%q: %v", args, err)
	}
	if err := root.PersistentPreRunE(cmd, cmd.Flags().Args()); err != nil {
		t.Fatalf("%q: %v", args, err)
	}
	return a, cmd
}

// A bad command line exits 2, says what is wrong and points at the usage.
func TestUsageErrorsExit2WithAHint(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"queue", "--frobnicate"}, "unknown flag: --frobnicate"},
		{[]string{"submit", "job.json", "-x"}, "unknown shorthand flag: 'x' in -x"},
		{[]string{"describe"}, "describe takes one job ID, got 0 arguments"},
		{[]string{"cancel", "a", "Bad_ID!"}, `cancel: job ID "Bad_ID!" is not valid`},
		{[]string{"topology", "extra"}, `topology takes no arguments, got ["extra"]`},
		{[]string{"node", "drain"}, "node drain takes one NODE, got 0 arguments"},
		{[]string{"node", "frob"}, `node: unknown subcommand "frob"`},
		{[]string{"logs", "ID", "--rank", "one"}, `invalid argument "one" for "--rank" flag`},
		{[]string{"logs", "ID", "--rank"}, "flag needs an argument: --rank"},
		{[]string{"dev", "-N", "many"}, `invalid argument "many" for "-N, --nodes" flag`},
		{[]string{"dev", "--container-runtime", "podman"}, `invalid argument "podman" for "--container-runtime" flag: not one of none, docker`},
		{[]string{"stats", "-o", "xml"}, `invalid argument "xml" for "-o, --output" flag: not one of table, wide, json, yaml, csv`},
		{[]string{"stats", "-o", "csv"}, "-o csv: stats does not print csv"},
		{[]string{"quue"}, `unknown command "quue"`},
		// Checked before dialling: no server is needed to be told.
		{[]string{"cancel", "--nats", deadNATS}, "cancel: name the jobs (IDs), or select them"},
		{[]string{"cancel", "--state", "bogus", "--nats", deadNATS}, `--state: "bogus" is not a job state`},
		{[]string{"queue", "--state", "nope", "--nats", deadNATS}, `--state: "nope" is not a job state`},
		{[]string{"history", "--since", "bogus", "--nats", deadNATS}, `--since: "bogus" is neither a duration`},
		{[]string{"usage", "--since", "1m", "--until", "1h", "--nats", deadNATS}, "is before --since"},
		{[]string{"web", "--history-retention", "1h", "--nats", deadNATS}, "--history-retention: the dashboard declares no stream"},
		{[]string{"web", "--readers-per-stream", "500", "--nats", deadNATS}, "--readers-per-stream: the dashboard declares no stream"},
		// A setting a service refuses is the command line's fault too.
		{[]string{"admission", "--readers-per-stream", "5", "--nats", deadNATS}, "--readers-per-stream: 5 is neither -1 nor between 100 and 1000000"},
		{[]string{"gang", "--workers", "-1", "--nats", deadNATS}, "--workers: -1 is outside"},
		// The global flags a command does not use are refused, as before
		// they were global. (Were they not, these would fail fast anyway.)
		{[]string{"dev", "--nats", deadNATS, "--retention", "0s"}, "unknown flag: --nats (lockstep dev does not take it)"},
		{[]string{"queue", "--etcd", "http://127.0.0.1:1", "--nats", deadNATS}, "unknown flag: --etcd (lockstep queue does not take it)"},
		{[]string{"submit", "job.json", "-o", "json"}, "unknown flag: -o/--output (lockstep submit does not take it)"},
	} {
		out, errOut, code := cli(t, tc.args...)
		if code != 2 || out != "" || !strings.HasPrefix(errOut, "lockstep: ") || !strings.Contains(errOut, tc.want) {
			t.Errorf("%q: exit %d, stdout %q, stderr %q; want 2 and %q", tc.args, code, out, errOut, tc.want)
		}
		if !strings.Contains(errOut, "hint: usage: lockstep ") || !strings.Contains(errOut, "--help") {
			t.Errorf("%q: stderr %q has no usage hint", tc.args, errOut)
		}
	}
	if _, errOut, _ := cli(t, "quue"); !strings.Contains(errOut, "did you mean queue") { // (or squeue)
		t.Errorf("quue: %q does not suggest queue", errOut)
	}
}

// --help and -h work on every command and subcommand with no server: help
// is printed before anything connects. (squeue's and sinfo's -h is Slurm's
// --noheader.)
func TestHelpOnEveryCommandNeedsNoServer(t *testing.T) {
	t.Setenv("LOCKSTEP_NATS", deadNATS)
	t.Setenv("LOCKSTEP_ETCD", "http://127.0.0.1:1")
	var walk func(c *cobra.Command)
	n := 0
	walk = func(c *cobra.Command) {
		for _, sub := range c.Commands() {
			walk(sub)
		}
		path := strings.Fields(c.CommandPath())[1:]
		for _, h := range []string{"--help", "-h"} {
			if h == "-h" && slices.Contains([]string{"squeue", "sinfo"}, c.Name()) {
				continue // Slurm's -h: --noheader (TestSlurmCommandLineErrors)
			}
			out, errOut, code := cli(t, append(path, h)...)
			if code != 0 || errOut != "" || !strings.Contains(out, "Usage:") || !strings.Contains(out, c.CommandPath()) {
				t.Errorf("%q %s: exit %d, stderr %q, stdout %q", path, h, code, errOut, out)
			}
		}
		n++
	}
	walk(newRoot(newApp(&cliEnv{})))
	if n < 30 {
		t.Errorf("walked %d commands; the tree has more", n)
	}

	// A command's help shows the global flags it takes, and only those.
	out, _, _ := cli(t, "dev", "--help")
	if strings.Contains(out, "--nats string") || strings.Contains(out, "--output") {
		t.Errorf("dev --help lists global flags dev does not take:\n%s", out)
	}
	out, _, _ = cli(t, "check", "--help")
	for _, f := range []string{"--nats", "--creds", "--etcd-cert", "-o, --output", "--settle"} {
		if !strings.Contains(out, f) {
			t.Errorf("check --help lacks %s:\n%s", f, out)
		}
	}
	if out, _, _ = cli(t, "healthcheck", "--help"); !strings.Contains(out, "NATS URL(s): healthy when") || strings.Contains(out, "--creds") {
		t.Errorf("healthcheck --help should show its own --nats and no credentials:\n%s", out)
	}
}

// GNU forms: a shorthand with its value apart or attached, a long flag with
// = or apart, flags before and after arguments; the one-letter flags of
// the flag package keep their old spellings.
func TestGNUFlagForms(t *testing.T) {
	for _, args := range [][]string{
		{"dev", "-N", "2"}, {"dev", "-N2"}, {"dev", "--nodes=2"}, {"dev", "--nodes", "2"},
		{"simulate", "-N", "2"}, {"loadtest", "--nodes=2"},
	} {
		_, cmd := parse(t, args...)
		if n, err := cmd.Flags().GetInt("nodes"); err != nil || n != 2 {
			t.Errorf("%q: --nodes %d, %v; want 2", args, n, err)
		}
	}
	for _, args := range [][]string{
		{"queue", "-a", "-o", "json"}, {"queue", "-ao", "json"}, {"queue", "-aojson"}, {"queue", "--all", "--output=json"},
		{"queue", "--a", "--o", "json"}, // as the flag package spelled them
	} {
		a, cmd := parse(t, args...)
		if all, _ := cmd.Flags().GetBool("all"); !all || a.format() != "json" {
			t.Errorf("%q: all %v, -o %s", args, all, a.format())
		}
	}
	_, cmd := parse(t, "logs", "--follow", "ID", "--rank=3")
	if f, _ := cmd.Flags().GetBool("follow"); !f || cmd.Flags().Arg(0) != "ID" {
		t.Errorf("logs --follow ID --rank=3: follow %v, args %q", f, cmd.Flags().Args())
	}
	if r, _ := cmd.Flags().GetInt("rank"); r != 3 {
		t.Errorf("logs --rank=3: %d", r)
	}
	// A negative value apart from its long flag is the value, not a flag.
	_, cmd = parse(t, "simulate", "--leaf-penalty", "-1", "--switch-wait", "-1s")
	if p, _ := cmd.Flags().GetFloat64("leaf-penalty"); p != -1 {
		t.Errorf("simulate --leaf-penalty -1: %g", p)
	}
	if w, _ := cmd.Flags().GetDuration("switch-wait"); w != -time.Second {
		t.Errorf("simulate --switch-wait -1s: %s", w)
	}
	// -- ends the flags: what follows is an argument, even with a dash.
	_, cmd = parse(t, "describe", "--", "-odd-id")
	if got := cmd.Flags().Args(); len(got) != 1 || got[0] != "-odd-id" {
		t.Errorf("describe -- -odd-id: args %q", got)
	}
}

// The global connection flags reach the connection in every form, beat the
// environment, which still applies without them; services get them too.
func TestGlobalConnectionFlags(t *testing.T) {
	t.Setenv("LOCKSTEP_NATS", "nats://from-env:4222")
	t.Setenv("LOCKSTEP_CREDS", "/env.creds")
	for _, tc := range []struct {
		args []string
		nats string
	}{
		{[]string{"queue"}, "nats://from-env:4222"},
		{[]string{"queue", "--nats=nats://flag:1"}, "nats://flag:1"},
		{[]string{"--nats", "nats://flag:2", "queue"}, "nats://flag:2"}, // before the verb, as kubectl allows
		{[]string{"node", "list", "--nats", "nats://flag:3"}, "nats://flag:3"},
		{[]string{"check", "--etcd", "http://e:1", "--nats", "nats://flag:4"}, "nats://flag:4"},
	} {
		a, _ := parse(t, tc.args...)
		conn, err := a.connection()
		if err != nil || conn.NATS != tc.nats || conn.Creds != "/env.creds" {
			t.Errorf("%q: %+v, %v; want NATS %s and the creds from the environment", tc.args, conn, err, tc.nats)
		}
	}
	a, _ := parse(t, "check", "--etcd=http://etcd-flag:2379", "--creds", "/flag.creds")
	if conn, err := a.connection(); err != nil || conn.Etcd != "http://etcd-flag:2379" || conn.Creds != "/flag.creds" {
		t.Errorf("check --etcd --creds: %+v, %v", conn, err)
	}

	// A service reads them through config.Base, which sees the flags the
	// command line set: it dials what --nats says, not the environment.
	_, errOut, code := cli(t, "gang", "--nats", deadNATS, "--etcd=http://127.0.0.1:1", "--metrics-addr", "", "--creds", "")
	if code != 1 || !strings.Contains(errOut, "connect to nats at "+deadNATS) {
		t.Errorf("gang --nats %s: exit %d, %q", deadNATS, code, errOut)
	}
}

func TestCompletionScripts(t *testing.T) {
	for _, shell := range []string{"bash", "zsh", "fish"} {
		out, errOut, code := cli(t, "completion", shell)
		if code != 0 || errOut != "" || !strings.Contains(out, "lockstep") {
			t.Errorf("completion %s: exit %d, stderr %q, %d bytes", shell, code, errOut, len(out))
		}
	}
}
