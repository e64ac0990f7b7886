package store

import (
	"context"
	"log/slog"
	"slices"
	"sync"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
)

// A frozen etcd member (a hung VM, a stalled disk) keeps its connections
// open and answers nothing, and gRPC's pings notice it only after 11 s.
// Until then the client's round-robin balancer keeps handing it a share
// of every request and every new watch: each one waits out its request
// timeout or its watch stall there, and a job that goes through four
// services meets it four times. memberGuard takes such a member out of
// the client's endpoints as soon as anything on the client notices
// silence (a request that timed out, a watch its member neither created
// nor kept alive), once the member has also failed to answer a direct
// status request. It puts the member back as soon as it answers one.

// memberGuard keeps one client's requests off the members that do not
// answer. It lives as long as its client.
type memberGuard struct {
	all     []string      // every member the client was given, in order
	timeout time.Duration // how long a member has to answer a status request
	log     *slog.Logger
	noticed chan struct{} // something on the client went unanswered

	mu  sync.Mutex
	out []string // the members left out now
	// Notices so far, and how many of them the rounds finished so far
	// answered (a round answers the notices that came before it began).
	notices, answered uint64
	roundEnd          chan struct{} // closed when a round ends, then replaced
	leftOut           chan struct{} // closed when a member is left out, then replaced
}

// recheckEvery is how often the members left out are asked again.
const recheckEvery = time.Second

func newMemberGuard(endpoints []string, requestTimeout time.Duration, log *slog.Logger) *memberGuard {
	return &memberGuard{
		all: endpoints,
		// A member answers a status request from memory in milliseconds;
		// half the request timeout is plenty, and stays under the request
		// timeout, so a status request is never itself noticed as silence.
		timeout:  requestTimeout / 2,
		log:      log,
		noticed:  make(chan struct{}, 1),
		roundEnd: make(chan struct{}),
		leftOut:  make(chan struct{}),
	}
}

// notice tells the guard that a request or watch went unanswered. It
// never blocks: notices that come while members are being asked are
// answered by that round.
func (g *memberGuard) notice() {
	if g == nil {
		return
	}
	g.mu.Lock()
	g.notices++
	g.mu.Unlock()
	select {
	case g.noticed <- struct{}{}:
	default:
	}
}

// await notices silence and waits, at most a round's length, for the
// round that answers it, so that what the caller sends next goes to the
// members that answered.
func (g *memberGuard) await(ctx context.Context) {
	if g == nil || len(g.all) < 2 {
		return
	}
	g.notice()
	g.mu.Lock()
	want := g.notices
	g.mu.Unlock()
	deadline := time.NewTimer(g.timeout + 100*time.Millisecond)
	defer deadline.Stop()
	for {
		g.mu.Lock()
		done, end := g.answered >= want, g.roundEnd
		g.mu.Unlock()
		if done {
			return
		}
		select {
		case <-end:
		case <-deadline.C:
			return
		case <-ctx.Done():
			return
		}
	}
}

// leftOutNews is closed when the guard next leaves a member out: a watch
// still waiting on its member then is most likely waiting on that one.
// Nil (never closed) without a guard.
func (g *memberGuard) leftOutNews() <-chan struct{} {
	if g == nil {
		return nil
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.leftOut
}

// left says which members are left out now.
func (g *memberGuard) left() []string {
	g.mu.Lock()
	defer g.mu.Unlock()
	return slices.Clone(g.out)
}

// run asks the members in use whenever something is noticed, and the
// members left out every recheckEvery, until the client closes.
func (g *memberGuard) run(cli *clientv3.Client) {
	if len(g.all) < 2 {
		return // nowhere else to send anything
	}
	ctx := cli.Ctx()
	recheck := time.NewTicker(recheckEvery)
	defer recheck.Stop()
	for {
		out := g.left()
		var ask []string
		var covers uint64 // the notices this round answers: none for a recheck
		select {
		case <-ctx.Done():
			return
		case <-g.noticed:
			ask = inUse(g.all, out)
			g.mu.Lock()
			covers = g.notices
			g.mu.Unlock()
		case <-recheck.C:
			if len(out) == 0 {
				continue
			}
			ask = out
		}
		answered := g.ask(ctx, cli, ask)
		if ctx.Err() != nil {
			return
		}
		next := leaveOut(g.all, out, ask, answered)
		if !slices.Equal(next, out) {
			cli.SetEndpoints(inUse(g.all, next)...)
			if len(next) > 0 {
				g.log.Warn("etcd members not answering are left out of this client's requests until they answer again",
					"left_out", next, "in_use", inUse(g.all, next))
			} else {
				g.log.Info("every etcd member is in use again", "in_use", g.all)
			}
		}
		g.mu.Lock()
		if slices.ContainsFunc(next, func(m string) bool { return !slices.Contains(out, m) }) {
			close(g.leftOut)
			g.leftOut = make(chan struct{})
		}
		g.out = next
		g.answered = max(g.answered, covers)
		close(g.roundEnd)
		g.roundEnd = make(chan struct{})
		g.mu.Unlock()
	}
}

// ask sends each member a status request on a connection of its own and
// says which answered in time. Any answer counts, an error included (a
// member that refuses is not frozen), but Unavailable: down, or not
// accepting connections.
func (g *memberGuard) ask(ctx context.Context, cli *clientv3.Client, members []string) map[string]bool {
	ctx, cancel := context.WithTimeout(ctx, g.timeout)
	defer cancel()
	var mu sync.Mutex
	answered := map[string]bool{}
	var wg sync.WaitGroup
	for _, m := range members {
		wg.Go(func() {
			_, err := cli.Status(ctx, m)
			if err != nil && ctx.Err() != nil {
				return // no answer in time
			}
			if err != nil && Unanswered(err) {
				return // down, or refusing connections
			}
			mu.Lock()
			answered[m] = true
			mu.Unlock()
		})
	}
	wg.Wait()
	return answered
}

// leaveOut decides which members to leave out after some were asked: the
// members out before stay out unless asked and answered; those asked that
// did not answer go out. All of them out would leave the client nothing,
// so then none is: an etcd that answers nobody is better waited for by
// the client's own retries than by guesses.
func leaveOut(all, out, asked []string, answered map[string]bool) []string {
	var next []string
	for _, m := range all {
		was := slices.Contains(out, m)
		if slices.Contains(asked, m) {
			if !answered[m] {
				next = append(next, m)
			}
		} else if was {
			next = append(next, m)
		}
	}
	if len(next) == len(all) {
		return nil
	}
	return next
}

// inUse is all less out, in all's order.
func inUse(all, out []string) []string {
	var in []string
	for _, m := range all {
		if !slices.Contains(out, m) {
			in = append(in, m)
		}
	}
	return in
}

// guardKey finds a client's memberGuard in the client's own context.
type guardKey struct{}

// AwaitMemberCheck is for a caller about to repeat a request that an
// etcd member did not answer: it has cli's member guard ask the members
// and waits for its verdict (about half the request timeout at most; at
// once without a guard), so that the repeat goes to a member that answers
// rather than, by the balancer's turn, to the silent one again.
func AwaitMemberCheck(ctx context.Context, cli *clientv3.Client) { guardOf(cli).await(ctx) }

// guardOf is cli's member guard, nil if it has none (a client not made by
// Connect).
func guardOf(cli *clientv3.Client) *memberGuard {
	g, _ := cli.Ctx().Value(guardKey{}).(*memberGuard)
	return g
}

// noticeUnanswered tells cli's guard, if it has one, that something sent
// on it went unanswered.
func noticeUnanswered(cli *clientv3.Client) { guardOf(cli).notice() }
