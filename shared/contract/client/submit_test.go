package client_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/lockstep-dev/lockstep/shared/contract/client"
	"github.com/lockstep-dev/lockstep/shared/contract/subjects"
	"github.com/lockstep-dev/lockstep/shared/plumbing/testenv"
)

// SubmitMany publishes more specs than it keeps in flight at once, in
// order, each under its own ID; a spec that fails its check is not sent
// and says why, the others are; a resubmitted ID is the stream's
// duplicate and, with no record of another owner, not an error.
func TestSubmitMany(t *testing.T) {
	env := testenv.Start(t)
	ctx := context.Background()
	cl, err := client.Dial(ctx, env.NATSURL)
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	const n = 1500
	raws := make([][]byte, n)
	for i := range raws {
		raws[i] = fmt.Appendf(nil, `{"id":"many-%d","gang":{"nodes":1,"gpusPerNode":1},"command":["true"]}`, i)
	}
	raws[7] = []byte(`{"id":"many-7","gang":{"nodes":1,"gpusPerNode":1}}`)
	got := cl.SubmitMany(ctx, raws, client.SubmitOptions{Workdir: "/scratch"})
	for i, r := range got {
		switch {
		case i == 7:
			if r.Err == nil || !strings.Contains(r.Err.Error(), "command") {
				t.Errorf("spec 7 without a command: %+v", r)
			}
		case r.Err != nil || r.ID != fmt.Sprintf("many-%d", i):
			t.Errorf("spec %d: %+v", i, r)
		}
	}
	s, err := env.Bus.JS.Stream(ctx, subjects.StreamJobs)
	if err != nil {
		t.Fatal(err)
	}
	info, err := s.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if info.State.Msgs != n-1 {
		t.Errorf("%d submissions in the stream, want %d", info.State.Msgs, n-1)
	}
	// The last one carries the working directory filled in.
	m, err := s.GetLastMsgForSubject(ctx, subjects.Submit)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(m.Data), `"workdir":"/scratch"`) || m.Header.Get(subjects.HeaderMsgID) != fmt.Sprintf("many-%d", n-1) {
		t.Errorf("last submission %s (msg id %q)", m.Data, m.Header.Get(subjects.HeaderMsgID))
	}
}
