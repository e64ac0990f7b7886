package devcluster_test

import (
	"strings"
	"testing"
	"time"

	"github.com/lockstep-dev/lockstep/shared/contract/domain"
)

// A container job asking to run as root is rejected by admission in a
// queue without allowRoot (every queue, with no policy file), with a
// reason naming the rule; it never reaches a node. The nodes run an
// engine: on a cluster without one, admission rejects every container
// job as unschedulable before its queue's policy is asked.
func TestContainerRootRefusedOnDefaultQueue(t *testing.T) {
	h, _ := containerCluster(t)
	for _, user := range []string{"root", "0:0"} {
		id := h.submit(`{"gang":{"nodes":1,"gpusPerNode":1},"command":["/probe"],
			"container":{"image":"` + probeImage + `","pullPolicy":"Never","user":"` + user + `"}}`)
		j := h.waitFor(id, 30*time.Second, func(j domain.Job) bool { return j.State.Terminal() })
		want := `RootContainer: queue "default": the container would run as root (container.user "` + user + `"`
		if j.State != domain.StateRejected || !strings.Contains(j.Reason, want) || !strings.Contains(j.Reason, "(allowRoot)") {
			t.Errorf("user %s: ended %s: %q, want rejected with %q", user, j.State, j.Reason, want)
		}
		if j.Placement != nil && len(j.Placement.Nodes) > 0 {
			t.Errorf("user %s: placed on %+v", user, j.Placement.Nodes)
		}
	}
}
