package devcluster_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/lockstep-dev/lockstep/deploy/devcluster"
)

// chromium finds a Chromium or Chrome binary ($LOCKSTEP_CHROMIUM first).
// Without one the browser test skips, unless LOCKSTEP_REQUIRE_BROWSER=1
// (CI, which installs Debian's chromium) makes that a failure.
func chromium(t *testing.T) string {
	t.Helper()
	candidates := []string{os.Getenv("LOCKSTEP_CHROMIUM"), "chromium", "chromium-browser", "google-chrome", "google-chrome-stable", "headless-shell"}
	for _, name := range candidates {
		if name == "" {
			continue
		}
		if path, err := exec.LookPath(name); err == nil {
			return path
		}
	}
	msg := "no Chromium found (tried $LOCKSTEP_CHROMIUM, chromium, chromium-browser, google-chrome, headless-shell): install Debian's chromium package to run the dashboard's browser test"
	if os.Getenv("LOCKSTEP_REQUIRE_BROWSER") == "1" {
		t.Fatal(msg + " (LOCKSTEP_REQUIRE_BROWSER=1 requires it)")
	}
	t.Skip(msg)
	return ""
}

// artifacts is where the screenshots go: $LOCKSTEP_ARTIFACTS/<test> when
// set (CI keeps it), else the test's artifact directory (kept with
// go test -artifacts).
func artifacts(t *testing.T) string {
	t.Helper()
	dir := t.ArtifactDir()
	if root := os.Getenv("LOCKSTEP_ARTIFACTS"); root != "" {
		dir = filepath.Join(root, t.Name())
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// TestDashboardInABrowser drives the dashboard of a dev cluster in
// headless Chromium: the fabric shows every node and switch, a submitted
// job appears in the queue and on its GPUs without a reload, its page
// shows the timeline, and each page is captured.
func TestDashboardInABrowser(t *testing.T) {
	chrome := chromium(t)
	shots := artifacts(t)
	c, cl := startShaped(t, devcluster.Config{Nodes: 4, GPUsPerNode: 4, Leaves: 2, WebListen: "127.0.0.1:0"})
	base := "http://" + c.WebAddr()

	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(chrome), chromedp.WindowSize(1400, 1000))
	if os.Geteuid() == 0 {
		opts = append(opts, chromedp.NoSandbox) // Chromium refuses its sandbox as root
	}
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	t.Cleanup(cancelAlloc)
	fabric, cancelBrowser := chromedp.NewContext(allocCtx)
	t.Cleanup(cancelBrowser)
	// The first run on a tab's own context starts it: run on a context
	// derived from it (a timeout), its end would close the tab.
	if err := chromedp.Do(fabric); err != nil {
		t.Fatalf("start %s: %v", chrome, err)
	}
	do := func(ctx context.Context, what string, steps ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		ctx, cancel := context.WithTimeout(ctx, 60*time.Second)
		defer cancel()
		if err := chromedp.Do(ctx, steps...); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	}
	shot := func(ctx context.Context, name string) {
		t.Helper()
		png := value(t, ctx, "screenshot "+name, chromedp.FullScreenshot(100))
		path := filepath.Join(shots, name+".png")
		if err := os.WriteFile(path, png, 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("screenshot: %s", path)
	}
	// The marker is gone if the page reloads.
	mark := func(ctx context.Context, page string) {
		t.Helper()
		value(t, ctx, page+" marker", chromedp.Evaluate[string](`window.lockstepNoReload = "kept"`))
	}
	kept := func(ctx context.Context, page string) {
		t.Helper()
		if v := value(t, ctx, page+" marker", chromedp.Evaluate[string](`window.lockstepNoReload || "reloaded"`)); v != "kept" {
			t.Errorf("the %s page reloaded instead of updating in place", page)
		}
	}

	// Fabric: every node and every switch.
	do(fabric, "fabric page", chromedp.Navigate(base+"/fabric"), chromedp.WaitVisible(chromedp.CSS("#fabric-totals")),
		chromedp.WaitVisible(chromedp.CSS("#conn.up")))
	nodes := value(t, fabric, "nodes", chromedp.Evaluate[[]string](`Array.from(document.querySelectorAll(".node")).map(n => n.dataset.node)`))
	switches := value(t, fabric, "switches", chromedp.Evaluate[[]string](`Array.from(document.querySelectorAll("[data-switch]")).map(n => n.dataset.switch)`))
	if want := []string{"node-01", "node-02", "node-03", "node-04"}; strings.Join(nodes, ",") != strings.Join(want, ",") {
		t.Errorf("fabric shows nodes %v, want %v", nodes, want)
	}
	if got := strings.Join(switches, ","); got != "spine-1,leaf-1,leaf-2" {
		t.Errorf("fabric shows switches %s", got)
	}
	shot(fabric, "fabric-idle")
	mark(fabric, "fabric")

	// Queue, in a second tab, open before the job is submitted.
	queue, cancelQueue := chromedp.NewContext(fabric)
	t.Cleanup(cancelQueue)
	if err := chromedp.Do(queue); err != nil {
		t.Fatalf("open a second tab: %v", err)
	}
	do(queue, "queue page", chromedp.Navigate(base+"/queue"), chromedp.WaitVisible(chromedp.CSS("#pending")),
		chromedp.WaitVisible(chromedp.CSS("#conn.up")))
	mark(queue, "queue")

	id, err := cl.Submit(context.Background(), []byte(`{"id":"web-gang","name":"web","gang":{"nodes":2,"gpusPerNode":4},"command":["sleep","60"]}`))
	if err != nil {
		t.Fatalf("submit: %v", err)
	}
	do(queue, "job in the queue", chromedp.WaitVisible(chromedp.CSS(fmt.Sprintf(`tr[data-job=%q]`, id))))
	kept(queue, "queue")
	shot(queue, "queue")
	value(t, fabric, "job on its GPUs", chromedp.Poll[bool](fmt.Sprintf(`document.querySelectorAll('a.gpu[data-job=%q]').length === 8`, id)))
	kept(fabric, "fabric")
	shot(fabric, "fabric")

	// The job's page: its timeline, up to running.
	do(fabric, "job page", chromedp.Navigate(base+"/jobs/"+id), chromedp.WaitVisible(chromedp.CSS("#timeline")))
	value(t, fabric, "timeline up to running", chromedp.Poll[bool](`document.querySelector("#timeline").innerText.includes("running")`))
	timeline := value(t, fabric, "timeline", chromedp.Evaluate[string](`document.querySelector("#timeline").innerText`))
	for _, want := range []string{"admitted", "reserved", "running"} {
		if !strings.Contains(timeline, want) {
			t.Errorf("timeline lacks %s:\n%s", want, timeline)
		}
	}
	shot(fabric, "job")

	do(fabric, "cluster page", chromedp.Navigate(base+"/cluster"), chromedp.WaitVisible(chromedp.CSS("#utilization")))
	shot(fabric, "cluster")
	if err := cl.Cancel(context.Background(), id, "test over"); err != nil {
		t.Fatal(err)
	}
}

// value runs one browser action and returns what it produced.
func value[T any](t *testing.T, ctx context.Context, what string, a chromedp.Action[T]) T {
	t.Helper()
	ctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	v, err := chromedp.Run(ctx, a)
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	return v
}
