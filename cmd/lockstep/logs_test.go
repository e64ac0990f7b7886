package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/lockstep-dev/lockstep/shared/contract/subjects"
)

// cliCtx is cli under ctx, for commands that may not return by themselves.
func cliCtx(ctx context.Context, args ...string) (stdout, stderr string, code int) {
	var o, e bytes.Buffer
	code = run(ctx, &cliEnv{stdout: &o, stderr: &e, stdin: strings.NewReader("")}, args)
	return o.String(), e.String(), code
}

func TestCLILogsFollowEndsWithTheJob(t *testing.T) {
	url := startDevCluster(t)
	spec := writeFile(t, "short.json", `{"id":"short-1","gang":{"nodes":1,"gpusPerNode":8},"command":["sh","-c","echo one; sleep 2; echo two"]}`)
	mustSubmit(t, url, spec)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	start := time.Now()
	out, errOut, code := cliCtx(ctx, "logs", "short-1", "-f", "--nats", url)
	if ctx.Err() != nil {
		t.Fatalf("logs -f still following %s after the job began: %q", time.Since(start).Round(time.Second), out)
	}
	if code != 0 || !strings.Contains(out, "one") || !strings.Contains(out, "two") {
		t.Errorf("logs -f = %d %q %q", code, out, errOut)
	}
}

// logs --rank outside the job's ranks is an error naming the range; each
// line carries its attempt (the agent's header) and lines of a later
// attempt are marked with it.
func TestCLILogsRanksAndAttempts(t *testing.T) {
	url := startDevCluster(t)
	spec := writeFile(t, "ranks.json", `{"id":"ranks-1","gang":{"nodes":2,"gpusPerNode":1},
		"command":["sh","-c","echo run $LOCKSTEP_ATTEMPT rank $RANK"]}`)
	mustSubmit(t, url, spec, "--wait")
	if out, errOut, code := cli(t, "logs", "ranks-1", "--rank", "2", "--nats", url); code != 2 || out != "" ||
		!strings.Contains(errOut, "--rank 2: job ranks-1 has 2 ranks, 0..1") {
		t.Errorf("logs --rank 2: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	ctx := context.Background()
	c := dialTest(t, url)
	// The agent marks each line with its attempt.
	cons, err := c.Logs(ctx, "ranks-1", 0)
	if err != nil {
		t.Fatal(err)
	}
	msg, err := cons.Next(jetstream.FetchMaxWait(5 * time.Second))
	if err != nil || msg.Headers().Get(subjects.HeaderAttempt) != "1" {
		t.Fatalf("rank 0's line: %v, headers %v", err, msg)
	}
	// A line as a second attempt's agent would publish it.
	j, err := c.Job(ctx, "ranks-1")
	if err != nil {
		t.Fatal(err)
	}
	line := nats.NewMsg(subjects.Logs(j.Owner, "ranks-1", 1, "stdout"))
	line.Data = []byte("run 2 rank 1\n")
	line.Header.Set(subjects.HeaderAttempt, "2")
	if _, err := c.Bus().JS.PublishMsg(ctx, line); err != nil {
		t.Fatal(err)
	}
	out, _, code := cli(t, "logs", "ranks-1", "--nats", url)
	for _, want := range []string{"[rank 0] run 1 rank 0\n", "[rank 1] run 1 rank 1\n", "[attempt 2 rank 1] run 2 rank 1\n"} {
		if code != 0 || !strings.Contains(out, want) {
			t.Errorf("logs lacks %q:\n%s", want, out)
		}
	}
	if out, _, _ := cli(t, "logs", "ranks-1", "--rank", "1", "--nats", url); out != "run 1 rank 1\n[attempt 2] run 2 rank 1\n" {
		t.Errorf("logs --rank 1:\n%s", out)
	}
}
