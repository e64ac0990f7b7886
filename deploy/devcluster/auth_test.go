package devcluster_test

import (
	"context"
	"fmt"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/errors"
	"github.com/nats-io/nats.go"

	"github.com/lockstep-dev/lockstep/deploy/devcluster"
	"github.com/lockstep-dev/lockstep/shared/contract/client"
	"github.com/lockstep-dev/lockstep/shared/contract/domain"
	"github.com/lockstep-dev/lockstep/shared/contract/events"
	"github.com/lockstep-dev/lockstep/shared/contract/subjects"
	"github.com/lockstep-dev/lockstep/shared/plumbing/auth"
	"github.com/lockstep-dev/lockstep/shared/plumbing/bus"
	"github.com/lockstep-dev/lockstep/shared/plumbing/store"
	"github.com/lockstep-dev/lockstep/shared/plumbing/testenv"
)

// openDir is a temporary directory anyone may enter and write: a root
// agent runs admin's ranks as nobody (dev's MapUnknownUsersTo), and
// t.TempDir is for its owner only.
func openDir(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "lockstep-auth-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o777); err != nil {
		t.Fatal(err)
	}
	return dir
}

func startAuthCluster(t *testing.T) *devcluster.Cluster {
	t.Helper()
	c, err := devcluster.Start(context.Background(), devcluster.Config{
		DataDir: openDir(t), NATSListen: "127.0.0.1:0", EtcdListen: "127.0.0.1:0",
		Nodes: 2, GPUsPerNode: 8, Leaves: 1, NoFsync: true, Log: slog.New(slog.DiscardHandler),
		Auth: true,
	})
	if err != nil {
		t.Fatalf("start dev cluster with auth: %v", err)
	}
	t.Cleanup(c.Stop)
	return c
}

// With auth on, a connection without creds is refused by the server (and
// one without a client certificate by etcd); with admin's creds a job runs
// to the end, every service and node acting under its own identity.
func TestAuthClusterRunsAdminJobAndRefusesAnonymous(t *testing.T) {
	c := startAuthCluster(t)
	ctx := context.Background()

	if _, err := client.Dial(ctx, c.NATSURL); err == nil || !strings.Contains(err.Error(), "Authorization Violation") {
		t.Fatalf("anonymous dial: got %v, want an authorization violation", err)
	}
	short, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	if _, err := store.Connect(short, c.EtcdEndpoint); err == nil {
		t.Fatal("etcd accepted a client without a certificate")
	}

	cl, err := client.Dial(ctx, c.NATSURL, c.Admin.BusOptions()...)
	if err != nil {
		t.Fatalf("dial as admin: %v", err)
	}
	t.Cleanup(cl.Close)
	if cl.User != "admin" {
		t.Fatalf("client acts as %q, want admin (the creds' name)", cl.User)
	}
	out := openDir(t)
	spec := fmt.Sprintf(`{"name":"authed","gang":{"nodes":2,"gpusPerNode":8},"command":["sh","-c","touch %s/rank-$RANK"]}`, out)
	id, err := cl.Submit(ctx, []byte(spec))
	if err != nil {
		t.Fatalf("submit as admin: %v", err)
	}
	j := waitState(t, cl, id, domain.StateSucceeded, 60*time.Second)
	if j.Owner != "admin" {
		t.Errorf("job owner %q, want admin", j.Owner)
	}
	for r := range 16 {
		if _, err := os.Stat(filepath.Join(out, fmt.Sprintf("rank-%d", r))); err != nil {
			t.Errorf("rank %d did not run: %v", r, err)
		}
	}

	// etcd's RBAC is on: node-01's certificate, which its agent ran the
	// ranks with, writes its own running keys but no claim and no other
	// node's key.
	node, err := store.Connect(ctx, c.EtcdEndpoint, store.WithTLS(filepath.Join(c.CredsDir, "ca.crt"),
		filepath.Join(c.CredsDir, "node-01.crt"), filepath.Join(c.CredsDir, "node-01.key")))
	if err != nil {
		t.Fatal(err)
	}
	defer node.Close()
	if _, err := node.Put(ctx, store.RunningKey("node-01", "probe"), "{}"); err != nil {
		t.Errorf("node-01 writes its own running key: %v", err)
	}
	for _, key := range []string{store.ClaimKey("node-01", 0), store.NodeKey("node-02"), store.RunningKey("node-02", "probe")} {
		if _, err := node.Put(ctx, key, "{}"); err == nil || !strings.Contains(err.Error(), "permission denied") {
			t.Errorf("node-01 writes %s: got %v, want permission denied", key, err)
		}
	}
}

// alice's creds, used as `nats --creds` would (with her inbox prefix), may
// publish on her own submission subject; the server refuses her a publish
// on an internal subject (agent reports) with a permissions violation.
func TestAuthClusterUserPermissions(t *testing.T) {
	c := startAuthCluster(t)
	violations := make(chan error, 4)
	alice, err := nats.Connect(c.NATSURL, nats.UserCredentials(filepath.Join(c.CredsDir, "alice.creds")),
		nats.CustomInboxPrefix(auth.Identity{Name: "alice", Role: auth.RoleUser}.InboxPrefix()),
		nats.ErrorHandler(func(_ *nats.Conn, _ *nats.Subscription, err error) { violations <- err }))
	if err != nil {
		t.Fatalf("connect as alice: %v", err)
	}
	t.Cleanup(alice.Close)
	admin, err := nats.Connect(c.NATSURL, nats.UserCredentials(filepath.Join(c.CredsDir, "admin.creds")))
	if err != nil {
		t.Fatalf("connect as admin: %v", err)
	}
	t.Cleanup(admin.Close)
	seen, err := admin.SubscribeSync(subjects.SubmitAs("alice"))
	if err != nil {
		t.Fatal(err)
	}
	if err := admin.Flush(); err != nil {
		t.Fatal(err)
	}

	// Her own subject: the server lets it through.
	if err := alice.Publish(subjects.SubmitAs("alice"), []byte(`{"name":"mine","gang":{"nodes":1,"gpusPerNode":1},"command":["true"]}`)); err != nil {
		t.Fatal(err)
	}
	if _, err := seen.NextMsg(10 * time.Second); err != nil {
		t.Fatalf("alice's publish on her own submit subject did not arrive: %v", err)
	}

	// An internal subject: refused.
	if err := alice.Publish(subjects.Report, []byte(`{}`)); err != nil {
		t.Fatal(err)
	}
	if err := alice.Flush(); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-violations:
		if !strings.Contains(err.Error(), "Permissions Violation") || !strings.Contains(err.Error(), subjects.Report) {
			t.Fatalf("got %v, want a permissions violation for %s", err, subjects.Report)
		}
	case <-time.After(10 * time.Second):
		t.Fatalf("the server accepted alice's publish on %s", subjects.Report)
	}
}

// dev keeps its authority in the data dir: a restart on it finds etcd's
// auth already on and the creds issued before still valid.
func TestAuthClusterRestartsOnSameDataDir(t *testing.T) {
	cfg := devcluster.Config{
		DataDir: t.TempDir(), NATSListen: "127.0.0.1:0", EtcdListen: "127.0.0.1:0",
		Nodes: 1, GPUsPerNode: 8, Leaves: 1, NoFsync: true, Log: slog.New(slog.DiscardHandler), Auth: true,
	}
	ctx := context.Background()
	c, err := devcluster.Start(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	before, err := os.ReadFile(filepath.Join(devcluster.AuthorityDir(cfg.DataDir), "ca.crt"))
	if err != nil {
		t.Fatal(err)
	}
	c.Stop()
	if c, err = devcluster.Start(ctx, cfg); err != nil {
		t.Fatalf("restart on the same data dir: %v", err)
	}
	defer c.Stop()
	after, _ := os.ReadFile(filepath.Join(devcluster.AuthorityDir(cfg.DataDir), "ca.crt"))
	if string(before) != string(after) {
		t.Fatal("restart made a new CA")
	}
	cl, err := client.Dial(ctx, c.NATSURL, c.Admin.BusOptions()...)
	if err != nil {
		t.Fatalf("dial as admin after restart: %v", err)
	}
	cl.Close()
}

// The client with alice's creds acts as alice: her submission is admitted
// with her as the owner, taken from the subject the server let her use.
func TestAuthClusterClientActsAsItsCreds(t *testing.T) {
	c := startAuthCluster(t)
	ctx := context.Background()
	cl, err := client.Dial(ctx, c.NATSURL, bus.WithCreds(filepath.Join(c.CredsDir, "alice.creds")))
	if err != nil {
		t.Fatalf("dial as alice: %v", err)
	}
	t.Cleanup(cl.Close)
	if cl.User != "alice" {
		t.Fatalf("client acts as %q, want alice", cl.User)
	}
	id, err := cl.Submit(ctx, []byte(`{"name":"hers","gang":{"nodes":1,"gpusPerNode":1},"command":["sleep","300"]}`))
	if err != nil {
		t.Fatalf("submit as alice: %v", err)
	}
	testenv.Eventually(t, 30*time.Second, func() error {
		j, err := cl.Job(ctx, id)
		if err != nil {
			return err
		}
		if j.Owner != "alice" {
			return fmt.Errorf("job %s owner %q, want alice", id, j.Owner)
		}
		return nil
	})
}

// Item by item, with the server and the services enforcing it: bob may not
// cancel, checkpoint, read the events or output of, or resubmit over
// alice's job, and her job runs on untouched; alice reads all of hers.
func TestAuthClusterBobCannotTouchAlicesJob(t *testing.T) {
	c := startAuthCluster(t)
	ctx := context.Background()
	dialAs := func(name string) *client.Client {
		cl, err := client.Dial(ctx, c.NATSURL, bus.WithCreds(filepath.Join(c.CredsDir, name+".creds")))
		if err != nil {
			t.Fatalf("dial as %s: %v", name, err)
		}
		t.Cleanup(cl.Close)
		return cl
	}
	alice, bob := dialAs("alice"), dialAs("bob")
	spec := []byte(`{"id":"alices-run","gang":{"nodes":1,"gpusPerNode":1},"command":["sh","-c","echo hello-from-alice; sleep 300"]}`)
	id, err := alice.Submit(ctx, spec)
	if err != nil {
		t.Fatal(err)
	}
	waitState(t, alice, id, domain.StateRunning, 30*time.Second)
	consumersBefore := readerConsumers(t, alice)

	if err := bob.Cancel(ctx, id, "mine now"); err != nil {
		t.Fatalf("bob's cancel request should reach drain (which refuses it): %v", err)
	}
	if err := bob.Drain(ctx, id, domain.DrainCheckpoint, domain.ThenRequeue, "mine now"); err != nil {
		t.Fatal(err)
	}
	if _, err := bob.Submit(ctx, spec); !errors.Is(err, client.ErrIDTaken) {
		t.Errorf("bob resubmits alice's ID: %v, want ErrIDTaken", err)
	}
	short := func() context.Context {
		sctx, cancel := context.WithTimeout(ctx, 3*time.Second)
		t.Cleanup(cancel)
		return sctx
	}
	if evs, err := bob.Events(short(), id); !errors.Is(err, client.ErrNotYours) {
		t.Errorf("bob reads alice's events: %d events, %v; want ErrNotYours", len(evs), err)
	}
	if _, err := bob.Logs(short(), id, -1); !errors.Is(err, client.ErrNotYours) {
		t.Errorf("bob reads alice's output: %v; want ErrNotYours", err)
	}

	// Both of bob's requests were refused, by name; the job runs on.
	testenv.Eventually(t, 20*time.Second, func() error {
		evs, err := alice.Events(ctx, id)
		if err != nil {
			return err
		}
		refused := 0
		for _, ev := range evs {
			if ev.Type == events.Refused && ev.Actor == "bob" {
				refused++
			}
		}
		if refused != 2 {
			return fmt.Errorf("%d refused events naming bob, want 2 (cancel and checkpoint)", refused)
		}
		return nil
	})
	if j, err := alice.Job(ctx, id); err != nil || j.State != domain.StateRunning || j.Attempt != 1 {
		t.Fatalf("alice's job after bob's attempts: state %s attempt %d, %v", j.State, j.Attempt, err)
	}
	testenv.Eventually(t, 20*time.Second, func() error {
		cons, err := alice.Logs(ctx, id, -1)
		if err != nil {
			return err
		}
		defer cons.Close()
		batch, err := cons.FetchNoWait(10)
		if err != nil {
			return err
		}
		for msg := range batch.Messages() {
			if strings.Contains(string(msg.Data()), "hello-from-alice") {
				return nil
			}
		}
		return errors.New("alice's output not readable yet")
	})
	// Each of her reads took a consumer and gave it back, with her own
	// rights: reads polled in a loop must not fill the server's cap on
	// consumers per stream, after which nobody could read.
	testenv.Eventually(t, 10*time.Second, func() error {
		if now := readerConsumers(t, alice); !maps.Equal(now, consumersBefore) {
			return fmt.Errorf("consumers per stream %v after alice's reads, want %v as before them", now, consumersBefore)
		}
		return nil
	})
	if err := alice.Cancel(ctx, id, "done"); err != nil {
		t.Fatal(err)
	}
	waitState(t, alice, id, domain.StateCancelled, 30*time.Second)
}

// readerConsumers counts the consumers on the streams people read.
func readerConsumers(t *testing.T, cl *client.Client) map[string]int {
	t.Helper()
	out := map[string]int{}
	for _, name := range []string{subjects.StreamEvents, subjects.StreamLogs} {
		s, err := cl.Bus().JS.Stream(context.Background(), name)
		if err != nil {
			t.Fatal(err)
		}
		out[name] = s.CachedInfo().State.Consumers
	}
	return out
}
