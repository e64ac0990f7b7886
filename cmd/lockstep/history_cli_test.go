package main

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/lockstep-dev/lockstep/shared/contract/subjects"
	"github.com/lockstep-dev/lockstep/shared/core/accounting"
	"github.com/lockstep-dev/lockstep/shared/plumbing/testenv"
)

// submit --wait shows each change of a pending job's reason with its
// detail, and once the job ran, how long.
func TestCLISubmitWaitShowsPendingReasonsAndElapsed(t *testing.T) {
	url := startDevCluster(t)
	waitNodes(t, url, 2)
	big := writeFile(t, "big.json", `{"id":"big","gang":{"nodes":2,"gpusPerNode":8},"command":["sleep","3"]}`)
	mustSubmit(t, url, big)
	waitCLIState(t, dialTest(t, url), "big", "running")
	next := writeFile(t, "next.json", `{"id":"next","gang":{"nodes":2,"gpusPerNode":8},"command":["sleep","1"]}`)
	_, errOut, code := cli(t, "submit", next, "--wait", "--nats", url)
	if code != 0 {
		t.Fatalf("submit --wait = %d %s", code, errOut)
	}
	pending := regexp.MustCompile(`(?m)^\S+  pending    \S.*\d`)
	if !pending.MatchString(errOut) {
		t.Errorf("--wait shows no pending reason with its numbers:\n%s", errOut)
	}
	// sleep 1 from the gang's running event, stamped after the ranks
	// started: "ran 999ms" under load, "ran 1s" when it rounds to exactly
	// a second, longer on a busy machine; never less than the sleep by
	// more than that stamp's lag, nor more than the whole wait.
	m := regexp.MustCompile(`(?m)elapsed    ran (\S+) \((\S+) after submit\)$`).FindStringSubmatch(errOut)
	if m == nil {
		t.Fatalf("--wait does not say how long the job ran:\n%s", errOut)
	}
	ran, err1 := time.ParseDuration(m[1])
	total, err2 := time.ParseDuration(m[2])
	if err1 != nil || err2 != nil || ran < 900*time.Millisecond || total < ran {
		t.Errorf("--wait says the 1 s job ran %s of %s after submit:\n%s", m[1], m[2], errOut)
	}
}

// history folds the accounting history into a row per job, which outlives
// the job records and the events stream; malformed messages are skipped
// and counted; -o json, csv; --since/--until; usage sums per user and
// queue.
func TestCLIHistoryAndUsage(t *testing.T) {
	url := startDevCluster(t)
	c := dialTest(t, url)
	ok := writeFile(t, "ok.json", `{"id":"acct-ok","gang":{"nodes":2,"gpusPerNode":8},"command":["sleep","1"]}`)
	bad := writeFile(t, "bad.json", `{"id":"acct-bad","queue":"q2","gang":{"nodes":1,"gpusPerNode":4},"command":["sh","-c","exit 3"]}`)
	mustSubmit(t, url, ok, "--wait")
	if _, _, code := cli(t, "submit", bad, "--wait", "--nats", url); code != 1 {
		t.Fatalf("a job exiting 3 under --wait: exit %d", code)
	}
	ctx := context.Background()
	// A forged event on a job's subject that is not an event at all.
	if err := c.Bus().NC.Publish(subjects.JobEvent("", "acct-ok", "succeeded"), []byte("{not json")); err != nil {
		t.Fatal(err)
	}
	_ = c.Bus().NC.Flush()
	// The records and the events go (retention); the history stays.
	kv, err := c.Bus().JS.KeyValue(ctx, subjects.BucketJobs)
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"acct-ok", "acct-bad"} {
		if err := kv.Purge(ctx, id); err != nil {
			t.Fatal(err)
		}
	}
	time.Sleep(500 * time.Millisecond) // the server sources the forged message in the background
	evs, err := c.Bus().JS.Stream(ctx, subjects.StreamEvents)
	if err != nil {
		t.Fatal(err)
	}
	if err := evs.Purge(ctx); err != nil {
		t.Fatal(err)
	}

	out, errOut, code := cli(t, "history", "-o", "json", "--nats", url)
	var rows []accounting.Row
	if code != 0 || json.Unmarshal([]byte(out), &rows) != nil || len(rows) != 2 {
		t.Fatalf("history -o json = %d %q %q", code, out, errOut)
	}
	if !strings.Contains(errOut, "skipped 1 malformed message") {
		t.Errorf("history does not say it skipped the malformed message: %q", errOut)
	}
	okRow, badRow := rows[0], rows[1]
	// sleep 1 timed from the running event, which is stamped after the
	// ranks start: 988ms under load.
	if okRow.JobID != "acct-ok" || okRow.State != "succeeded" || okRow.GPUs != 16 || okRow.Nodes != 2 || okRow.ExitCode == nil ||
		*okRow.ExitCode != 0 || okRow.Elapsed < 900*time.Millisecond || okRow.GPUHours <= 0 || okRow.SubmittedAt.IsZero() || okRow.Efficiency <= 0 {
		t.Errorf("acct-ok row = %+v", okRow)
	}
	if badRow.JobID != "acct-bad" || badRow.State != "failed" || badRow.Queue != "q2" || badRow.GPUs != 4 || badRow.ExitCode == nil || *badRow.ExitCode != 3 {
		t.Errorf("acct-bad row = %+v", badRow)
	}

	out, _, code = cli(t, "history", "--state", "failed", "-o", "csv", "--nats", url)
	recs, err := csv.NewReader(strings.NewReader(out)).ReadAll()
	if code != 0 || err != nil || len(recs) != 2 || recs[0][0] != "id" || recs[1][0] != "acct-bad" || recs[1][11] != "3" {
		t.Errorf("history --state failed -o csv = %d %v %q", code, err, out)
	}
	out, _, code = cli(t, "history", "--nats", url)
	if code != 0 || !strings.Contains(out, "GPU-HOURS") || !strings.Contains(out, "acct-ok") {
		t.Errorf("history table = %d %q", code, out)
	}
	hourAgo := time.Now().Add(-time.Hour).UTC().Format(time.RFC3339)
	out, _, code = cli(t, "history", "--since", "48h", "--until", hourAgo, "-o", "json", "--nats", url)
	if code != 0 || strings.TrimSpace(out) != "[]" {
		t.Errorf("history of a window before the jobs = %d %q", code, out)
	}
	for _, args := range [][]string{{"--since", "yesterday"}, {"--since", "1h", "--until", "2h"}, {"-o", "xml"}} {
		if _, errOut, code := cli(t, append([]string{"history", "--nats", url}, args...)...); code != 2 {
			t.Errorf("history %q: exit %d, want 2: %s", args, code, errOut)
		}
	}

	// A gang that started before the window and runs through it has no
	// event in it, yet is in it: its record says so.
	long := writeFile(t, "long.json", `{"id":"acct-long","gang":{"nodes":1,"gpusPerNode":8},"command":["sleep","120"]}`)
	mustSubmit(t, url, long)
	waitCLIState(t, c, "acct-long", "running")
	since := time.Now().UTC().Add(time.Second).Format(time.RFC3339)
	time.Sleep(2 * time.Second) // the window starts after every event of acct-long
	out, errOut, code = cli(t, "history", "--since", since, "-o", "json", "--nats", url)
	rows = nil
	if code != 0 || json.Unmarshal([]byte(out), &rows) != nil || len(rows) != 1 || rows[0].JobID != "acct-long" ||
		rows[0].State != "running" || rows[0].GPUs != 8 || rows[0].Elapsed < time.Second {
		t.Errorf("history of a window acct-long runs through = %d %q %q", code, out, errOut)
	}

	out, errOut, code = cli(t, "usage", "--queue", "default,q2", "-u", "_", "-o", "json", "--nats", url)
	var use []accounting.UsageRow
	if code != 0 || json.Unmarshal([]byte(out), &use) != nil || len(use) != 2 {
		t.Fatalf("usage -o json = %d %q %q", code, out, errOut)
	}
	if use[0].Queue != "default" || use[0].Jobs != 2 || use[0].GPUHours <= 0 || use[1].Queue != "q2" || use[1].Jobs != 1 {
		t.Errorf("usage = %+v", use)
	}
}

// With auth, a user's history is their own jobs' (the server lets them
// read no other); --all-users is refused them, and an admin reads all.
func TestCLIHistoryWithAuthIsTheUsersOwn(t *testing.T) {
	c := startDevClusterWith(t, oneNodeWithAuth)
	as := func(who string, args ...string) (string, string, int) {
		return cli(t, append(args, "--nats", c.NATSURL, "--creds", filepath.Join(c.CredsDir, who+".creds"))...)
	}
	for _, who := range []string{"alice", "bob"} {
		// --wait and queue read the jobs KV through a consumer, which a
		// user may create (they failed with a permissions violation).
		spec := writeFile(t, who+".json", `{"name":"`+who+`-job","gang":{"nodes":1,"gpusPerNode":8},"command":["true"]}`)
		if _, errOut, code := as(who, "submit", "--wait", spec); code != 0 {
			t.Fatalf("%s's submit --wait: %s", who, errOut)
		}
		if out, errOut, code := as(who, "queue", "-a"); code != 0 || !strings.Contains(out, who+"-job") {
			t.Fatalf("%s's queue -a = %d %q %s", who, code, out, errOut)
		}
	}
	ids := func(out string) []string {
		var rows []accounting.Row
		if err := json.Unmarshal([]byte(out), &rows); err != nil {
			t.Fatalf("%v: %q", err, out)
		}
		var out2 []string
		for _, r := range rows {
			out2 = append(out2, r.JobID[:strings.Index(r.JobID+"-", "-")]+"/"+r.Owner)
		}
		return out2
	}
	testenv.Eventually(t, 30*time.Second, func() error {
		out, errOut, code := as("admin", "history", "--all-users", "--state", "succeeded", "-o", "json")
		if got := ids(out); code != 0 || len(got) != 2 {
			return errString(fmt.Sprintf("admin's history --all-users = %d %v %s", code, got, errOut))
		}
		return nil
	})
	out, errOut, code := as("alice", "history", "-o", "json")
	if got := ids(out); code != 0 || len(got) != 1 || got[0] != "alice/alice" {
		t.Errorf("alice's history = %d %v %s", code, got, errOut)
	}
	if _, errOut, code := as("alice", "history", "--all-users"); code == 0 || !strings.Contains(errOut, "only their own") {
		t.Errorf("alice's history --all-users = %d %s; want refused", code, errOut)
	}
}
