package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// clientBuildForbids is what the client build must not link: the servers
// and services, the etcd client (and gRPC under it), the telemetry SDK
// and the JSON Schema library. Their package initialisation is most of a
// full binary's start-up.
var clientBuildForbids = regexp.MustCompile(`^(github\.com/nats-io/nats-server|go\.etcd\.io/etcd/(server|client)|google\.golang\.org/grpc|github\.com/santhosh-tekuri/jsonschema|go\.opentelemetry\.io/otel/sdk|go\.opentelemetry\.io/otel/exporters|github\.com/prometheus/|github\.com/docker/|github\.com/moby/|gonum\.org/|github\.com/lockstep-dev/lockstep/(services/(admission|placement|gang|drain|agent|web)$|services/agent/|deploy/|loadtest/|shared/plumbing/(store|config|embedded|testenv|telemetry/otelsdk)$|shared/contract/schemacheck$))`)

func TestClientBuildLinksNoServers(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "-tags", "lockstep_client", ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	deps := strings.Fields(string(out))
	if len(deps) < 50 || !strings.Contains(string(out), "github.com/nats-io/nats.go\n") {
		t.Fatalf("go list -deps gave %d packages, without nats.go: not the CLI's graph", len(deps))
	}
	for _, d := range deps {
		if clientBuildForbids.MatchString(d) {
			t.Errorf("the client build links %s", d)
		}
	}
	// The check itself: the full build links what the client build may not.
	full, err := exec.Command("go", "list", "-deps", ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, full)
	}
	if !clientBuildForbids.MatchString("go.etcd.io/etcd/server/v3/embed") || !strings.Contains(string(full), "go.etcd.io/etcd/server/v3/embed\n") {
		t.Fatal("the forbidden list does not catch the embedded etcd the full build links")
	}
}

// The client build submits and lists jobs, reports admission's rejection
// of a spec that only the JSON Schema refuses (the client leaves the
// schema to admission), and says that server commands are in the full
// build, which its help does not list.
func TestClientBuildSubmitsAndLeavesTheSchemaToAdmission(t *testing.T) {
	bin := buildBinary(t, "lockstep_client")
	url := startDevCluster(t)
	env := append(os.Environ(), "LOCKSTEP_CONFIG="+filepath.Join(t.TempDir(), "config.yaml"))
	run := func(args ...string) (string, string, int) {
		t.Helper()
		cmd := exec.Command(bin, args...)
		cmd.Env = env
		var o, e strings.Builder
		cmd.Stdout, cmd.Stderr = &o, &e
		err := cmd.Run()
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		return o.String(), e.String(), code
	}

	good := writeFile(t, "good.json", `{"name":"lean","gang":{"nodes":1,"gpusPerNode":1},"command":["true"]}`)
	out, errOut, code := run("submit", good, "--nats", url)
	id := strings.TrimSpace(out)
	if code != 0 || !strings.HasPrefix(id, "lean-") {
		t.Fatalf("submit: exit %d, out %q, stderr %s", code, out, errOut)
	}
	// gang.nodes: 0 breaks only the schema's minimum: the Go rules pass it.
	bad := writeFile(t, "bad.json", `{"name":"zero","gang":{"nodes":0,"gpusPerNode":1},"command":["true"]}`)
	out, errOut, code = run("submit", bad, "--nats", url)
	if code != 1 || !strings.HasPrefix(out, "zero-") || !strings.Contains(errOut, "rejected") || !strings.Contains(errOut, "gang.nodes") {
		t.Fatalf("submit of a spec the schema refuses: exit %d, out %q, stderr %s", code, out, errOut)
	}
	// An ID admission would not file the verdict under is refused here,
	// before anything is sent: the verdict would be waited for in vain.
	badID := writeFile(t, "bad-id.json", `{"id":"MyJob","gang":{"nodes":1,"gpusPerNode":1},"command":["true"]}`)
	out, errOut, code = run("submit", badID, "--nats", url)
	if code != 1 || out != "" || !strings.Contains(errOut, "id: ") {
		t.Fatalf("submit of an ID that is not a DNS label: exit %d, out %q, stderr %s", code, out, errOut)
	}
	// -a: the job runs `true`, and may have finished already.
	out, errOut, code = run("queue", "-a", "--nats", url)
	if code != 0 || !strings.Contains(out, id) {
		t.Fatalf("queue: exit %d, out %s, stderr %s", code, out, errOut)
	}

	_, errOut, code = run("dev", "--insecure")
	if code != 2 || !strings.Contains(errOut, "not in this client build") {
		t.Fatalf("dev in the client build: exit %d, stderr %s", code, errOut)
	}
	out, _, code = run("version")
	if code != 0 || !strings.Contains(out, "client build") {
		t.Fatalf("client build's version should say so: exit %d, %q", code, out)
	}
	out, _, _ = run("--help")
	if !strings.Contains(out, "submit") || regexp.MustCompile(`(?m)^\s+dev\s`).MatchString(out) {
		t.Fatalf("client build's help should list submit and hide dev:\n%s", out)
	}
	// node's own help and usage error name no subcommand the build hides.
	out, _, _ = run("node", "--help")
	_, errOut, _ = run("node")
	if !strings.Contains(out, "drain") || strings.Contains(out, "remove") || strings.Contains(errOut, "remove") {
		t.Fatalf("client build's node help should name drain and not remove:\n%s\n%s", out, errOut)
	}
}
