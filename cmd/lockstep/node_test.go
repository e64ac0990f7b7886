package main

import (
	"context"
	"strings"
	"testing"

	"github.com/lockstep-dev/lockstep/shared/plumbing/store"
)

// A typo in a node name is an error naming it, and writes no nodestate
// key for a node that does not exist.
func TestCLINodeDrainOfUnknownNode(t *testing.T) {
	c := startDevClusterC(t)
	url := c.NATSURL
	for _, args := range [][]string{{"drain", "nod-03", "--reason", "typo"}, {"resume", "nod-03"}} {
		out, errOut, code := cli(t, append(append([]string{"node"}, args...), "--nats", url)...)
		if code != 1 || !strings.Contains(errOut, `no node named "nod-03"`) || out != "" {
			t.Errorf("node %s: exit %d, stdout %q, stderr %q", args[0], code, out, errOut)
		}
	}
	etcd, err := store.Connect(context.Background(), c.EtcdEndpoint)
	if err != nil {
		t.Fatal(err)
	}
	defer etcd.Close()
	resp, err := etcd.Get(context.Background(), store.NodeStateKey("nod-03"))
	if err != nil || len(resp.Kvs) != 0 {
		t.Errorf("nodestate of the unknown node: %v %v", resp, err)
	}
	// A known node drains, and node list NODE shows just it.
	if out, errOut, code := cli(t, "node", "drain", "node-01", "--reason", "maintenance", "--nats", url); code != 0 || out != "node node-01 draining\n" {
		t.Errorf("node drain node-01: %d %q %q", code, out, errOut)
	}
	out, errOut, code := cli(t, "node", "list", "node-02", "--nats", url)
	if code != 0 || !strings.Contains(out, "node-02") || strings.Contains(out, "node-01") {
		t.Errorf("node list node-02: %d %q %q", code, out, errOut)
	}
	if _, errOut, code := cli(t, "node", "list", "nod-03", "--nats", url); code != 1 || !strings.Contains(errOut, `no node named "nod-03"`) || !strings.Contains(errOut, "2 nodes") {
		t.Errorf("node list nod-03: %d %q", code, errOut)
	}
}

// cancel and checkpoint of a job that ended say so and exit non-zero.
func TestCLIRequestOfEndedJob(t *testing.T) {
	url := startDevCluster(t)
	spec := writeFile(t, "quick.json", `{"id":"quick-1","gang":{"nodes":1,"gpusPerNode":8},"command":["true"]}`)
	mustSubmit(t, url, spec, "--wait")
	for _, verb := range []string{"cancel", "checkpoint"} {
		out, errOut, code := cli(t, verb, "quick-1", "--nats", url)
		if code != 1 || out != "" || !strings.Contains(errOut, "job quick-1 already ended (succeeded)") {
			t.Errorf("%s of an ended job: exit %d, stdout %q, stderr %q", verb, code, out, errOut)
		}
	}
}
