package agent

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"io"
	"net"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/cockroachdb/errors"
	"golang.org/x/sys/unix"

	"github.com/lockstep-dev/lockstep/shared/contract/domain"
	"github.com/lockstep-dev/lockstep/shared/plumbing/clock"
)

// Ranks hold no bus credentials, so `lockstep ckpt-done` hands its ack to
// the local agent instead: over a Unix socket in the data directory, with
// the attempt's token (rankenv.AckToken, given to that attempt's ranks only).
// The agent checks token, job, attempt and rank against the assignment it
// runs, and forwards the ack under its own node identity, on its node's
// subject, where drain checks that this node runs that attempt.

// ackSocketName is the socket's name in the data directory.
const ackSocketName = "agent.sock"

// ackRequest is one ack as a rank sends it: the ack and its token.
type ackRequest struct {
	domain.CheckpointAck
	Token string `json:"token"`
}

// socketRequest is anything a process of a job sends on the socket: an
// ack (no op), or srun's step (op "srun", steps.go).
type socketRequest struct {
	ackRequest
	Op   string       `json:"op,omitempty"`
	Srun *SrunRequest `json:"srun,omitempty"`
}

const opSrun = "srun"

// maxAckRequest bounds what the agent reads from a connection (srun's
// request carries its caller's environment).
const maxAckRequest = 1 << 20

// ackIOTimeout bounds one exchange on the socket; drain's answer comes
// within it (sendAck gives up sooner).
const ackIOTimeout = 60 * time.Second

// listenAcks opens the ack socket. Anyone on the node may connect (a
// rank runs as its owner): the token is what admits an ack.
func listenAcks(dataDir string) (net.Listener, string, error) {
	return listenOpen(dataDir, ackSocketName, "ranks")
}

// listenOpen listens on a unix socket in the data directory (replacing a
// previous agent's), mode 0666: ranks run as their owners.
func listenOpen(dataDir, name, users string) (net.Listener, string, error) {
	path, err := filepath.Abs(filepath.Join(dataDir, name))
	if err != nil {
		return nil, "", errors.Wrapf(err, "%s path", name)
	}
	_ = os.Remove(path) // a previous agent's
	l, err := net.Listen("unix", path)
	if err != nil {
		return nil, "", errors.Wrapf(err, "listen on %s", path)
	}
	if err := os.Chmod(path, 0o666); err != nil {
		_ = l.Close()
		return nil, "", errors.Wrapf(err, "open %s to %s", path, users)
	}
	return l, path, nil
}

// serveAcks answers ack requests on l until ctx ends.
func (a *agent) serveAcks(ctx context.Context, l net.Listener) {
	err := acceptUntil(ctx, l, maxConnsPerUser, func(c net.Conn) { a.answerAck(ctx, c.(*net.UnixConn)) })
	if ctx.Err() == nil {
		a.Log.Warn("ack socket closed", "err", err)
	}
}

// maxConnsPerUser bounds the ack socket's connections one local user
// holds at once (an srun holds one for its step's life). Every local user
// may connect (the socket is 0666: ranks run as their owners), and each
// connection holds a goroutine and a descriptor of the agent's: without a
// bound, one user could take them all, from everyone's acks and sruns.
const maxConnsPerUser = 1024

// acceptUntil hands each connection to handle, in its own goroutine,
// until ctx ends (which closes l). With perUser > 0, a connection past
// perUser open from the same peer uid is closed at once; 0 bounds nothing
// (the lifeline socket: a closed lifeline kills its rank, so refusing one
// would let any user kill others' ranks). A failed accept (out of
// descriptors, say) is retried after a pause rather than ending the socket
// for every job.
func acceptUntil(ctx context.Context, l net.Listener, perUser int, handle func(net.Conn)) error {
	go func() {
		<-ctx.Done()
		_ = l.Close()
	}()
	var mu sync.Mutex
	open := map[int]int{} // by peer uid
	for {
		c, err := l.Accept()
		if err != nil {
			if ctx.Err() != nil || errors.Is(err, net.ErrClosed) {
				return err
			}
			clock.Sleep(ctx, 100*time.Millisecond)
			continue
		}
		if perUser <= 0 {
			go handle(c)
			continue
		}
		uid := -1
		if uc, ok := c.(*net.UnixConn); ok {
			uid = peerUID(uc)
		}
		mu.Lock()
		full := open[uid] >= perUser
		if !full {
			open[uid]++
		}
		mu.Unlock()
		if full {
			_ = c.Close()
			continue
		}
		go func() {
			defer func() {
				mu.Lock()
				if open[uid]--; open[uid] == 0 {
					delete(open, uid)
				}
				mu.Unlock()
			}()
			handle(c)
		}()
	}
}

// answerAck reads one request, checks it and replies with drain's answer
// or the reason it was refused here.
func (a *agent) answerAck(ctx context.Context, c *net.UnixConn) {
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(ackIOTimeout))
	reply := func(r domain.AckReply) { _ = json.NewEncoder(c).Encode(r) }
	var sr socketRequest
	dec := json.NewDecoder(io.LimitReader(c, maxAckRequest))
	if err := dec.Decode(&sr); err != nil {
		reply(domain.AckReply{Error: "malformed ack request: " + err.Error()})
		return
	}
	if sr.Op == opSrun && sr.Srun != nil {
		a.serveSrun(ctx, c, dec, sr.Token, *sr.Srun)
		return
	}
	req := sr.ackRequest
	if err := a.exec.admitAck(req, peerUID(c)); err != nil {
		a.Log.Warn("checkpoint ack refused", "job", domain.BoundReason(req.JobID), "attempt", req.Attempt, "rank", req.Rank, "err", err)
		reply(domain.AckReply{Error: err.Error()})
		return
	}
	r, err := a.requestAck(ctx, req.CheckpointAck)
	if err != nil {
		r = domain.AckReply{Error: err.Error()}
	}
	reply(r)
}

// admitAck checks an ack from the socket against what runs here: the
// token must be the one given to the ranks of the attempt it names, the
// rank one of that attempt's ranks on this node, and, when the ranks run
// as their owner, the connecting process must be theirs (or root's).
func (e *executor) admitAck(req ackRequest, uid int) error {
	e.mu.Lock()
	g, ok := e.gangs[req.JobID]
	e.mu.Unlock()
	if !ok || subtle.ConstantTimeCompare([]byte(g.token), []byte(req.Token)) != 1 {
		return errors.Newf("no attempt of job %q runs on %s with this token", req.JobID, e.cfg.Node.Name)
	}
	if g.as.Attempt != req.Attempt {
		return errors.Newf("job %s runs attempt %d on %s, not %d", req.JobID, g.as.Attempt, e.cfg.Node.Name, req.Attempt)
	}
	if !slices.ContainsFunc(g.as.Ranks, func(r domain.Rank) bool { return r.Rank == req.Rank }) {
		return errors.Newf("rank %d of job %s does not run on %s", req.Rank, req.JobID, e.cfg.Node.Name)
	}
	if c := g.acct.Cred; c != nil && uid != int(c.Uid) && uid != 0 {
		return errors.Newf("the ack came from uid %d, not from the ranks' user %s", uid, g.acct.Name)
	}
	return nil
}

// peerUID is the uid of the process at the other end of c (-1 if
// unknown).
func peerUID(c *net.UnixConn) int {
	raw, err := c.SyscallConn()
	if err != nil {
		return -1
	}
	uid := -1
	_ = raw.Control(func(fd uintptr) {
		if cred, err := unix.GetsockoptUcred(int(fd), unix.SOL_SOCKET, unix.SO_PEERCRED); err == nil {
			uid = int(cred.Uid)
		}
	})
	return uid
}

// newToken makes an attempt's ack token.
func newToken() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// SendAck hands a checkpoint ack to the agent listening on sock (a rank's
// rankenv.AgentSocket) with the attempt's token (rankenv.AckToken), and returns
// drain's answer as the agent relays it.
func SendAck(ctx context.Context, sock, token string, ack domain.CheckpointAck) (domain.AckReply, error) {
	var d net.Dialer
	c, err := d.DialContext(ctx, "unix", sock)
	if err != nil {
		return domain.AckReply{}, errors.Wrapf(err, "reach the node's agent at %s", sock)
	}
	defer c.Close()
	deadline := time.Now().Add(ackIOTimeout)
	if dl, ok := ctx.Deadline(); ok && dl.Before(deadline) {
		deadline = dl
	}
	_ = c.SetDeadline(deadline)
	if err := json.NewEncoder(c).Encode(ackRequest{CheckpointAck: ack, Token: token}); err != nil {
		return domain.AckReply{}, errors.Wrap(err, "send the ack to the agent")
	}
	var reply domain.AckReply
	if err := json.NewDecoder(io.LimitReader(c, maxAckRequest)).Decode(&reply); err != nil {
		return domain.AckReply{}, errors.Wrap(err, "read the agent's answer")
	}
	return reply, nil
}
