package web

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/lockstep-dev/lockstep/shared/contract/domain"
	"github.com/lockstep-dev/lockstep/shared/contract/events"
	"github.com/lockstep-dev/lockstep/shared/contract/subjects"
	"github.com/lockstep-dev/lockstep/shared/plumbing/testenv"
)

func TestPagesShowWhatTheClusterHolds(t *testing.T) {
	r := startRig(t)
	now := time.Now().UTC()
	r.addNode(t, "n1", "spine-1", "leaf-1", 2)
	r.addNode(t, "n2", "spine-1", "leaf-2", 2)
	run := runningJob("train-1", "", "n1", now.Add(-time.Minute))
	r.addJob(t, run)
	r.claim(t, run)
	r.addJob(t, pendingJob("low", "", 0, now.Add(-2*time.Minute)))
	r.addJob(t, pendingJob("high", "", 9, now))
	r.event(t, events.Event{Type: events.Admitted, JobID: "train-1", Time: run.SubmittedAt, Queue: "default"})
	r.event(t, events.Event{Type: events.Running, JobID: "train-1", Time: run.RunningAt, Attempt: 1})

	testenv.Eventually(t, 10*time.Second, func() error {
		code, body, _ := r.get(t, "/fabric", "")
		for _, want := range []string{`data-node="n1"`, `data-node="n2"`, `data-switch="leaf-1"`, `data-switch="leaf-2"`, `data-switch="spine-1"`,
			`data-job="train-1"`, "n1 GPU 1: job train-1 (train-1), rank 1", "2/4 GPUs free", `style="background:hsl(`} {
			if code != http.StatusOK || !strings.Contains(body, want) {
				return errorf("fabric (%d) lacks %q", code, want)
			}
		}
		return nil
	})
	testenv.Eventually(t, 10*time.Second, func() error {
		code, body, _ := r.get(t, "/queue", "")
		if code != http.StatusOK || !strings.Contains(body, `data-job="train-1"`) || !inOrder(body, `data-job="high"`, `data-job="low"`) || !strings.Contains(body, `class="dot" style="background:hsl(`) {
			return errorf("queue (%d): running job or pending order missing:\n%s", code, body)
		}
		return nil
	})
	_, _, hdr := r.get(t, "/queue", "")
	if !strings.Contains(hdr.Get("Content-Security-Policy"), "default-src 'self'") || hdr.Get("X-Frame-Options") != "DENY" {
		t.Errorf("security headers: %v", hdr)
	}
	testenv.Eventually(t, 10*time.Second, func() error {
		_, body := r.mustGet(t, "/jobs/train-1")
		if !inOrder(body, `id="timeline"`, "admitted", "running") || !strings.Contains(body, "n1") {
			return errorf("job page lacks the timeline or placement")
		}
		if strings.Contains(body, "/jobs/train-1/cancel") {
			return errorf("a read-only dashboard shows a cancel button")
		}
		return nil
	})
	// A finished job's page: the replica keeps little of its record, so
	// the page reads it from the bucket.
	done := runningJob("done-1", "", "n2", now.Add(-time.Hour))
	done.State, done.EndedAt = domain.StateSucceeded, now
	r.addJob(t, done)
	testenv.Eventually(t, 10*time.Second, func() error {
		if _, body := r.mustGet(t, "/jobs/done-1"); !strings.Contains(body, `id="job-state">succeeded<`) {
			return errorf("finished job's page lacks its state")
		}
		return nil
	})
	_, body := r.mustGet(t, "/cluster")
	for _, want := range []string{`id="utilization"`, "50.0%", "<polyline", "Jobs by state"} {
		if !strings.Contains(body, want) {
			t.Errorf("cluster page lacks %q", want)
		}
	}
	for path, want := range map[string]int{"/": http.StatusSeeOther, "/jobs/nope": http.StatusNotFound, "/jobs/a..b": http.StatusBadRequest,
		"/live/nope": http.StatusNotFound, "/static/style.css": http.StatusOK, "/signin": http.StatusSeeOther} {
		if code, _, _ := r.get(t, path, ""); code != want {
			t.Errorf("GET %s: %d, want %d", path, code, want)
		}
	}
}

func TestLivePagesFollowChanges(t *testing.T) {
	r := startRig(t)
	r.addNode(t, "n1", "spine-1", "leaf-1", 2)
	queue := r.stream(t, "/live/queue", "")
	if name, data := queue.next(t); name != "update" || !strings.Contains(data, "Nothing pending") {
		t.Fatalf("first update %s: %s", name, data)
	}
	fabric := r.stream(t, "/live/fabric", "")
	fabric.next(t)
	now := time.Now().UTC()
	r.addJob(t, pendingJob("fresh", "", 0, now))
	queue.until(t, `data-job="fresh"`, 10*time.Second)

	run := runningJob("fresh", "", "n1", now)
	if _, _, err := r.jobs.Update(context.Background(), "fresh", func(j *domainJob) (bool, error) { *j = run; return true, nil }); err != nil {
		t.Fatal(err)
	}
	r.claim(t, run)
	fabric.until(t, `data-job="fresh"`, 10*time.Second)

	job := r.stream(t, "/live/jobs/fresh", "")
	job.next(t)
	r.event(t, events.Event{Type: events.Running, JobID: "fresh", Time: now, Attempt: 1})
	job.until(t, "<b>running</b>", 10*time.Second)

	cluster := r.stream(t, "/live/cluster", "")
	if _, data := cluster.next(t); !strings.Contains(data, "100.0%") {
		t.Errorf("cluster update lacks the utilisation: %s", data)
	}
}

func TestLogsStreamARanksOutput(t *testing.T) {
	r := startRig(t)
	r.addJob(t, runningJob("talky", "", "n1", time.Now()))
	for i, line := range []string{"step 1 loss 2.5", "step 2 loss 1.9"} {
		if err := r.env.Bus.PublishJSON(context.Background(), subjects.Logs("", "talky", 1, "stdout"), "", line); err != nil {
			t.Fatal(i, err)
		}
	}
	// At once: a job the page's follower has not delivered yet is read
	// from the KV (it was once a 404 for a moment after submission).
	logs := r.stream(t, "/jobs/talky/logs?rank=1", "")
	if name, data := logs.next(t); name != "line" || !strings.Contains(data, "step 1 loss 2.5") {
		t.Fatalf("first line %s %q", name, data)
	}
	logs.until(t, "step 2 loss 1.9", 10*time.Second)
	for path, want := range map[string]int{"/jobs/talky/logs?rank=-1": 400, "/jobs/talky/logs": 400, "/jobs/none/logs?rank=0": 404} {
		if code, _, _ := r.get(t, path, ""); code != want {
			t.Errorf("GET %s: %d, want %d", path, code, want)
		}
	}
}

func TestActionsNeedAuth(t *testing.T) {
	r := startRig(t)
	r.addJob(t, runningJob("j", "", "n1", time.Now()))
	for _, path := range []string{"/jobs/j/cancel", "/jobs/j/checkpoint"} {
		if code, body, _ := r.post(t, path, "", "", url.Values{}); code != http.StatusForbidden {
			t.Errorf("POST %s without auth: %d %s", path, code, body)
		}
	}
	j, _, err := r.jobs.Get(context.Background(), "j")
	if err != nil || j.State != "running" {
		t.Errorf("job changed: %v %v", j.State, err)
	}
}

func inOrder(s string, parts ...string) bool {
	for _, p := range parts {
		i := strings.Index(s, p)
		if i < 0 {
			return false
		}
		s = s[i+len(p):]
	}
	return true
}
