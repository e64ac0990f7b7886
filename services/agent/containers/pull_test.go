package containers

import (
	"context"
	"strings"
	"testing"

	"github.com/lockstep-dev/lockstep/shared/contract/jobspec"
)

// Pull verifies an image the engine has (Never pulls nothing) and says its
// size; one it lacks fails with a message naming it.
func TestDockerPullReportsSize(t *testing.T) {
	d := engine(t)
	got, err := d.Pull(context.Background(), probeTag, jobspec.PullNever)
	if err != nil {
		t.Fatal(err)
	}
	if got.Pulled || got.Bytes <= 0 {
		t.Errorf("Pull(%s, Never) = %+v, want present and a size", probeTag, got)
	}
	_, err = d.Pull(context.Background(), "lockstep-no-such-image:pull", jobspec.PullNever)
	if err == nil || !strings.Contains(err.Error(), "image lockstep-no-such-image:pull is not on this node") {
		t.Errorf("Pull of a missing image with Never: %v", err)
	}
}
