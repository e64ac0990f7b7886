package main

import (
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/lockstep-dev/lockstep/deploy/devcluster"
	"github.com/lockstep-dev/lockstep/shared/plumbing/testenv"
)

// A dead node is shown down with since when, leaves the topology's totals at once and node list once
// removed; a live one is refused removal, saying why.
func TestCLINodeRemove(t *testing.T) {
	c := startDevClusterWith(t, func(c *devcluster.Config) { c.NodeTTL = 2 * time.Second })
	conn := []string{"--nats", c.NATSURL, "--etcd", c.EtcdEndpoint}
	if _, errOut, code := cli(t, append([]string{"node", "remove", "node-01"}, conn...)...); code != 1 || !strings.Contains(errOut, "node-01 is up") {
		t.Errorf("removing a live node: %d %q", code, errOut)
	}
	c.Kill(devcluster.AgentName("node-02"))
	testenv.Eventually(t, 30*time.Second, func() error {
		out, _, _ := cli(t, "topology", "--nats", c.NATSURL)
		if !strings.Contains(out, "8/8") || strings.Contains(out, "/16") {
			return errString(fmt.Sprintf("topology still counts the dead node: %s", out))
		}
		return nil
	})
	testenv.Eventually(t, 30*time.Second, func() error {
		out, _, _ := cli(t, "node", "list", "node-02", "--nats", c.NATSURL)
		if !regexp.MustCompile(`node-02\s+down \d+s\s`).MatchString(out) {
			return errString("node list does not say since when node-02 is down:\n" + out)
		}
		wide, _, _ := cli(t, "node", "list", "node-02", "-o", "wide", "--nats", c.NATSURL)
		if !strings.Contains(wide, "SINCE") || !regexp.MustCompile(`node-02 .* \d{4}-\d\d-\d\dT`).MatchString(wide) {
			return errString("node list -o wide lacks the time it went down:\n" + wide)
		}
		return nil
	})
	if _, errOut, code := cli(t, append([]string{"node", "remove", "node-02"}, conn...)...); code != 0 {
		t.Fatalf("removing a dead, idle node: %d %q", code, errOut)
	}
	testenv.Eventually(t, 10*time.Second, func() error {
		out, _, _ := cli(t, "node", "list", "--nats", c.NATSURL)
		if strings.Contains(out, "node-02") || !strings.Contains(out, "node-01") {
			return errString(fmt.Sprintf("node list after the removal:\n%s", out))
		}
		return nil
	})
}
