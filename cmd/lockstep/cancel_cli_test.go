package main

import (
	"context"
	"strings"
	"testing"

	"github.com/lockstep-dev/lockstep/shared/contract/domain"
)

// cliStdin is cli with stdin, counted as a terminal when tty.
func cliStdin(t *testing.T, stdin string, tty bool, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	var o, e strings.Builder
	code = run(context.Background(), &cliEnv{stdout: &o, stderr: &e, stdin: strings.NewReader(stdin), stdinTerminal: tty}, args)
	return o.String(), e.String(), code
}

// cancel takes several IDs, or a selection (-u, --state, --queue); more
// than one job needs a confirmation (refused without a terminal unless
// --yes); each job gets its line, and any failure exits 1.
func TestCLICancelSeveralJobs(t *testing.T) {
	url := startDevCluster(t)
	c := dialTest(t, url)
	for _, j := range []struct{ id, queue string }{{"c1", "x"}, {"c2", "x"}, {"c3", "y"}, {"c4", "y"}} {
		mustSubmit(t, url, jobSpec(t, j.id, j.queue, "sleep 120"))
	}
	waitCLIState(t, c, "c1", domain.StateRunning)

	if _, _, code := cli(t, "cancel", "--nats", url); code != 2 {
		t.Errorf("cancel with neither IDs nor a selection: exit %d, want 2", code)
	}
	out, errOut, code := cliStdin(t, "", false, "cancel", "--queue", "x", "--nats", url)
	if code != 1 || !strings.Contains(errOut, "not a terminal") || strings.Contains(out, "requested") {
		t.Errorf("cancel of 2 jobs without a terminal or --yes = %d %q %q", code, out, errOut)
	}
	out, errOut, code = cliStdin(t, "n\n", true, "cancel", "--queue", "x", "--nats", url)
	if code != 1 || !strings.Contains(errOut, "Cancel these 2 jobs? [y/N]") || !strings.Contains(errOut, "c1") || strings.Contains(out, "requested") {
		t.Errorf("cancel answered no = %d %q %q", code, out, errOut)
	}
	for _, id := range []string{"c1", "c2"} {
		if j, err := c.Job(context.Background(), id); err != nil || j.State.Terminal() {
			t.Fatalf("%s after an unconfirmed cancel: %s %v", id, j.State, err)
		}
	}
	out, errOut, code = cliStdin(t, "y\n", true, "cancel", "--queue", "x", "--nats", url)
	if code != 0 || !strings.Contains(out, "cancel requested for c1\n") || !strings.Contains(out, "cancel requested for c2\n") {
		t.Errorf("cancel confirmed = %d %q %q", code, out, errOut)
	}
	waitCLIState(t, c, "c1", domain.StateCancelled)
	waitCLIState(t, c, "c2", domain.StateCancelled)

	// By ID, with one that ended and one unknown: the others are still
	// cancelled, each failure is its own line, and the exit is 1.
	out, errOut, code = cli(t, "cancel", "c3", "c1", "nope-1", "--yes", "--nats", url)
	if code != 1 || out != "cancel requested for c3\n" || !strings.Contains(errOut, "lockstep: job c1 already ended (cancelled)\n") ||
		!strings.Contains(errOut, "nope-1") || !strings.Contains(errOut, "2 jobs of 3 could not be cancelled") {
		t.Errorf("cancel c3 c1 nope-1 = %d %q %q", code, out, errOut)
	}
	if _, _, code := cli(t, "cancel", "c4", "Bad_ID!", "--nats", url); code != 2 {
		t.Errorf("cancel with a bad ID among good ones: exit %d, want 2", code)
	}
	out, errOut, code = cli(t, "cancel", "-u", "bob", "--nats", url)
	if code != 0 || out != "" || !strings.Contains(errOut, "nothing cancelled") {
		t.Errorf("cancel -u bob (no job of bob's) = %d %q %q", code, out, errOut)
	}
	waitCLIState(t, c, "c3", domain.StateCancelled)
	if j, _ := c.Job(context.Background(), "c4"); j.State.Terminal() {
		t.Errorf("c4 was never named but is %s", j.State)
	}
}
