package main

import (
	"context"
	"regexp"
	"strings"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/lockstep-dev/lockstep/shared/contract/client"
	"github.com/lockstep-dev/lockstep/shared/contract/domain"
	"github.com/lockstep-dev/lockstep/shared/plumbing/testenv"
)

// jobSpec writes a one-node job spec and returns its path.
func jobSpec(t *testing.T, id, queue, command string) string {
	t.Helper()
	return writeFile(t, id+".json", `{"id":"`+id+`","queue":"`+queue+`","gang":{"nodes":1,"gpusPerNode":8},"command":["sh","-c","`+command+`"]}`)
}

// dialTest is a client of the test cluster, for reading job records.
func dialTest(t *testing.T, url string) *client.Client {
	t.Helper()
	c, err := client.Dial(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c
}

// queue's -u, --state and --queue select; -o wide adds columns and -o
// yaml prints the same data as json, for queue, describe and node list;
// describe says when a job ended and how long it ran.
func TestCLIQueueSelectsAndPrintsWideAndYAML(t *testing.T) {
	url := startDevCluster(t)
	c := dialTest(t, url)
	mustSubmit(t, url, jobSpec(t, "keep", "qa", "sleep 60"))
	mustSubmit(t, url, jobSpec(t, "done", "qb", "sleep 1"), "--wait")
	waitCLIState(t, c, "keep", domain.StateRunning)

	for _, tc := range []struct {
		args       []string
		want, lack []string
	}{
		{[]string{"--queue", "qa"}, []string{"keep"}, []string{"done"}},
		{[]string{"--state", "succeeded"}, []string{"done"}, []string{"keep"}},
		{[]string{"-a", "--state", "running,succeeded", "--queue", "qb"}, []string{"done"}, []string{"keep"}},
		{[]string{"-u", "_"}, []string{"keep"}, []string{"done"}},
		{[]string{"-a", "-u", "bob"}, nil, []string{"keep", "done"}},
		{[]string{"-o", "wide"}, []string{"OWNER", "PRIORITY", "ATTEMPT", "DETAIL", "keep"}, []string{"done"}},
	} {
		out, errOut, code := cli(t, append([]string{"queue", "--nats", url}, tc.args...)...)
		if code != 0 {
			t.Errorf("queue %q: exit %d %s", tc.args, code, errOut)
		}
		for _, w := range tc.want {
			if !strings.Contains(out, w) {
				t.Errorf("queue %q lacks %q:\n%s", tc.args, w, out)
			}
		}
		for _, l := range tc.lack {
			if strings.Contains(out, l+" ") {
				t.Errorf("queue %q shows %q:\n%s", tc.args, l, out)
			}
		}
	}

	out, errOut, code := cli(t, "queue", "-a", "-o", "yaml", "--nats", url)
	var rows []map[string]any
	if err := yaml.Unmarshal([]byte(out), &rows); code != 0 || err != nil || len(rows) != 2 || rows[0]["id"] != "keep" || rows[1]["state"] != "succeeded" {
		t.Errorf("queue -a -o yaml = %d %v %q %s", code, err, out, errOut)
	}
	out, _, code = cli(t, "describe", "done", "--nats", url)
	if code != 0 || !strings.Contains(out, "Ended:") || !regexp.MustCompile(`Elapsed:    \d.*\(from start to end\)`).MatchString(out) {
		t.Errorf("describe of an ended job lacks its end or elapsed time:\n%s", out)
	}
	out, _, _ = cli(t, "describe", "done", "-o", "yaml", "--nats", url)
	var d map[string]any
	if err := yaml.Unmarshal([]byte(out), &d); err != nil || d["id"] != "done" || d["endedAt"] == nil || d["elapsed"] == nil {
		t.Errorf("describe -o yaml = %v %s", err, out)
	}
	out, _, _ = cli(t, "node", "list", "-o", "yaml", "--nats", url)
	var nodes []map[string]any
	if err := yaml.Unmarshal([]byte(out), &nodes); err != nil || len(nodes) != 2 {
		t.Errorf("node list -o yaml = %v %s", err, out)
	}
	for _, args := range [][]string{{"queue", "--state", "bogus"}, {"queue", "-u", "Not A User"}, {"stats", "-o", "csv"}, {"queue", "-o", "xml"}} {
		if _, errOut, code := cli(t, append(args, "--nats", url)...); code != 2 {
			t.Errorf("%q: exit %d, want 2 (usage): %s", args, code, errOut)
		}
	}
}

// queue -w draws the queue, draws it again when a job changes (the jobs
// KV watch, not a poll), and ends with exit 0 when interrupted.
func TestCLIQueueWatchRedrawsAndStopsOnInterrupt(t *testing.T) {
	url := startDevCluster(t)
	ctx, interrupt := context.WithCancel(context.Background())
	var out, errOut testenv.LockedBuffer
	code := make(chan int, 1)
	go func() {
		code <- run(ctx, &cliEnv{stdout: &out, stderr: &errOut, stdin: strings.NewReader("")}, []string{"queue", "-w", "-a", "--nats", url})
	}()
	testenv.Eventually(t, 10*time.Second, func() error {
		if !strings.Contains(out.String(), "Jobs at") {
			return errString("no first drawing: " + out.String())
		}
		return nil
	})
	mustSubmit(t, url, jobSpec(t, "watched", "default", "true"))
	testenv.Eventually(t, 30*time.Second, func() error {
		if !strings.Contains(out.String(), "succeeded") {
			return errString("never redrawn with the job succeeded: " + out.String())
		}
		return nil
	})
	if n := strings.Count(out.String(), "Jobs at"); n < 3 {
		t.Errorf("%d drawings, want one per change (pending, running, succeeded):\n%s", n, out.String())
	}
	interrupt()
	select {
	case c := <-code:
		if c != 0 {
			t.Errorf("queue -w interrupted: exit %d, %s", c, errOut.String())
		}
	case <-time.After(10 * time.Second):
		t.Fatal("queue -w did not stop on interrupt")
	}
}

type errString string

func (e errString) Error() string { return string(e) }
