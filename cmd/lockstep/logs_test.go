package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"
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
	if _, errOut, code := cli(t, "submit", spec, "--nats", url); code != 0 {
		t.Fatal(errOut)
	}
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
