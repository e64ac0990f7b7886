package client_test

import (
	"context"
	"strings"
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

// SubmitForVerdict takes an event as its cue and the record as the
// verdict, here as alice on a cluster with auth (her own events and a
// direct get of the record are all her permissions need). This test plays
// admission: it answers each submission as the scenario says.
func TestSubmitForVerdictTakesTheRecordNotTheEvent(t *testing.T) {
	env := testenv.Start(t, testenv.WithAuth())
	ctx := context.Background()
	alice := auth.Identity{Name: "alice", Role: auth.RoleUser}
	b, _ := env.ConnectAs(t, alice)
	cl, err := client.New(ctx, b, alice.Name)
	if err != nil {
		t.Fatal(err)
	}
	store := env.Jobs(t)
	record := func(id string, state domain.State, reason string) domain.Job {
		j := domain.Job{ID: id, Spec: jobspec.Spec{ID: id}, State: state, Reason: reason, Owner: alice.Name, SubmittedAt: time.Now()}
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
			announce(events.Admitted, record(id, domain.StatePending, ""))
		},
		"rejected": func(id string) {
			forge(events.Admitted, id)
			announce(events.Rejected, record(id, domain.StateRejected, "gang: needs 9 nodes, the cluster has 8"))
		},
		"forged": func(id string) { forge(events.Rejected, id) },
		"silent": func(string) {},
	}
	sub, err := env.Bus.NC.Subscribe(subjects.SubmitAs(alice.Name), func(m *nats.Msg) {
		spec, err := jobspec.Parse(m.Data)
		if err != nil {
			t.Error(err)
			return
		}
		answers[spec.Name](m.Header.Get(subjects.HeaderMsgID))
	})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = sub.Unsubscribe() }()

	for _, tc := range []struct {
		name            string
		known, rejected bool
		reason          string
	}{
		{name: "admitted", known: true},
		{name: "rejected", known: true, rejected: true, reason: "gang: needs 9 nodes, the cluster has 8"},
		{name: "forged"}, // no record: no verdict, whatever the event says
		{name: "silent"}, // admission behind: no verdict
	} {
		raw := []byte(`{"name":"` + tc.name + `","gang":{"nodes":1,"gpusPerNode":1},"command":["true"]}`)
		v, err := cl.SubmitForVerdict(ctx, raw, client.SubmitOptions{}, time.Second)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if !jobspec.ValidID(v.ID) || v.Known != tc.known || v.Rejected != tc.rejected || v.Reason != tc.reason {
			t.Errorf("%s: verdict %+v, want known %v, rejected %v, reason %q", tc.name, v, tc.known, tc.rejected, tc.reason)
		}
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
	_, submitErr := cl.SubmitForVerdict(ctx, raw, client.SubmitOptions{}, time.Second)
	_, readErr := cl.Job(ctx, "early-1")
	for what, err := range map[string]error{"submit": submitErr, "read": readErr} {
		if hints := errors.FlattenHints(err); !strings.Contains(hints, "no Lockstep services have run") {
			t.Errorf("%s: %v (hints %q)", what, err, hints)
		}
	}
}
