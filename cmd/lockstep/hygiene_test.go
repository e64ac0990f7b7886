package main

import (
	"bytes"
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cockroachdb/errors"

	"github.com/lockstep-dev/lockstep/shared/contract/domain"
	"github.com/lockstep-dev/lockstep/shared/contract/events"
	"github.com/lockstep-dev/lockstep/shared/contract/jobspec"
	"github.com/lockstep-dev/lockstep/shared/contract/subjects"
	"github.com/lockstep-dev/lockstep/shared/plumbing/jobs"
	"github.com/lockstep-dev/lockstep/shared/plumbing/testenv"
)

// The finding: a forged `succeeded` event on the bus ended `submit --wait`
// with exit 0. Now the wait ends only when the job's record says so, with
// the record's verdict; the forged event is shown, escaped and flagged.
func TestCLISubmitWaitIgnoresForgedEnd(t *testing.T) {
	url := startDevCluster(t)
	ctx := context.Background()
	spec := writeFile(t, "long.json", `{"id":"forged-1","gang":{"nodes":1,"gpusPerNode":8},"command":["sleep","300"]}`)
	c := dialTest(t, url)

	var out, errOut syncBuffer
	code := make(chan int, 1)
	go func() {
		code <- run(ctx, &cliEnv{stdout: &out, stderr: &errOut, stdin: strings.NewReader("")}, []string{"submit", spec, "--wait", "--nats", url})
	}()
	testenv.Eventually(t, 30*time.Second, func() error {
		if j, err := c.Job(ctx, "forged-1"); err != nil || j.State != domain.StateRunning {
			return errors.New("job not running yet")
		}
		return nil
	})
	forged := events.Event{Type: events.Succeeded, JobID: "forged-1", Attempt: 1, Time: time.Now().UTC(), Reason: "\x1b[2Jall good\r"}
	if err := c.Bus().PublishEvent(ctx, forged); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, 10*time.Second, func() error {
		if !strings.Contains(errOut.String(), "not confirmed by the job record") {
			return errors.New("forged event not shown yet")
		}
		return nil
	})
	select {
	case c := <-code:
		t.Fatalf("submit --wait ended with %d on a forged event:\n%s", c, errOut.String())
	default:
	}
	if _, e, code := cli(t, "cancel", "forged-1", "--reason", "real end", "--nats", url); code != 0 {
		t.Fatal(e)
	}
	select {
	case got := <-code:
		if got != 1 || !strings.Contains(errOut.String(), "job forged-1 cancelled: real end") {
			t.Errorf("exit %d, want 1 with the record's verdict:\n%s", got, errOut.String())
		}
	case <-time.After(30 * time.Second):
		t.Fatalf("submit --wait did not end after the job was cancelled:\n%s", errOut.String())
	}
	if s := errOut.String(); strings.ContainsAny(s, "\x1b\r") || !strings.Contains(s, `\x1b[2Jall good\r`) {
		t.Errorf("the forged reason is not escaped:\n%q", s)
	}
}

// Names, reasons and queues from job records reach the terminal escaped:
// no ESC, CR, NUL or bidirectional override is printed raw.
func TestCLIEscapesWhatRecordsSay(t *testing.T) {
	url := startDevCluster(t)
	ctx := context.Background()
	c := dialTest(t, url)
	js, err := jobs.Open(ctx, c.Bus().JS)
	if err != nil {
		t.Fatal(err)
	}
	evil := domain.Job{ID: "evil-1", State: domain.StateFailed, Reason: "boom\x00\x1b]0;owned\x07",
		Spec: jobspec.Spec{Name: "\x1b[31mred\rfake-row\u202e", Queue: "q\x1b[8m", Command: []string{"sh", "-c", "echo \x1b[2J"},
			Gang: jobspec.Gang{Nodes: 1, GPUsPerNode: 1}},
		SubmittedAt: time.Now()}
	if err := js.Create(ctx, evil); err != nil {
		t.Fatal(err)
	}
	// A record that does not decode is named, not a reason to show nothing.
	kv, err := c.Bus().JS.KeyValue(ctx, subjects.BucketJobs)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := kv.Put(ctx, "garbage", []byte("{not json")); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"queue", "-a"}, {"describe", "evil-1"}, {"stats"},
		{"squeue", "-j", "evil-1", "-o", "%i %j %P %R"}, {"sacct", "-j", "evil-1", "-P", "-o", "JobID,JobName,Partition,Reason"},
		{"scontrol", "show", "job", "evil-1"}} {
		out, errOut, code := cli(t, append(args, "--nats", url)...)
		if code != 0 {
			t.Fatalf("%v: exit %d %s", args, code, errOut)
		}
		if args[0] != "describe" && args[0] != "scontrol" && !strings.Contains(errOut, "job record garbage is malformed") {
			t.Errorf("%v does not name the malformed record: %q", args, errOut)
		}
		if strings.ContainsAny(out, "\x00\x1b\r\x07\u202e") {
			t.Errorf("%v printed a control character raw:\n%q", args, out)
		}
		if args[0] != "stats" && !strings.Contains(out, `\x1b[31mred\rfake-row\u202e`) {
			t.Errorf("%v does not show the name escaped:\n%q", args, out)
		}
	}
}

// syncBuffer is a bytes.Buffer a command writes while the test reads it.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
