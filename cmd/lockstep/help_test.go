package main

import (
	"strings"
	"testing"

	"github.com/spf13/cobra"
)

// TestCLIHelpOfEveryCommandNeedsNoCluster walks the whole command tree:
// `CMD --help` and `CMD -h` print the command's help and exit 0 with
// nothing running (an unreachable --nats is never dialled).
func TestCLIHelpOfEveryCommandNeedsNoCluster(t *testing.T) {
	type visit struct {
		path  []string
		slurm bool
	}
	var paths []visit
	var walk func(c *cobra.Command, path []string)
	walk = func(c *cobra.Command, path []string) {
		paths = append(paths, visit{path, c.GroupID == "slurm"})
		for _, sub := range c.Commands() {
			if sub.Name() == "help" || sub.Hidden {
				continue
			}
			walk(sub, append(append([]string(nil), path...), sub.Name()))
		}
	}
	walk(newRoot(newApp(&cliEnv{})), nil)
	if len(paths) < 30 {
		t.Fatalf("walked only %d commands", len(paths))
	}
	for _, v := range paths {
		p, helps := v.path, []string{"--help", "-h"}
		if v.slurm {
			helps = helps[:1] // Slurm's -h is --noheader
		}
		for _, h := range helps {
			out, errOut, code := cli(t, append(append([]string(nil), p...), h)...)
			if code != 0 || !strings.Contains(out, "Usage:") || errOut != "" {
				t.Errorf("lockstep %s %s: exit %d, stdout %.80q, stderr %q", strings.Join(p, " "), h, code, out, errOut)
			}
		}
	}
}

func TestCLINodeUsage(t *testing.T) {
	if _, errOut, code := cli(t, "node", "foo"); code != 2 || !strings.Contains(errOut, `unknown subcommand "foo"`) {
		t.Errorf("node foo: %d %q", code, errOut)
	}
	if _, errOut, code := cli(t, "node"); code != 2 || !strings.Contains(errOut, "needs a subcommand") {
		t.Errorf("node: %d %q", code, errOut)
	}
	// node list NODE is what its help says: a command line that parses,
	// so with no cluster it fails connecting (exit 1), not as usage (2).
	if _, errOut, code := cli(t, "node", "list", "node-99", "--nats", "nats://127.0.0.1:1"); code != 1 || !strings.Contains(errOut, "connect") {
		t.Errorf("node list node-99 with no cluster: %d %q", code, errOut)
	}
	if out, _, code := cli(t, "node", "list", "--help"); code != 0 || !strings.Contains(out, "node list [NODE...]") {
		t.Errorf("node list --help does not say list [NODE...]: %d %q", code, out)
	}
}

// A misspelt flag is a usage error: exit 2 (not 1, which `submit --wait`
// means for a failed job), the message once, the closest flag, and one
// line pointing at --help instead of the whole usage.
func TestCLIMisspeltFlag(t *testing.T) {
	out, errOut, code := cli(t, "submit", "--wiat", "x.json")
	if code != 2 || out != "" {
		t.Fatalf("submit --wiat: exit %d, stdout %q", code, out)
	}
	if strings.Count(errOut, "unknown flag: --wiat") != 1 || !strings.Contains(errOut, "did you mean --wait?") ||
		!strings.Contains(errOut, "lockstep submit --help says more") || strings.Contains(errOut, "Usage:") {
		t.Errorf("submit --wiat stderr:\n%s", errOut)
	}
	if n := strings.Count(strings.TrimSpace(errOut), "\n") + 1; n != 3 {
		t.Errorf("submit --wiat: %d lines on stderr, want 3 (error, suggestion, usage):\n%s", n, errOut)
	}
	// A global flag the command does not take is no suggestion.
	if _, errOut, code := cli(t, "version", "--natz", "x"); code != 2 || strings.Contains(errOut, "--nats") {
		t.Errorf("version --natz: %d %q", code, errOut)
	}
}

// An invalid job ID is a usage error naming the argument, found before
// anything is dialled (no cluster here), never the server's refusal.
func TestCLIInvalidJobID(t *testing.T) {
	for _, cmd := range []string{"cancel", "checkpoint", "describe", "logs", "trace"} {
		out, errOut, code := cli(t, cmd, "Bad_ID!")
		if code != 2 || out != "" || !strings.Contains(errOut, cmd+`: job ID "Bad_ID!" is not valid`) || strings.Contains(errOut, "nats") {
			t.Errorf("%s Bad_ID!: exit %d, stdout %q, stderr %q", cmd, code, out, errOut)
		}
	}
	if _, errOut, code := cli(t, "logs", "job-1", "--rank", "-2"); code != 2 || !strings.Contains(errOut, "--rank -2: ranks count from 0") {
		t.Errorf("logs --rank -2: %d %q", code, errOut)
	}
	// An array task's ID is one.
	if _, errOut, code := cli(t, "cancel", "train_3", "--nats", "nats://127.0.0.1:1"); code != 1 || !strings.Contains(errOut, "connect") {
		t.Errorf("cancel train_3: %d %q", code, errOut)
	}
}

// YAML on stdin (submit -) is read as YAML files are; JSON still works.
// The spec is validated before dialling, so no cluster is needed to see it
// was understood: a valid one gets as far as connecting.
func TestCLISubmitYAMLOnStdin(t *testing.T) {
	for _, in := range []string{
		"name: piped\ngang: {nodes: 1, gpusPerNode: 8}\ncommand: [hostname]\n",
		`{"name":"piped","gang":{"nodes":1,"gpusPerNode":8},"command":["hostname"]}`,
	} {
		if _, errOut, code := cliIn(t, in, "submit", "-", "--nats", "nats://127.0.0.1:1"); code != 1 || !strings.Contains(errOut, "connect") {
			t.Errorf("submit - of %q: %d %q", in, code, errOut)
		}
	}
	_, errOut, code := cliIn(t, "gang: {nodes: 0, gpusPerNode: 8}\ncommand: [x]\n", "submit", "-")
	if code == 0 || !strings.Contains(errOut, "gang.nodes") || strings.Contains(errOut, "JSON") {
		t.Errorf("submit - of a bad YAML spec: %d %q", code, errOut)
	}
	if _, errOut, code := cliIn(t, "gang: [unclosed\n", "submit", "-"); code == 0 || !strings.Contains(errOut, "stdin is not valid YAML") {
		t.Errorf("submit - of broken YAML: %d %q", code, errOut)
	}
}
