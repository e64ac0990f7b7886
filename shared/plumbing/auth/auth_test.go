package auth_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/lockstep-dev/lockstep/shared/contract/subjects"
	"github.com/lockstep-dev/lockstep/shared/plumbing/auth"
	"github.com/lockstep-dev/lockstep/shared/plumbing/bus"
	"github.com/lockstep-dev/lockstep/shared/plumbing/embedded"
)

// cluster is an embedded NATS in operator mode and the authority it trusts.
type cluster struct {
	url  string
	auth *auth.Authority
	dir  string
}

func startCluster(t *testing.T) *cluster {
	t.Helper()
	dir := t.TempDir()
	a, err := auth.LoadOrCreateAuthority(filepath.Join(dir, "authority"))
	if err != nil {
		t.Fatal(err)
	}
	trust, err := a.Trust()
	if err != nil {
		t.Fatal(err)
	}
	ns, err := embedded.StartNATS(embedded.NATSConfig{Listen: "127.0.0.1:0", StoreDir: t.TempDir(), Trust: &trust})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(ns.Close)
	return &cluster{url: ns.URL(), auth: a, dir: dir}
}

// connect connects as id and returns the connection and the channel its
// asynchronous errors (the server's permission violations) arrive on.
func (c *cluster) connect(t *testing.T, id auth.Identity) (*nats.Conn, <-chan error) {
	t.Helper()
	path := filepath.Join(c.dir, "creds", string(id.Role)+"-"+id.Name+".creds")
	if err := c.auth.WriteCreds(path, id, time.Hour, time.Now()); err != nil {
		t.Fatal(err)
	}
	errs := make(chan error, 16)
	nc, err := nats.Connect(c.url, nats.UserCredentials(path), nats.CustomInboxPrefix(id.InboxPrefix()),
		nats.ErrorHandler(func(_ *nats.Conn, _ *nats.Subscription, err error) { errs <- err }))
	if err != nil {
		t.Fatalf("connect as %s: %v", id.Name, err)
	}
	t.Cleanup(nc.Close)
	return nc, errs
}

// refused publishes on subject and reports whether the server refused it
// with a permissions violation.
func refused(t *testing.T, nc *nats.Conn, errs <-chan error, subject string) bool {
	t.Helper()
	if err := nc.Publish(subject, []byte("{}")); err != nil {
		t.Fatal(err)
	}
	if err := nc.Flush(); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-errs:
		if !strings.Contains(strings.ToLower(err.Error()), "permissions violation") || !strings.Contains(err.Error(), subject) {
			t.Fatalf("publish on %s: unexpected error %v", subject, err)
		}
		return true
	case <-time.After(500 * time.Millisecond):
		return false
	}
}

// streams creates Lockstep's streams as a service identity would, and
// returns that service's JetStream.
func (c *cluster) streams(ctx context.Context, t *testing.T, id auth.Identity) jetstream.JetStream {
	t.Helper()
	svc, _ := c.connect(t, id)
	js, err := jetstream.New(svc)
	if err != nil {
		t.Fatal(err)
	}
	for _, cfg := range bus.Streams(bus.StreamOptions{}) {
		if _, err := js.CreateOrUpdateStream(ctx, cfg); err != nil {
			t.Fatalf("%s creates stream %s: %v", id.Name, cfg.Name, err)
		}
	}
	return js
}

// subscribeRefused subscribes to subject and reports whether the server
// refused it with a permissions violation.
func subscribeRefused(t *testing.T, nc *nats.Conn, errs <-chan error, subject string) bool {
	t.Helper()
	if _, err := nc.SubscribeSync(subject); err != nil {
		t.Fatal(err)
	}
	if err := nc.Flush(); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-errs:
		if !strings.Contains(strings.ToLower(err.Error()), "permissions violation") {
			t.Fatalf("subscribe to %s: unexpected error %v", subject, err)
		}
		return true
	case <-time.After(2 * time.Second):
		return false
	}
}

func TestAnonymousConnectionRefused(t *testing.T) {
	c := startCluster(t)
	nc, err := nats.Connect(c.url, nats.NoReconnect())
	if err == nil {
		nc.Close()
		t.Fatal("an anonymous client connected")
	}
	if !strings.Contains(strings.ToLower(err.Error()), "authorization") {
		t.Fatalf("want an authorization error, got %v", err)
	}
}

func TestServerEnforcesThePermissionTable(t *testing.T) {
	c := startCluster(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	// A service identity can build the streams and use JetStream.
	c.streams(ctx, t, auth.Identity{Name: "admission", Role: auth.RoleAdmission})

	alice, aliceErrs := c.connect(t, auth.Identity{Name: "alice", Role: auth.RoleUser})
	ajs, err := jetstream.New(alice)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ajs.Publish(ctx, subjects.SubmitAs("alice"), []byte(`{}`)); err != nil {
		t.Fatalf("alice submits as herself: %v", err)
	}
	for _, subject := range []string{
		subjects.SubmitAs("bob"), subjects.CancelAs("bob"), subjects.Reserve, subjects.ReportFrom("node-1"), subjects.CheckpointAckFrom("node-1"),
		"$KV." + subjects.BucketJobs + ".job-1", subjects.NodeDrain, subjects.JobEvent("alice", "job-1", "succeeded"),
		// The services' durable consumers: pulling from one would read other
		// users' submissions, acknowledging lose them, deleting stop it.
		"$JS.API.CONSUMER.MSG.NEXT." + subjects.StreamJobs + "." + subjects.DurableAdmission,
		"$JS.API.CONSUMER.DELETE." + subjects.StreamJobs + "." + subjects.DurableAdmission,
		"$JS.ACK." + subjects.StreamJobs + "." + subjects.DurableAdmission + ".1.5.5.1700000000000000000.0",
		"$JS.API.CONSUMER.MSG.NEXT." + subjects.StreamWork + "." + subjects.DurableGang,
		"$JS.API.CONSUMER.DELETE." + subjects.StreamWork + "." + subjects.DurableReports,
	} {
		if !refused(t, alice, aliceErrs, subject) {
			t.Errorf("alice published on %s and the server let her", subject)
		}
	}

	node, nodeErrs := c.connect(t, auth.Identity{Name: "node-1", Role: auth.RoleNode})
	if refused(t, node, nodeErrs, subjects.ReportFrom("node-1")) {
		t.Error("node-1 may not report for itself")
	}
	if refused(t, node, nodeErrs, subjects.CheckpointAckFrom("node-1")) {
		t.Error("node-1 may not forward its ranks' acks")
	}
	for _, typ := range []string{"node-up", "gpu-unhealthy", "gpu-healthy"} {
		if refused(t, node, nodeErrs, subjects.NodeEvent("node-1", typ)) {
			t.Errorf("node-1 may not announce its own %s", typ)
		}
	}
	// Batch job steps: node-1 sends as itself, never as another node.
	for _, kind := range []string{subjects.StepLaunch, subjects.StepKill, subjects.StepOutput} {
		if refused(t, node, nodeErrs, subjects.StepTo(kind, "node-1", "node-2")) {
			t.Errorf("node-1 may not send %s to node-2", kind)
		}
	}
	for _, subject := range []string{subjects.ReportFrom("node-2"), subjects.Reserve, subjects.SubmitAs("alice"),
		subjects.StepTo(subjects.StepLaunch, "node-2", "node-1"), subjects.StepTo(subjects.StepOutput, "node-2", "node-3"),
		subjects.StepTo(subjects.StepKill, "node-2", "node-1"),
		subjects.CheckpointAckFrom("node-2"), subjects.CheckpointAck,
		subjects.NodeEvent("node-2", "gpu-unhealthy"), subjects.NodeEvent("node-1", "node-drained"), subjects.NodeEvent("node-1", "node-resumed")} {
		if !refused(t, node, nodeErrs, subject) {
			t.Errorf("node-1 published on %s and the server let it", subject)
		}
	}

	// Only placement proposes; no service speaks for a node or a person.
	gang, gangErrs := c.connect(t, auth.Identity{Name: "gang", Role: auth.RoleGang})
	for _, subject := range []string{subjects.Reserve, subjects.ReportFrom("node-1"), subjects.CheckpointAckFrom("node-1"), subjects.SubmitAs("alice")} {
		if !refused(t, gang, gangErrs, subject) {
			t.Errorf("gang published on %s and the server let it", subject)
		}
	}
	placement, placementErrs := c.connect(t, auth.Identity{Name: "placement", Role: auth.RolePlacement})
	if refused(t, placement, placementErrs, subjects.Reserve) {
		t.Error("placement may publish proposals")
	}

	op, opErrs := c.connect(t, auth.Identity{Name: "ops", Role: auth.RoleOperator})
	if refused(t, op, opErrs, subjects.NodeDrain) {
		t.Error("an operator may drain nodes")
	}
	for _, subject := range []string{subjects.Reserve, "$JS.API.CONSUMER.DELETE." + subjects.StreamJobs + "." + subjects.DurableDrain} {
		if !refused(t, op, opErrs, subject) {
			t.Errorf("an operator published on %s", subject)
		}
	}
}

func TestUserCannotReadAnotherUsersReplies(t *testing.T) {
	c := startCluster(t)
	bob, bobErrs := c.connect(t, auth.Identity{Name: "bob", Role: auth.RoleUser})
	if !subscribeRefused(t, bob, bobErrs, auth.Identity{Name: "alice", Role: auth.RoleUser}.InboxPrefix()+".>") {
		t.Fatal("bob subscribed to alice's inbox")
	}
}

// A person named like a node (or an admin) has an inbox of their own: the
// node's replies stay the node's.
func TestPersonNamedLikeANodeCannotReadItsReplies(t *testing.T) {
	c := startCluster(t)
	node := auth.Identity{Name: "node-1", Role: auth.RoleNode}
	person := auth.Identity{Name: "node-1", Role: auth.RoleUser}
	if node.InboxPrefix() == person.InboxPrefix() {
		t.Fatalf("node and user node-1 share the inbox %s", node.InboxPrefix())
	}
	nc, errs := c.connect(t, person)
	if !subscribeRefused(t, nc, errs, node.InboxPrefix()+".>") {
		t.Error("user node-1 subscribed to node node-1's inbox")
	}
	if subscribeRefused(t, nc, errs, person.InboxPrefix()+".>") {
		t.Error("user node-1 may not read its own inbox")
	}
}

func TestAuthorityPersists(t *testing.T) {
	dir := t.TempDir()
	a, err := auth.LoadOrCreateAuthority(dir)
	if err != nil {
		t.Fatal(err)
	}
	b, err := auth.LoadOrCreateAuthority(dir)
	if err != nil {
		t.Fatal(err)
	}
	ta, _ := a.Trust()
	tb, _ := b.Trust()
	if ta.Operator.Subject != tb.Operator.Subject || ta.SystemAccount != tb.SystemAccount {
		t.Fatal("reloading the authority changed its keys")
	}
	for _, f := range []string{"operator.nk", "account.nk", "system-account.nk"} {
		fi, err := os.Stat(filepath.Join(dir, f))
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode().Perm() != 0o600 {
			t.Errorf("%s has mode %v, want 0600", f, fi.Mode().Perm())
		}
	}
	if err := os.Remove(filepath.Join(dir, "account.nk")); err != nil {
		t.Fatal(err)
	}
	if _, err := auth.LoadOrCreateAuthority(dir); err == nil || !strings.Contains(err.Error(), "incomplete") {
		t.Fatalf("an incomplete authority must not be replaced silently, got %v", err)
	}
}

func TestIdentityValidation(t *testing.T) {
	for _, tc := range []struct {
		id auth.Identity
		ok bool
	}{
		{auth.Identity{Name: "alice", Role: auth.RoleUser}, true},
		{auth.Identity{Name: "node-07", Role: auth.RoleNode}, true},
		{auth.Identity{Name: "gang", Role: auth.RoleGang}, true},
		{auth.Identity{Name: "alice.evil", Role: auth.RoleUser}, false}, // a dot would widen subjects
		{auth.Identity{Name: "*", Role: auth.RoleUser}, false},
		{auth.Identity{Name: ">", Role: auth.RoleAdmin}, false},
		{auth.Identity{Name: "", Role: auth.RoleUser}, false},
		{auth.Identity{Name: "Alice", Role: auth.RoleUser}, false},
		{auth.Identity{Name: "alice", Role: "root"}, false},
		{auth.Identity{Name: "mallory", Role: auth.RoleGang}, false}, // service identities are named after the service
		// A service's name, or etcd's root, under another role would get
		// its inbox and, by certificate, its etcd user.
		{auth.Identity{Name: "placement", Role: auth.RoleUser}, false},
		{auth.Identity{Name: "gang", Role: auth.RoleAdmin}, false},
		{auth.Identity{Name: "root", Role: auth.RoleOperator}, false},
		{auth.Identity{Name: "root", Role: auth.RoleAdmin}, true},
	} {
		if err := tc.id.Validate(); (err == nil) != tc.ok {
			t.Errorf("%+v: err %v, want ok=%v", tc.id, err, tc.ok)
		}
	}
}

// Events and logs carry their job's owner: alice reads her own job's, and
// the server refuses bob a consumer or a subscription on them.
func TestUsersReadOnlyTheirOwnJobsEventsAndLogs(t *testing.T) {
	c := startCluster(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	sjs := c.streams(ctx, t, auth.Identity{Name: "gang", Role: auth.RoleGang})
	node, _ := c.connect(t, auth.Identity{Name: "node-1", Role: auth.RoleNode})
	njs, err := jetstream.New(node)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := sjs.Publish(ctx, subjects.JobEvent("alice", "j1", "admitted"), []byte(`{}`)); err != nil {
		t.Fatal(err)
	}
	if _, err := njs.Publish(ctx, subjects.Logs("alice", "j1", 0, "stdout"), []byte("hello\n")); err != nil {
		t.Fatal(err)
	}

	read := func(nc *nats.Conn, stream, filter string) (int, error) {
		js, err := jetstream.New(nc)
		if err != nil {
			return 0, err
		}
		rctx, cancel := context.WithTimeout(ctx, 3*time.Second)
		defer cancel()
		cons, err := js.OrderedConsumer(rctx, stream, jetstream.OrderedConsumerConfig{FilterSubjects: []string{filter}})
		if err != nil {
			return 0, err
		}
		batch, err := cons.FetchNoWait(10)
		if err != nil {
			return 0, err
		}
		n := 0
		for range batch.Messages() {
			n++
		}
		return n, batch.Error()
	}
	alice, _ := c.connect(t, auth.Identity{Name: "alice", Role: auth.RoleUser})
	for stream, filter := range map[string]string{
		subjects.StreamEvents: subjects.JobEvents("alice", "j1"),
		subjects.StreamLogs:   subjects.JobLogs("alice", "j1"),
	} {
		if n, err := read(alice, stream, filter); err != nil || n != 1 {
			t.Errorf("alice reads her own job on %s: %d messages, %v", filter, n, err)
		}
	}
	bob, bobErrs := c.connect(t, auth.Identity{Name: "bob", Role: auth.RoleUser})
	for stream, filter := range map[string]string{
		subjects.StreamEvents:       subjects.JobEvents("alice", "j1"),
		subjects.StreamLogs:         subjects.JobLogs("alice", "j1"),
		subjects.StreamEvents + " ": subjects.JobEventsAll,
	} {
		if n, err := read(bob, strings.TrimSpace(stream), filter); err == nil {
			t.Errorf("bob read %d messages on %s", n, filter)
		}
		// The server refused the consumer itself, not merely timed out.
		select {
		case err := <-bobErrs:
			if !strings.Contains(err.Error(), "CONSUMER.CREATE") || !strings.Contains(strings.ToLower(err.Error()), "permissions violation") {
				t.Errorf("bob reads %s: unexpected error %v", filter, err)
			}
		default:
			t.Errorf("bob reads %s: no permissions violation", filter)
		}
	}
	for _, subject := range []string{subjects.JobEvents("alice", "j1"), subjects.JobLogs("alice", "j1"), subjects.EventsAll} {
		if !subscribeRefused(t, bob, bobErrs, subject) {
			t.Errorf("bob subscribed to %s", subject)
		}
	}
}

// A certificate's common name is what etcd takes for its user: a person,
// who has none, and an admin get one no node or service can be named, so
// that neither ever acts as the node of their name in etcd, nor a node
// with an admin's root.
func TestCertName(t *testing.T) {
	for id, want := range map[auth.Identity]string{
		{Name: "gpu-07", Role: auth.RoleNode}:   "gpu-07",
		{Name: "gang", Role: auth.RoleGang}:     "gang",
		{Name: "ops", Role: auth.RoleAdmin}:     "admin:ops",
		{Name: "gpu-07", Role: auth.RoleUser}:   "user:gpu-07",
		{Name: "olga", Role: auth.RoleOperator}: "operator:olga",
	} {
		if got := auth.CertName(id); got != want {
			t.Errorf("CertName(%+v) = %q, want %q", id, got, want)
		}
	}
}
