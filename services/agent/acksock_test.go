package agent

import (
	"context"
	"encoding/json"
	"io"
	"net"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/errors"
	"github.com/nats-io/nats.go"

	"github.com/lockstep-dev/lockstep/shared/contract/domain"
	"github.com/lockstep-dev/lockstep/shared/contract/subjects"
	"github.com/lockstep-dev/lockstep/shared/plumbing/testenv"
)

// The finding: anyone on the bus could forge a checkpoint ack, and the
// next attempt resumed from the attacker's path. Ranks now hand acks to
// their agent's socket with their attempt's token; the agent forwards only
// an ack whose token, job, attempt and rank match what it runs, on its
// node's subject. A forged ack (wrong token, another job's token, a rank
// not here, another attempt) never reaches drain.
func TestAckSocketForwardsOnlyTheAttemptsOwnAcks(t *testing.T) {
	env := testenv.Start(t)
	a := testAgent(t, env)
	e := a.exec
	l, sock, err := listenAcks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	e.sock = sock
	go a.serveAcks(ctx, l)

	// drain, as far as this test goes: it records what reaches it, and on
	// which subject.
	forwarded := make(chan string, 10)
	sub, err := env.Bus.NC.Subscribe(subjects.CheckpointAcksAll, func(m *nats.Msg) {
		var ack domain.CheckpointAck
		_ = json.Unmarshal(m.Data, &ack)
		forwarded <- m.Subject + " " + ack.JobID + " " + ack.Path
		data, _ := json.Marshal(domain.AckReply{OK: true})
		_ = m.Respond(data)
	})
	if err != nil {
		t.Fatal(err)
	}
	// The server must hold the subscription before anything is sent.
	if err := env.Bus.NC.Flush(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sub.Unsubscribe() })

	for _, id := range []string{"mine", "theirs"} {
		if err := e.start(ctx, shAssignment(id, "sleep 60"), 0); err != nil {
			t.Fatal(err)
		}
	}
	mine, theirs := gangOf(t, e, "mine").token, gangOf(t, e, "theirs").token
	// The wrong token differs from mine in its first character: "00" put
	// over it once in 256 runs was mine itself, and the forged ack passed.
	ack := func(token string, a domain.CheckpointAck) domain.AckReply {
		t.Helper()
		reply, err := SendAck(ctx, sock, token, a)
		if err != nil {
			t.Fatal(err)
		}
		return reply
	}
	for name, f := range map[string]struct {
		token string
		ack   domain.CheckpointAck
		why   string
	}{
		"wrong token":       {string(mine[0]^1) + mine[1:], domain.CheckpointAck{JobID: "mine", Attempt: 1, Rank: 0, Step: 1, Path: "/evil"}, "with this token"},
		"no token":          {"", domain.CheckpointAck{JobID: "mine", Attempt: 1, Rank: 0, Step: 1, Path: "/evil"}, "with this token"},
		"another job's":     {theirs, domain.CheckpointAck{JobID: "mine", Attempt: 1, Rank: 0, Step: 1, Path: "/evil"}, "with this token"},
		"a rank not here":   {mine, domain.CheckpointAck{JobID: "mine", Attempt: 1, Rank: 5, Step: 1, Path: "/evil"}, "rank 5"},
		"another attempt":   {mine, domain.CheckpointAck{JobID: "mine", Attempt: 2, Rank: 0, Step: 1, Path: "/evil"}, "not 2"},
		"a job not running": {mine, domain.CheckpointAck{JobID: "ghost", Attempt: 1, Rank: 0, Step: 1, Path: "/evil"}, "with this token"},
	} {
		if r := ack(f.token, f.ack); r.OK || !strings.Contains(r.Error, f.why) {
			t.Errorf("%s: %+v, want refused (%s)", name, r, f.why)
		}
	}
	if r := ack(mine, domain.CheckpointAck{JobID: "mine", Attempt: 1, Rank: 0, Step: 7, Path: "/ckpt/7"}); !r.OK {
		t.Fatalf("the rank's own ack: %+v", r)
	}
	if got := <-forwarded; got != subjects.CheckpointAckFrom("n1")+" mine /ckpt/7" {
		t.Errorf("forwarded %q", got)
	}
	if len(forwarded) > 0 {
		t.Errorf("a forged ack was forwarded: %q", <-forwarded)
	}
}

func TestPublicNATSDropsCredentials(t *testing.T) {
	for in, want := range map[string]string{
		"nats://127.0.0.1:4222":                    "nats://127.0.0.1:4222",
		"nats://u:p@a:4222, tls://tok@b:4222":      "nats://a:4222,tls://b:4222",
		"nats://u:p@a:4222,::not a url::@secret:1": "nats://a:4222",
	} {
		if got := publicNATS(in); got != want {
			t.Errorf("publicNATS(%q) = %q, want %q", in, got, want)
		}
	}
}

// Past its bound of open connections from one user a socket closes new
// ones at once, and serves again once one of those open ends; a socket
// without a bound (the lifeline's) serves them all.
func TestAcceptUntilBoundsOpenConnections(t *testing.T) {
	l, err := net.Listen("unix", filepath.Join(t.TempDir(), "s"))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	release := make(chan struct{})
	go func() {
		_ = acceptUntil(ctx, l, 2, func(c net.Conn) {
			defer c.Close()
			_, _ = c.Write([]byte("hi"))
			<-release
		})
	}()
	dial := func() net.Conn {
		t.Helper()
		c, err := net.Dial("unix", l.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		return c
	}
	greeted := func(c net.Conn) bool {
		_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
		buf := make([]byte, 2)
		_, err := io.ReadFull(c, buf)
		return err == nil
	}
	for i := range 2 {
		if !greeted(dial()) {
			t.Fatalf("connection %d within the bound was not served", i+1)
		}
	}
	if greeted(dial()) {
		t.Error("a third connection was served past the bound of 2")
	}
	close(release)
	testenv.Eventually(t, 5*time.Second, func() error {
		if !greeted(dial()) {
			return errors.New("not served after the others ended")
		}
		return nil
	})
}

func TestAcceptUntilWithoutABoundServesAll(t *testing.T) {
	l, err := net.Listen("unix", filepath.Join(t.TempDir(), "s"))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	release := make(chan struct{})
	defer close(release)
	go func() {
		_ = acceptUntil(ctx, l, 0, func(c net.Conn) {
			defer c.Close()
			_, _ = c.Write([]byte("hi"))
			<-release
		})
	}()
	for i := range 5 {
		c, err := net.Dial("unix", l.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
		if _, err := io.ReadFull(c, make([]byte, 2)); err != nil {
			t.Fatalf("connection %d of an unbounded socket not served: %v", i+1, err)
		}
	}
}
