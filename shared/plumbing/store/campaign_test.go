package store_test

import (
	"log/slog"
	"strings"
	"testing"
	"time"

	"go.etcd.io/etcd/client/v3/concurrency"

	"github.com/lockstep-dev/lockstep/shared/plumbing/store"
	"github.com/lockstep-dev/lockstep/shared/plumbing/testenv"
)

const electionPrefix = "/test/election/leader"

// campaigning starts sess's campaign and returns where its election will
// come once it leads.
func campaigning(t *testing.T, sess *store.Session, name string) <-chan *concurrency.Election {
	t.Helper()
	led := make(chan *concurrency.Election, 1)
	go func() {
		el, err := sess.Campaign(sess.Context(), electionPrefix, name)
		if err != nil {
			if sess.Context().Err() == nil {
				t.Errorf("%s's campaign: %v", name, err)
			}
			return
		}
		led <- el
	}()
	return led
}

// Candidates lead in the order they campaigned, one at a time: the next
// leads once the one before resigns or loses its session.
func TestCampaignTakesTurns(t *testing.T) {
	env := testenv.Start(t)
	ctx := t.Context()
	open := func() *store.Session {
		sess, err := store.OpenSession(ctx, env.Etcd, 10*time.Second, slog.New(slog.DiscardHandler))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(sess.Close)
		return sess
	}
	a, b, c := open(), open(), open()
	aLed := campaigning(t, a, "a")
	var aEl *concurrency.Election
	select {
	case aEl = <-aLed:
	case <-time.After(10 * time.Second):
		t.Fatal("the only candidate did not lead")
	}
	bLed := campaigning(t, b, "b")
	time.Sleep(200 * time.Millisecond) // b is in line before c
	cLed := campaigning(t, c, "c")
	select {
	case <-bLed:
		t.Fatal("b leads while a does")
	case <-cLed:
		t.Fatal("c leads while a does")
	case <-time.After(time.Second):
	}
	leader := func() string {
		t.Helper()
		resp, err := aEl.Leader(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return string(resp.Kvs[0].Value)
	}
	if got := leader(); got != "a" {
		t.Errorf("etcd names %q the leader, want a", got)
	}
	if err := aEl.Resign(ctx); err != nil {
		t.Fatal(err)
	}
	select {
	case <-bLed:
	case <-cLed:
		t.Fatal("c led before b, who campaigned first")
	case <-time.After(10 * time.Second):
		t.Fatal("nobody led after a resigned")
	}
	if got := leader(); got != "b" {
		t.Errorf("etcd names %q the leader, want b", got)
	}
	b.Close() // the session ends: its key goes with its lease
	select {
	case <-cLed:
	case <-time.After(10 * time.Second):
		t.Fatal("c did not lead after b's session closed")
	}
}

// A candidate whose wait sits on an etcd member that freezes still sees
// the leader go, and leads, before the thaw. (etcd's own Campaign waits on
// a plain watch, which delivers nothing until the thaw: compose
// pause-etcd, no placement leader for the whole freeze.)
func TestCampaignSeesTheLeaderGoWhileItsMemberIsFrozen(t *testing.T) {
	env := testenv.Start(t)
	ctx := t.Context()
	target := strings.TrimPrefix(env.EtcdEndpoint, "http://")
	frozen, live := newFreezingProxy(t, target), newFreezingProxy(t, target)
	// The candidate's client knows only the member that will freeze while
	// it starts waiting, so its wait is there; then it learns the other.
	cli, err := store.ConnectTimeout(ctx, "http://"+frozen.addr, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cli.Close() })
	log := slog.New(slog.DiscardHandler)
	leader, err := store.OpenSession(ctx, env.Etcd, 10*time.Second, log)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(leader.Close)
	var el *concurrency.Election
	select {
	case el = <-campaigning(t, leader, "leader"):
	case <-time.After(10 * time.Second):
		t.Fatal("the only candidate did not lead")
	}
	standby, err := store.OpenSession(ctx, cli, 10*time.Second, log)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(standby.Close)
	led := campaigning(t, standby, "standby")
	time.Sleep(500 * time.Millisecond) // its wait is set up, on the one member it knows
	cli.SetEndpoints("http://"+frozen.addr, "http://"+live.addr)
	frozen.freeze()
	defer frozen.thaw()
	if err := el.Resign(ctx); err != nil {
		t.Fatal(err)
	}
	// Within gRPC's own pings' 11 s, which would free a plain watch too.
	select {
	case <-led:
	case <-time.After(8 * time.Second):
		t.Fatal("the standby did not lead within 8 s while its wait's member was frozen")
	}
}
