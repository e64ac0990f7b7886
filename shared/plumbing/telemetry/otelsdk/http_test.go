package otelsdk_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/lockstep-dev/lockstep/shared/plumbing/telemetry"
	"github.com/lockstep-dev/lockstep/shared/plumbing/telemetry/otelsdk"
	"github.com/lockstep-dev/lockstep/shared/plumbing/testenv"
)

func TestEndpoints(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	tel, err := otelsdk.Setup(ctx, otelsdk.Config{Service: "test"})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = tel.Shutdown(context.Background()) }()
	h := telemetry.NewHealth()
	h.Require("gang", "drain")
	addr, err := otelsdk.Serve(ctx, "127.0.0.1:0", otelsdk.Handler(tel, h))
	if err != nil {
		t.Fatal(err)
	}
	base := "http://" + addr
	if code, _ := testenv.HTTPGet(t, base+"/healthz"); code != 200 {
		t.Errorf("/healthz = %d", code)
	}
	if code, body := testenv.HTTPGet(t, base+"/readyz"); code != 503 || !strings.Contains(body, "no service") {
		t.Errorf("/readyz with nothing serving = %d %q", code, body)
	}
	natsUp := true
	remove := h.Add("gang/r1", func(context.Context) error {
		if !natsUp {
			return errors.New("nats: CONNECTING")
		}
		return nil
	})
	if code, body := testenv.HTTPGet(t, base+"/readyz"); code != 503 || !strings.Contains(body, "[-] drain: not serving yet") {
		t.Errorf("/readyz with drain missing = %d %q", code, body)
	}
	removeDrain := h.Add("drain", func(context.Context) error { return nil })
	defer removeDrain()
	if code, body := testenv.HTTPGet(t, base+"/readyz"); code != 200 || !strings.Contains(body, "[+] gang/r1 ok") {
		t.Errorf("/readyz serving = %d %q", code, body)
	}
	natsUp = false
	if code, body := testenv.HTTPGet(t, base+"/readyz"); code != 503 || !strings.Contains(body, "nats: CONNECTING") {
		t.Errorf("/readyz disconnected = %d %q", code, body)
	}
	remove()

	svc := tel.Service("admission", "r1")
	svc.Metrics.Submissions.Add(ctx, 3)
	svc.Metrics.GangWait.Record(ctx, 1.5)
	_, body := testenv.HTTPGet(t, base+"/metrics")
	for _, want := range []string{"lockstep_submissions_total 3", "lockstep_gang_wait_seconds_count 1", "go_goroutines"} {
		if !strings.Contains(body, want) {
			t.Errorf("/metrics lacks %q", want)
		}
	}
	if tel.Service("admission", "r1") != svc {
		t.Error("Service is not cached per instance")
	}
}
