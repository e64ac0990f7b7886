package testenv

import (
	"context"
	"net/url"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/lockstep-dev/lockstep/shared/auth"
	"github.com/lockstep-dev/lockstep/shared/bus"
	"github.com/lockstep-dev/lockstep/shared/embedded"
	"github.com/lockstep-dev/lockstep/shared/store"
)

// servicesUser is who connects without credentials to a StartWithUsers
// server: the services and the test itself, with a service's rights.
const servicesUser = "services"

// StartWithUsers is Start with a NATS server that enforces the permission
// table: each of people connects (ConnectAs) with exactly the rights
// auth.Permissions gives it, and a publish outside them is refused by the
// server. Connections without credentials get every right, so
// services under test connect as they do today; the operator-mode server
// of a real cluster (embedded.NATSConfig.Trust) needs creds for them, and
// a test of ownership needs only that the people are held to the table.
func StartWithUsers(t testing.TB, people ...auth.Identity) *Env {
	t.Helper()
	// Services here use the default inbox prefix (not their identity's),
	// so they get an admin's rights rather than a service's.
	users := []*server.User{{Username: servicesUser, Permissions: permissions(auth.Identity{Name: "admin", Role: auth.RoleAdmin})}}
	for _, id := range people {
		if err := id.Validate(); err != nil {
			t.Fatal(err)
		}
		users = append(users, &server.User{Username: id.Name, Password: id.Name, Permissions: permissions(id)})
	}
	opts := &server.Options{
		Host: "127.0.0.1", Port: server.RANDOM_PORT, JetStream: true, StoreDir: t.TempDir(),
		NoSigs: true, NoLog: true, MaxPayload: 1 << 20, Users: users, NoAuthUser: servicesUser,
	}
	ns, err := server.NewServer(opts)
	if err != nil {
		t.Fatalf("start nats: %v", err)
	}
	go ns.Start()
	if !ns.ReadyForConnections(30 * time.Second) {
		ns.Shutdown()
		t.Fatal("nats not ready")
	}
	t.Cleanup(func() { ns.Shutdown(); ns.WaitForShutdown() })
	es, err := embedded.StartEtcd(embedded.EtcdConfig{Listen: "127.0.0.1:0", Dir: t.TempDir(), NoFsync: true})
	if err != nil {
		t.Fatalf("start etcd: %v", err)
	}
	t.Cleanup(es.Close)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	b, err := bus.Connect(ctx, ns.ClientURL(), "test")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(b.Close)
	if err := b.EnsureStreams(ctx, bus.StreamOptions{}); err != nil {
		t.Fatal(err)
	}
	cli, err := store.Connect(ctx, es.Endpoint())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cli.Close() })
	return &Env{NATSURL: ns.ClientURL(), EtcdEndpoint: es.Endpoint(), Bus: b, Etcd: cli}
}

// ConnectAs connects to a StartWithUsers server as id, with its own inbox
// prefix (the only inbox the table lets it read). Errors the server sends
// asynchronously, such as permission violations, arrive on errs.
func (e *Env) ConnectAs(t testing.TB, id auth.Identity) (b *bus.Bus, errs <-chan error) {
	t.Helper()
	u, err := url.Parse(e.NATSURL)
	if err != nil {
		t.Fatal(err)
	}
	u.User = url.UserPassword(id.Name, id.Name)
	ch := make(chan error, 64)
	nc, err := nats.Connect(u.String(), nats.CustomInboxPrefix(id.InboxPrefix()),
		nats.ErrorHandler(func(_ *nats.Conn, _ *nats.Subscription, err error) {
			select {
			case ch <- err:
			default:
			}
		}))
	if err != nil {
		t.Fatalf("connect as %s: %v", id.Name, err)
	}
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	b = &bus.Bus{NC: nc, JS: js}
	t.Cleanup(b.Close)
	return b, ch
}

func permissions(id auth.Identity) *server.Permissions {
	r := auth.Permissions(id)
	p := &server.Permissions{
		Publish:   &server.SubjectPermission{Allow: r.Pub},
		Subscribe: &server.SubjectPermission{Allow: r.Sub},
	}
	if r.Replies {
		p.Response = &server.ResponsePermission{MaxMsgs: 1, Expires: time.Minute}
	}
	return p
}
