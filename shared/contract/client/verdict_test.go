package client_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cockroachdb/errors"
	"github.com/nats-io/nats.go"

	"github.com/lockstep-dev/lockstep/shared/contract/client"
	"github.com/lockstep-dev/lockstep/shared/contract/domain"
	"github.com/lockstep-dev/lockstep/shared/contract/events"
	"github.com/lockstep-dev/lockstep/shared/contract/jobspec"
	"github.com/lockstep-dev/lockstep/shared/contract/subjects"
	"github.com/lockstep-dev/lockstep/shared/plumbing/auth"
	"github.com/lockstep-dev/lockstep/shared/plumbing/embedded"
	"github.com/lockstep-dev/lockstep/shared/plumbing/testenv"
)

// A submission's verdict takes an event as its cue and the record as the
// verdict, here as alice on a cluster with auth (her own events and a
// direct get of the record are all her permissions need). This test plays
// admission: it answers each submission as the spec's name says.
func TestVerdictTakesTheRecordNotTheEvent(t *testing.T) {
	env := testenv.Start(t, testenv.WithAuth())
	ctx := context.Background()
	alice := auth.Identity{Name: "alice", Role: auth.RoleUser}
	b, _ := env.ConnectAs(t, alice)
	cl, err := client.New(ctx, b, alice.Name)
	if err != nil {
		t.Fatal(err)
	}
	store := env.Jobs(t)
	record := func(id, owner string, state domain.State, reason string) domain.Job {
		j := domain.Job{ID: id, Spec: jobspec.Spec{ID: id}, State: state, Reason: reason, Owner: owner, SubmittedAt: time.Now()}
		if err := store.Create(ctx, j); err != nil {
			t.Error(err)
		}
		return j
	}
	announce := func(typ events.Type, j domain.Job) {
		if err := env.Bus.PublishEvent(ctx, events.ForJob(typ, j, time.Now())); err != nil {
			t.Error(err)
		}
	}
	// forge publishes an event that no record backs, as anyone allowed to
	// publish on the subject could.
	forge := func(typ events.Type, id string) {
		if err := env.Bus.NC.Publish(subjects.JobEvent(alice.Name, id, string(typ)), []byte(`{}`)); err != nil {
			t.Error(err)
		}
	}
	answers := map[string]func(id string){
		"admitted": func(id string) {
			forge(events.Rejected, id) // before the record: a claim only
			announce(events.Admitted, record(id, alice.Name, domain.StatePending, ""))
		},
		"rejected": func(id string) {
			forge(events.Admitted, id)
			announce(events.Rejected, record(id, alice.Name, domain.StateRejected, "gang: needs 9 nodes, the cluster has 8"))
		},
		// The record is written, its event lost: the last read finds it.
		"unannounced": func(id string) { record(id, alice.Name, domain.StatePending, "") },
		"forged":      func(id string) { forge(events.Rejected, id) },
		"silent":      func(string) {},
		// Bob's job took the ID (admission wrote nothing for alice's).
		"taken": func(id string) { announce(events.Admitted, record(id, "bob", domain.StatePending, "")) },
	}
	// A plain subscription sees the stream's duplicates too: each ID is
	// answered once, as admission answers the one message the stream keeps.
	// An answer still being written when the test ends (its verdict was
	// read from the record before the event went out) is finished before
	// the cluster closes: the deferred stop waits for it.
	answered := map[string]bool{}
	var answering sync.Mutex
	stopped := false
	sub, err := env.Bus.NC.Subscribe(subjects.SubmitAs(alice.Name), func(m *nats.Msg) {
		answering.Lock()
		defer answering.Unlock()
		if stopped {
			return
		}
		spec, err := jobspec.Parse(m.Data)
		if err != nil {
			t.Error(err)
			return
		}
		if id := m.Header.Get(subjects.HeaderMsgID); !answered[id] {
			answered[id] = true
			answers[spec.Name](id)
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	// The server must hold the subscription before anything is sent.
	if err := env.Bus.NC.Flush(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		_ = sub.Unsubscribe()
		answering.Lock()
		stopped = true
		answering.Unlock()
	}()
	// The subscription is on another connection than alice's submissions.
	if err := env.Bus.NC.Flush(); err != nil {
		t.Fatal(err)
	}

	for _, tc := range []struct {
		name            string
		known, rejected bool
		reason          string
		taken           bool
	}{
		{name: "admitted", known: true},
		{name: "rejected", known: true, rejected: true, reason: "gang: needs 9 nodes, the cluster has 8"},
		{name: "unannounced", known: true},
		{name: "forged"}, // no record: no verdict, whatever the event says
		{name: "silent"}, // admission behind: no verdict
		{name: "taken", taken: true},
	} {
		raw := []byte(`{"name":"` + tc.name + `","gang":{"nodes":1,"gpusPerNode":1},"command":["true"]}`)
		s, err := cl.SubmitOne(ctx, raw, client.SubmitOptions{})
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		// A verdict after a cue ends the wait when the record is read: the
		// bound is for a loaded machine.
		wait := time.Second
		if tc.known && tc.name != "unannounced" {
			wait = 20 * time.Second
		}
		start := time.Now()
		v, err := s.Verdict(ctx, wait)
		if tc.known && wait > time.Second && time.Since(start) > wait/2 {
			// Only the last read at the wait's end found it: the cue was lost.
			t.Errorf("%s: the verdict came after %s, not on its cue", tc.name, time.Since(start))
		}
		if tc.taken {
			if !errors.Is(err, client.ErrIDTaken) {
				t.Errorf("%s: verdict %+v, %v; want ErrIDTaken", tc.name, v, err)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if v.ID != s.ID || !jobspec.ValidID(v.ID) || v.Known != tc.known || v.Rejected != tc.rejected || v.Reason != tc.reason {
			t.Errorf("%s: verdict %+v, want known %v, rejected %v, reason %q", tc.name, v, tc.known, tc.rejected, tc.reason)
		}
	}

	// The same ID again is the stream's duplicate: the first submission's
	// record answers.
	raw := []byte(`{"id":"again-1","name":"rejected","gang":{"nodes":1,"gpusPerNode":1},"command":["true"]}`)
	for i := range 2 {
		s, err := cl.SubmitOne(ctx, raw, client.SubmitOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if v, err := s.Verdict(ctx, 20*time.Second); err != nil || !v.Rejected || v.ID != "again-1" {
			t.Errorf("submission %d of again-1: %+v, %v", i+1, v, err)
		}
	}
	// An array's verdict is its tasks' records: not awaited here.
	array := []byte(`{"name":"sweep","array":{"indexes":"0-3"},"gang":{"nodes":1,"gpusPerNode":1},"command":["true"]}`)
	if _, err := cl.SubmitOne(ctx, array, client.SubmitOptions{}); err == nil || !strings.Contains(err.Error(), "array") {
		t.Errorf("SubmitOne of an array: %v", err)
	}
}

// Against a NATS on which no Lockstep service has run (no streams, no
// bucket), Dial succeeds (it binds nothing), and a submission and a read
// of the records each say why they fail.
func TestNoServicesYetIsExplained(t *testing.T) {
	ns, err := embedded.StartNATS(embedded.NATSConfig{Listen: "127.0.0.1:0", StoreDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer ns.Close()
	ctx := context.Background()
	cl, err := client.Dial(ctx, ns.URL())
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	raw := []byte(`{"name":"early","gang":{"nodes":1,"gpusPerNode":1},"command":["true"]}`)
	_, submitErr := cl.SubmitOne(ctx, raw, client.SubmitOptions{})
	_, readErr := cl.Job(ctx, "early-1")
	for what, err := range map[string]error{"submit": submitErr, "read": readErr} {
		if hints := errors.FlattenHints(err); !strings.Contains(hints, "no Lockstep services have run") {
			t.Errorf("%s: %v (hints %q)", what, err, hints)
		}
	}
}
