// Package client is the Go client of Lockstep's public interface: submit a
// job spec, cancel, read job records and follow events. The CLI is built on
// it; pipelines in other languages do the same with a plain JetStream
// publish (see docs/events.md).
package client

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/cockroachdb/errors"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/lockstep-dev/lockstep/shared/contract/domain"
	"github.com/lockstep-dev/lockstep/shared/contract/errs"
	"github.com/lockstep-dev/lockstep/shared/contract/events"
	"github.com/lockstep-dev/lockstep/shared/contract/jobspec"
	"github.com/lockstep-dev/lockstep/shared/contract/subjects"
	"github.com/lockstep-dev/lockstep/shared/plumbing/bus"
	"github.com/lockstep-dev/lockstep/shared/plumbing/jobs"
	"github.com/lockstep-dev/lockstep/shared/plumbing/telemetry"
)

// Client talks to a Lockstep cluster through NATS.
type Client struct {
	bus *bus.Bus
	// jobs is the job records' store, bound on first use (store): a
	// submission needs no record read, and binding costs a round trip.
	jobsMu sync.Mutex
	jobs   *jobs.Store
	// seen keeps this client's reads of a record from going back in time.
	seen newestSeen
	// User is the authenticated user the connection's credentials name,
	// "" when connected without credentials. With a user, requests go on
	// that user's subjects (subjects.SubmitAs, CancelAs, DrainAs), the only
	// ones a cluster with auth lets them publish on, and the services take
	// the job's owner and the request's actor from them.
	User string
}

// Dial connects to NATS, with credentials when opts carry them
// (bus.WithCreds, bus.WithTLS). It does not create streams: a cluster that
// has no services running yet has nothing to submit to, and says so.
func Dial(ctx context.Context, url string, opts ...bus.Option) (*Client, error) {
	// A permissions violation is explained by the request it failed
	// (ErrNotYours and the like), not printed raw on stderr.
	opts = append([]bus.Option{bus.WithAsyncErrors(func(error) {})}, opts...)
	b, err := bus.Connect(ctx, url, "lockstep-cli", opts...)
	if errors.Is(err, nats.ErrAuthorization) || errors.Is(err, nats.ErrAuthExpired) {
		return nil, errors.WithHint(err, "this cluster requires credentials: pass --creds FILE (or set LOCKSTEP_CREDS, or a context in ~/.config/lockstep/config.yaml); `lockstep dev` writes them to its data dir's creds/")
	}
	if err != nil {
		return nil, errors.WithHint(err, "is `lockstep dev` (or the cluster) running? set --nats to its address")
	}
	// The server checked the creds; their name is who this client acts as.
	return &Client{bus: b, User: b.Identity().Name}, nil
}

// noServicesHint explains a cluster whose streams and bucket do not exist.
const noServicesHint = "no Lockstep services have run against this NATS yet"

// store binds the job records' bucket on first use.
func (c *Client) store(ctx context.Context) (*jobs.Store, error) {
	c.jobsMu.Lock()
	defer c.jobsMu.Unlock()
	if c.jobs != nil {
		return c.jobs, nil
	}
	js, err := jobs.Open(ctx, c.bus.JS)
	if err != nil {
		return nil, errors.WithHint(err, noServicesHint)
	}
	c.jobs = js
	return js, nil
}

// Close closes the connection.
func (c *Client) Close() { c.bus.Close() }

// Bus exposes the connection for advanced callers (tests, load tests).
func (c *Client) Bus() *bus.Bus { return c.bus }

// SubmitOptions adjust a submission.
type SubmitOptions struct {
	// Workdir, when set and the spec has none, becomes the ranks' working
	// directory (the CLI passes the directory it runs in, like sbatch).
	Workdir string
}

// Submit validates a spec locally (same rules as admission; in the client
// build, all but the JSON Schema, which admission applies), fills in an ID
// when it has none, and publishes it. The returned ID is the job's ID; the
// publish ack means the submission is durably accepted.
func (c *Client) Submit(ctx context.Context, raw []byte, opts ...SubmitOptions) (string, error) {
	var o SubmitOptions
	for _, opt := range opts {
		o = opt
	}
	r := c.SubmitMany(ctx, [][]byte{raw}, o)[0]
	if r.Err != nil {
		return "", r.Err
	}
	return r.ID, nil
}

// Submitted is one submission of SubmitMany: its job ID, or why it was
// not accepted.
type Submitted struct {
	ID  string
	Err error
}

// SubmitMany is Submit for many specs at once, as a pipeline submitting a
// sweep does: every spec is checked first (one that fails is not sent,
// the others are), then all are published without waiting for each ack
// in turn, then the acks are collected. Results are in the order of raws.
func (c *Client) SubmitMany(ctx context.Context, raws [][]byte, o SubmitOptions) []Submitted {
	out := make([]Submitted, len(raws))
	// In chunks: the client holds at most a few thousand unacknowledged
	// publishes before it refuses more.
	for lo := 0; lo < len(raws); lo += submitChunk {
		hi := min(lo+submitChunk, len(raws))
		futures := make([]jetstream.PubAckFuture, hi-lo)
		for i := lo; i < hi; i++ {
			msg, spec, err := c.submission(ctx, raws[i], o)
			if err != nil {
				out[i].Err = err
				continue
			}
			out[i].ID = spec.ID
			if futures[i-lo], err = c.bus.JS.PublishMsgAsync(msg); err != nil {
				out[i].Err = publishErr(err)
			}
		}
		for k, f := range futures {
			if f == nil {
				continue
			}
			i := lo + k
			select {
			case ack := <-f.Ok():
				if ack.Duplicate {
					out[i].Err = c.checkDuplicate(ctx, out[i].ID)
				}
			case err := <-f.Err():
				out[i].Err = publishErr(err)
			case <-ctx.Done():
				out[i].Err = ctx.Err()
			}
		}
	}
	return out
}

// submitChunk is how many submissions SubmitMany has in flight at once.
const submitChunk = 1000

// submission checks a spec and makes its message; it returns the spec as
// checked. It fills in the ID when the spec has none (so the caller can
// follow the job before admission has seen it), and the working directory
// when the spec has none and o has.
func (c *Client) submission(ctx context.Context, raw []byte, o SubmitOptions) (*nats.Msg, jobspec.Spec, error) {
	spec, err := jobspec.Parse(raw)
	if err != nil {
		return nil, spec, err
	}
	fill := map[string]any{}
	if spec.ID == "" {
		spec.ID = NewID(spec.Name)
		fill["id"] = spec.ID
	}
	if spec.Workdir == "" && o.Workdir != "" {
		fill["workdir"] = o.Workdir
	}
	if len(fill) > 0 {
		var m map[string]any
		if err := json.Unmarshal(raw, &m); err != nil {
			return nil, spec, errors.Wrap(err, "re-encode spec")
		}
		for k, v := range fill {
			m[k] = v
		}
		if raw, err = json.Marshal(m); err != nil {
			return nil, spec, errors.Wrap(err, "re-encode spec")
		}
		// The filled fields are checked as they will reach admission (a
		// workdir the spec's rules refuse).
		if _, err := jobspec.Parse(raw); err != nil {
			return nil, spec, err
		}
	}
	msg := nats.NewMsg(c.subject(subjects.Submit, subjects.SubmitAs))
	msg.Data = raw
	msg.Header.Set(subjects.HeaderMsgID, spec.ID)
	// A caller tracing its pipeline gets its trace continued by the job.
	telemetry.Inject(ctx, msg.Header)
	return msg, spec, nil
}

// ErrIDTaken: a submission's ID belongs to another user's job.
var ErrIDTaken = errors.New("id already used by another user")

// duplicateWait bounds how long a deduplicated submission waits for the
// record of the message it was taken for.
const duplicateWait = 5 * time.Second

// checkDuplicate explains a submission the stream dropped as a duplicate
// of an earlier message with the same Nats-Msg-Id (the job ID). The
// stream's de-duplication knows no owners, so the earlier message may be
// this user's (a retry: fine), another user's (the ID is theirs), or one
// that made no job at all (rejected): only the job record tells.
func (c *Client) checkDuplicate(ctx context.Context, id string) error {
	wctx, cancel := context.WithTimeout(ctx, duplicateWait)
	defer cancel()
	for {
		j, err := c.Job(wctx, id)
		switch {
		case err == nil && j.Owner == c.User:
			return nil
		case err == nil:
			return errors.Wrapf(ErrIDTaken, "job %s", id)
		case !errs.IsNotFound(err) && wctx.Err() == nil:
			return err
		}
		select {
		case <-wctx.Done():
			if ctx.Err() != nil {
				return ctx.Err()
			}
			return errors.Newf("job %s: a submission under this ID was sent in the last few minutes and made no job "+
				"(rejected, or still waiting for admission); see `lockstep describe %s`, or submit under another ID", id, id)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// NewID makes a job ID from a name and a random suffix of 64 bits. The ID
// is also the submission's de-duplication key, so two specs of one name
// must not draw the same suffix: with 32 bits a sweep of 10,000 had a 1 %
// chance of a silently dropped duplicate, with 64 it is 3e-12. The base is
// cut so that the ID stays within the 63 characters of an ID.
func NewID(name string) string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	suffix := hex.EncodeToString(b[:])
	base := sanitize(name)
	if base == "" {
		base = "job"
	}
	if room := 63 - 1 - len(suffix); len(base) > room {
		base = strings.TrimRight(base[:room], "-")
	}
	return base + "-" + suffix
}

func sanitize(s string) string {
	out := make([]byte, 0, len(s))
	for _, r := range []byte(s) {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9':
			out = append(out, r)
		case r >= 'A' && r <= 'Z':
			out = append(out, r+'a'-'A')
		case len(out) > 0 && out[len(out)-1] != '-':
			out = append(out, '-')
		}
	}
	for len(out) > 0 && out[len(out)-1] == '-' {
		out = out[:len(out)-1]
	}
	return string(out)
}

// Cancel asks for a job to be cancelled.
func (c *Client) Cancel(ctx context.Context, id, reason string) error {
	if !jobspec.ValidID(id) {
		return errors.Newf("%q is not a valid job ID", id)
	}
	msgID := "cancel." + id + "." + time.Now().UTC().Format(time.RFC3339Nano)
	return c.bus.PublishJSON(ctx, c.subject(subjects.Cancel, subjects.CancelAs), msgID, domain.CancelRequest{JobID: id, Reason: reason})
}

// ArrayTasks reads the records of array id's tasks, by index: none when
// id names no array (an array's ID has no record of its own). It reads
// every record, as Jobs does.
func (c *Client) ArrayTasks(ctx context.Context, id string) ([]domain.Job, error) {
	if !jobspec.ValidBaseID(id) {
		return nil, nil
	}
	all, _, err := c.Jobs(ctx)
	if err != nil {
		return nil, err
	}
	var out []domain.Job
	for _, j := range all {
		if j.Array != nil && j.Array.JobID == id {
			out = append(out, j)
		}
	}
	slices.SortFunc(out, func(a, b domain.Job) int { return cmp.Compare(a.Array.Index, b.Array.Index) })
	return out, nil
}

// Job reads one job record. It never returns an older revision of the
// record than it returned before (see newestSeen).
func (c *Client) Job(ctx context.Context, id string) (domain.Job, error) {
	s, err := c.store(ctx)
	if err != nil {
		return domain.Job{}, err
	}
	j, rev, err := s.Get(ctx, id)
	if err != nil {
		return domain.Job{}, err
	}
	return c.seen.keep(j, rev), nil
}

// ErrNotYours: the server refused to let this identity read another
// user's job's events or output.
var ErrNotYours = errors.New("not your job")

// readErr explains a failure to open a consumer on a job's events or
// output. The server answers a read it does not permit with silence (a
// permissions violation on the connection, then a timeout here), so a
// user reading another user's job is told so rather than shown a timeout.
func (c *Client) readErr(err error, what, id, owner string) error {
	if c.User != "" && owner != c.User {
		return errors.Wrapf(errors.Mark(err, ErrNotYours),
			"read %s of job %s: it belongs to %s, and a user may read only their own jobs'", what, id, ownerName(owner))
	}
	return errors.Wrapf(err, "read %s of job %s", what, id)
}

// ownerName is how messages name a job's owner.
func ownerName(owner string) string {
	if owner == "" {
		return "no user (submitted without authentication)"
	}
	return owner
}

// Logs opens a reader of a job's output (every rank, or one when rank is
// not negative), from the start. The caller closes it.
func (c *Client) Logs(ctx context.Context, id string, rank int) (*bus.Reader, error) {
	owner, err := c.OwnerOf(ctx, id)
	if err != nil {
		return nil, err
	}
	filter := subjects.JobLogs(owner, id)
	if rank >= 0 {
		filter = subjects.RankLogs(owner, id, rank)
	}
	// One filter subject, which the server checks against the reader's
	// permissions.
	cons, err := c.bus.Snapshot(ctx, subjects.StreamLogs, jetstream.ConsumerConfig{
		FilterSubject: filter, DeliverPolicy: jetstream.DeliverAllPolicy,
	})
	if err != nil {
		return nil, c.readErr(err, "output", id, owner)
	}
	return cons, nil
}

// OwnerOf is the owner of job id, whose name is in the subjects of the
// job's events and logs: the record's, or, before the record exists (a
// submission just sent) or after it is gone, the connection's own user.
func (c *Client) OwnerOf(ctx context.Context, id string) (string, error) {
	j, err := c.Job(ctx, id)
	switch {
	case err == nil:
		return j.Owner, nil
	case errs.IsNotFound(err):
		return c.User, nil
	}
	return "", err
}

// WaitEnded blocks until the job's record is final and returns it. The
// record, not an event, is what a client acting on a job's end must trust:
// see jobs.Store.WaitEnded.
func (c *Client) WaitEnded(ctx context.Context, id string) (domain.Job, error) {
	s, err := c.store(ctx)
	if err != nil {
		return domain.Job{}, err
	}
	return s.WaitEnded(ctx, id)
}

// Jobs reads every job record in one pass. A record that does not decode
// (or names another job than its key) is not a reason to show nothing: its
// key is returned in bad, and the rest in jobs. A job this client read
// with Job at a newer revision than the pass found is returned as Job
// returned it.
func (c *Client) Jobs(ctx context.Context) (all []domain.Job, bad []string, err error) {
	s, err := c.store(ctx)
	if err != nil {
		return nil, nil, err
	}
	err = s.Scan(ctx, func(e jobs.Entry) error {
		if e.Deleted {
			return nil
		}
		j, derr := jobs.Decode(e.Key, e.Value)
		if derr != nil {
			bad = append(bad, e.Key)
			return nil
		}
		if newer, ok := c.seen.newer(j.ID, e.Revision); ok {
			j = newer
		}
		all = append(all, j)
		return nil
	})
	return all, bad, err
}

// Events returns a job's events so far, oldest first by event time.
// Stream order is publish order, which is not causal order across
// services: admission publishes "admitted" after its record is visible,
// and placement and gang may act on that record and publish "reserved"
// first. Each event's time is taken before its effect, so sorting by it
// (stably, for equal times) restores the order things happened in.
func (c *Client) Events(ctx context.Context, id string) ([]events.Event, error) {
	var out []events.Event
	err := c.follow(ctx, id, false, func(ev events.Event) bool { out = append(out, ev); return true })
	slices.SortStableFunc(out, func(a, b events.Event) int { return a.Time.Compare(b.Time) })
	return out, err
}

// NodeEvents returns a node's events so far, oldest first.
func (c *Client) NodeEvents(ctx context.Context, node string) ([]events.Event, error) {
	var out []events.Event
	cons, err := c.bus.Snapshot(ctx, subjects.StreamEvents, jetstream.ConsumerConfig{
		FilterSubject: subjects.NodeEvent(node, "*"),
	})
	if errors.Is(err, jetstream.ErrStreamNotFound) {
		return nil, errors.WithHint(errors.Wrap(err, "read node events"), noServicesHint)
	}
	if err != nil {
		return nil, errors.Wrap(err, "read node events")
	}
	defer cons.Close()
	err = drain(cons, func(ev events.Event) bool { out = append(out, ev); return true })
	return out, err
}

// Follow calls fn for each event of a job, past ones first, then new ones
// as they arrive, until fn returns false or ctx ends.
func (c *Client) Follow(ctx context.Context, id string, fn func(events.Event) bool) error {
	return c.follow(ctx, id, true, fn)
}

func (c *Client) follow(ctx context.Context, id string, live bool, fn func(events.Event) bool) error {
	owner, err := c.OwnerOf(ctx, id)
	if err != nil {
		return err
	}
	// One filter subject: the server then checks it against the reader's
	// permissions (a user may read their own jobs' events only).
	filter := subjects.JobEvents(owner, id)
	if !live {
		cons, err := c.bus.Snapshot(ctx, subjects.StreamEvents, jetstream.ConsumerConfig{
			FilterSubject: filter, DeliverPolicy: jetstream.DeliverAllPolicy,
		})
		if err != nil {
			return c.readErr(err, "events", id, owner)
		}
		defer cons.Close()
		return drain(cons, fn)
	}
	cons, err := c.bus.Follow(ctx, subjects.StreamEvents, jetstream.OrderedConsumerConfig{
		FilterSubjects: []string{filter}, DeliverPolicy: jetstream.DeliverAllPolicy,
	})
	if err != nil {
		return c.readErr(err, "events", id, owner)
	}
	defer cons.Close()
	it, err := cons.Messages()
	if err != nil {
		return errors.Wrap(err, "follow events")
	}
	stop := context.AfterFunc(ctx, it.Stop)
	defer stop()
	defer it.Stop()
	for {
		msg, err := it.Next()
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			return errors.Wrap(err, "follow events")
		}
		if !deliver(msg, fn) {
			return nil
		}
	}
}

// deliver hands fn the event in msg and reports whether fn wants more.
// An event that does not decode is skipped, not an error: one bad message
// must not end a history or a follow. So is a stored message that the
// server answered a direct get with onto the event's subject (bus.Replayed):
// anyone who may read job records can put one there, and it is no event.
func deliver(msg jetstream.Msg, fn func(events.Event) bool) bool {
	var ev events.Event
	if bus.Replayed(msg.Headers()) || json.Unmarshal(msg.Data(), &ev) != nil {
		return true
	}
	return fn(ev)
}

// drain reads what the consumer has now and returns.
func drain(cons jetstream.Consumer, fn func(events.Event) bool) error {
	for {
		batch, err := cons.FetchNoWait(256)
		if err != nil {
			return errors.Wrap(err, "read events")
		}
		n := 0
		for msg := range batch.Messages() {
			n++
			if !deliver(msg, fn) {
				return nil
			}
		}
		if err := batch.Error(); err != nil && !errors.Is(err, jetstream.ErrNoMessages) {
			return errors.Wrap(err, "read events")
		}
		if n == 0 {
			return nil
		}
	}
}

// Drain asks for a running job to checkpoint, then be requeued or
// cancelled (domain.ThenRequeue / ThenCancel).
func (c *Client) Drain(ctx context.Context, id string, kind domain.DrainKind, then domain.DrainThen, reason string) error {
	if !jobspec.ValidID(id) {
		return errors.Newf("%q is not a valid job ID", id)
	}
	msgID := "drain." + id + "." + time.Now().UTC().Format(time.RFC3339Nano)
	return c.bus.PublishJSON(ctx, c.subject(subjects.Drain, subjects.DrainAs), msgID, domain.DrainRequest{JobID: id, Kind: kind, Then: then, Reason: reason})
}

// subject is a request's subject: the user's own when the client has one,
// the shared one (a cluster without auth) otherwise.
func (c *Client) subject(shared string, as func(string) string) string {
	if c.User == "" {
		return shared
	}
	return as(c.User)
}

// DrainNode takes a node out of service: no new work, running gangs
// checkpoint-drained and rescheduled. ResumeNode undoes it.
func (c *Client) DrainNode(ctx context.Context, node, reason string) error {
	return c.nodeRequest(ctx, subjects.NodeDrain, node, reason)
}

// ResumeNode returns a drained node to service.
func (c *Client) ResumeNode(ctx context.Context, node string) error {
	return c.nodeRequest(ctx, subjects.NodeResume, node, "")
}

func (c *Client) nodeRequest(ctx context.Context, subject, node, reason string) error {
	if !subjects.Token(node) {
		return errors.Newf("%q is not a valid node name", node)
	}
	msgID := subject + "." + node + "." + time.Now().UTC().Format(time.RFC3339Nano)
	return c.bus.PublishJSON(ctx, subject, msgID, domain.NodeRequest{Node: node, Reason: reason})
}

// Nodes lists every node with its state and GPU use (answered by a drain
// replica).
func (c *Client) Nodes(ctx context.Context) ([]domain.NodeInfo, error) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	msg, err := c.bus.NC.RequestWithContext(ctx, subjects.NodeList, nil)
	if err != nil {
		return nil, errors.WithHint(errors.Wrap(err, "list nodes"), "is a drain service running?")
	}
	var out []domain.NodeInfo
	return out, errors.Wrap(json.Unmarshal(msg.Data, &out), "decode node list")
}

// Ack sends a checkpoint acknowledgement as node's agent forwards it (on
// node's ack subject, which with auth only that node's identity, or an
// admin, may publish on) and returns the drain service's verdict. Ranks do
// not use it: they hand acks to their agent (`lockstep ckpt-done`). A
// request that reaches a replica just as it stops gets no answer, so each
// try is short and the ack (idempotent) is sent again, for up to 20
// seconds.
func (c *Client) Ack(ctx context.Context, node string, ack domain.CheckpointAck) (domain.AckReply, error) {
	data, err := json.Marshal(ack)
	if err != nil {
		return domain.AckReply{}, err
	}
	deadline := time.Now().Add(20 * time.Second)
	for {
		tctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		msg, err := c.bus.NC.RequestWithContext(tctx, subjects.CheckpointAckFrom(node), data)
		cancel()
		if err == nil {
			var reply domain.AckReply
			return reply, errors.Wrap(json.Unmarshal(msg.Data, &reply), "decode ack reply")
		}
		if ctx.Err() != nil || time.Now().After(deadline) {
			return domain.AckReply{}, errors.WithHint(errors.Wrap(err, "send checkpoint ack"), "is a drain service running?")
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// TestOnly asks the placement leader where and when a spec would start, as
// `sbatch --test-only` does, without submitting it.
func (c *Client) TestOnly(ctx context.Context, raw []byte) (domain.TestOnlyReply, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	msg, err := c.bus.NC.RequestWithContext(ctx, subjects.TestOnly, raw)
	if err != nil {
		return domain.TestOnlyReply{}, errors.WithHint(errors.Wrap(err, "ask placement"), "is a placement service running (and elected)?")
	}
	var reply domain.TestOnlyReply
	return reply, errors.Wrap(json.Unmarshal(msg.Data, &reply), "decode placement reply")
}

// Topology returns the placement leader's rendering of the switch tree
// with free/total GPUs per switch.
func (c *Client) Topology(ctx context.Context) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	msg, err := c.bus.NC.RequestWithContext(ctx, subjects.TopologyView, nil)
	if err != nil {
		return "", errors.WithHint(errors.Wrap(err, "ask placement"), "is a placement service running (and elected)?")
	}
	return string(msg.Data), nil
}
