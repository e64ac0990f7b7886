package store

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"
)

func TestLateAfterWaitsForTheClientsRenewalAndLeavesTimeToRetry(t *testing.T) {
	for _, tc := range []struct{ ttl, want time.Duration }{
		{2 * time.Second, 1500 * time.Millisecond}, // capped by the fence margin
		{4 * time.Second, 4*time.Second/3 + time.Second},
		{5 * time.Second, 5*time.Second/3 + time.Second},
		{10 * time.Second, 5 * time.Second},
		{time.Minute, 30 * time.Second},
	} {
		got := LateAfter(tc.ttl)
		if got != tc.want {
			t.Errorf("LateAfter(%s) = %s, want %s", tc.ttl, got, tc.want)
		}
		if retrying := tc.ttl - FenceMargin(tc.ttl)/2 - got; retrying < FenceMargin(tc.ttl)/2 {
			t.Errorf("TTL %s: only %s to renew directly", tc.ttl, retrying)
		}
	}
}

// The etcd leader freezes with the client's keep-alive stream on it: the
// survivors answer renewals only once they have elected a leader, and
// slowly (a machine busy with the election). The holder renews directly
// from LateAfter on, long enough per attempt, and keeps the lease. (With
// attempts squeezed into the last half margin, each cut at a sixth of it,
// every renewal would time out and the node would go down.)
func TestLeaseKeeperKeepsTheLeaseThroughAnElection(t *testing.T) {
	ttl := 5 * time.Second
	ka := make(chan *clientv3.LeaseKeepAliveResponse) // stuck on the frozen member
	start := time.Now()
	elected := start.Add(3 * time.Second)
	var tries, hung atomic.Int32
	renew := func(ctx context.Context) (time.Duration, error) {
		n := tries.Add(1)
		switch {
		case n%3 == 1: // the frozen member itself
			hung.Add(1)
			<-ctx.Done()
			return 0, ctx.Err()
		case time.Now().Before(elected):
			return 0, errors.New("etcdserver: no leader")
		}
		select {
		case <-time.After(300 * time.Millisecond):
			return ttl, nil
		case <-ctx.Done():
			return 0, ctx.Err()
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 6*time.Second)
	defer cancel()
	err := keeper(ttl, stream(ka), renew).Hold(ctx, start)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("gave the lease up %s after the last renewal: %v", time.Since(start).Round(time.Millisecond), err)
	}
	if hung.Load() == 0 || tries.Load() < 2 {
		t.Errorf("%d direct renewals (%d hung): the test did not test", tries.Load(), hung.Load())
	}
}

func TestFenceMarginLeavesTimeToKillAndNeverOutrunsRenewals(t *testing.T) {
	for _, tc := range []struct{ ttl, want time.Duration }{
		{2 * time.Second, 500 * time.Millisecond},
		{5 * time.Second, time.Second},
		{10 * time.Second, 2 * time.Second},
		{time.Minute, 12 * time.Second},
	} {
		got := FenceMargin(tc.ttl)
		if got != tc.want {
			t.Errorf("FenceMargin(%s) = %s, want %s", tc.ttl, got, tc.want)
		}
		// Renewals come every TTL/3 (+0.5 s): one may be late.
		if tc.ttl-got < 3*tc.ttl/4 {
			t.Errorf("TTL %s: fencing after %s would outrun the renewals", tc.ttl, tc.ttl-got)
		}
	}
}

// A holder that stops hearing renewals gives up its lease before etcd could
// expire the lease (TTL less the margin after the last renewal), and not
// while renewals keep coming.
func TestLeaseKeeperFencesWhenRenewalsStop(t *testing.T) {
	ttl := 4 * time.Second
	ka := make(chan *clientv3.LeaseKeepAliveResponse)
	done := make(chan error, 1)
	start := time.Now()
	var renewals atomic.Int32
	unreachable := func(ctx context.Context) (time.Duration, error) {
		renewals.Add(1)
		<-ctx.Done()
		return 0, ctx.Err()
	}
	go func() {
		done <- keeper(ttl, stream(ka), unreachable).Hold(context.Background(), start)
	}()

	// Renewals for twice the fencing delay (3 s): no fencing.
	var last time.Time
	for time.Since(start) < 6*time.Second {
		select {
		case ka <- &clientv3.LeaseKeepAliveResponse{TTL: 4}:
			last = time.Now()
		case err := <-done:
			t.Fatalf("fenced after %s while renewals came every 200ms: %v", time.Since(start).Round(time.Millisecond), err)
		}
		time.Sleep(200 * time.Millisecond)
	}
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "giving it up before etcd expires it") {
			t.Fatalf("err = %v, want a give-up error", err)
		}
		if since := time.Since(last); since < 3*time.Second {
			t.Errorf("fenced %s after the last renewal, before TTL-margin (3s)", since)
		}
		// From LateAfter (2.33 s) to half the 1 s margin before expiry
		// (3.5 s), a new attempt every renewEvery, at most
		// maxRenewAttempts hung at once.
		window := ttl - FenceMargin(ttl)/2 - LateAfter(ttl)
		if n, most := renewals.Load(), int32(window/renewEvery)+2; n < 3 || n > most {
			t.Errorf("%d direct renewals tried before giving up, want 3-%d", n, most)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("no fencing 30s after renewals stopped")
	}
}

// stream returns a keepAlive that hands out the given channels in turn.
func stream(chans ...chan *clientv3.LeaseKeepAliveResponse) func(context.Context) (<-chan *clientv3.LeaseKeepAliveResponse, error) {
	return func(context.Context) (<-chan *clientv3.LeaseKeepAliveResponse, error) {
		if len(chans) == 0 {
			return nil, errors.New("no more streams")
		}
		c := chans[0]
		chans = chans[1:]
		return c, nil
	}
}

func TestLeaseKeeperReportsALeaseGone(t *testing.T) {
	ttl := 10 * time.Second
	ka := make(chan *clientv3.LeaseKeepAliveResponse)
	close(ka)
	gone := func(context.Context) (time.Duration, error) { return 0, nil } // TTL 0: etcd has no such lease
	err := keeper(ttl, stream(ka), gone).Hold(context.Background(), time.Now())
	if err == nil || !strings.Contains(err.Error(), "expired or revoked") {
		t.Fatalf("err = %v", err)
	}
}

// The client closes its keep-alive stream on its own clock; if etcd still
// renews the lease (a new leader extended it), the holder keeps it and
// reopens the stream.
func TestLeaseKeeperReopensAStreamTheClientGaveUpOn(t *testing.T) {
	ttl := 10 * time.Second
	first, second := make(chan *clientv3.LeaseKeepAliveResponse), make(chan *clientv3.LeaseKeepAliveResponse)
	close(first)
	alive := func(context.Context) (time.Duration, error) { return 10 * time.Second, nil }
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- keeper(ttl, stream(first, second), alive).Hold(ctx, time.Now())
	}()
	select {
	case second <- &clientv3.LeaseKeepAliveResponse{TTL: 10}: // read: the stream was reopened
	case err := <-done:
		t.Fatalf("gave up the node although etcd renewed the lease: %v", err)
	case <-time.After(30 * time.Second):
		t.Fatal("the reopened stream was never read")
	}
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Errorf("err = %v, want context.Canceled", err)
	}
}

// Late client renewals are not a lost lease: a direct renewal that works
// keeps it.
func TestLeaseKeeperRenewsDirectlyWhenRenewalsAreLate(t *testing.T) {
	ttl := 2 * time.Second
	ka := make(chan *clientv3.LeaseKeepAliveResponse) // the client's renewals never come
	var renewals atomic.Int32
	renew := func(context.Context) (time.Duration, error) {
		if renewals.Add(1) >= 3 {
			return 0, errors.New("etcd unreachable")
		}
		return 2 * time.Second, nil
	}
	err := keeper(ttl, stream(ka), renew).Hold(context.Background(), time.Now())
	if err == nil || !strings.Contains(err.Error(), "etcd unreachable") {
		t.Fatalf("err = %v", err)
	}
	if n := renewals.Load(); n < 4 {
		t.Errorf("%d direct renewals, want two that kept the lease and then retries of the failing one", n)
	}
}

func keeper(ttl time.Duration, keepAlive func(context.Context) (<-chan *clientv3.LeaseKeepAliveResponse, error), renew func(context.Context) (time.Duration, error)) LeaseKeeper {
	return LeaseKeeper{TTL: ttl, KeepAlive: keepAlive, Renew: renew, Log: slog.New(slog.DiscardHandler)}
}

// A direct renewal that hangs (sent to a frozen member) is tried again
// within the budget, and the retry keeps the lease.
func TestLeaseKeeperRetriesAHangingRenewal(t *testing.T) {
	var renewals atomic.Int32
	renew := func(ctx context.Context) (time.Duration, error) {
		if renewals.Add(1) == 1 {
			<-ctx.Done() // the frozen member never answers
			return 0, ctx.Err()
		}
		return 10 * time.Second, nil
	}
	k := keeper(10*time.Second, nil, renew)
	left, err := k.renewUntil(context.Background(), time.Now().Add(time.Second))
	if err != nil || left != 10*time.Second {
		t.Fatalf("renewWithin = %s, %v; want the second attempt's 10s", left, err)
	}
	if n := renewals.Load(); n != 2 {
		t.Errorf("%d attempts, want 2", n)
	}
}

// etcd saying the lease is gone is final: no retries.
func TestLeaseKeeperStopsAtLeaseNotFound(t *testing.T) {
	var renewals atomic.Int32
	renew := func(context.Context) (time.Duration, error) {
		renewals.Add(1)
		return 0, rpctypes.ErrLeaseNotFound
	}
	_, err := keeper(10*time.Second, nil, renew).renewUntil(context.Background(), time.Now().Add(time.Second))
	if err == nil || !strings.Contains(err.Error(), "gone") {
		t.Fatalf("err = %v, want the lease gone", err)
	}
	if n := renewals.Load(); n != 1 {
		t.Errorf("%d attempts, want 1", n)
	}
}

// The etcd leader freezes just after the client's last renewal and the
// survivors elect a new one late, a few hundred milliseconds before the
// holder must give up. Attempts started before the election hang on
// whichever member they reached (a follower waits on the frozen leader it
// forwarded them to), and one member in three is the frozen one: only an
// attempt started after the election, on a live member, answers. The
// holder keeps its lease because it keeps starting attempts. (One attempt
// at a time, each given a quarter of the 1.8 s window, would be
// waiting on a hung one when the holder must give up.)
func TestLeaseKeeperRenewsSoonAfterALateElection(t *testing.T) {
	ttl := 5 * time.Second
	ka := make(chan *clientv3.LeaseKeepAliveResponse) // stuck on the frozen member
	start := time.Now()
	giveUp := start.Add(ttl - FenceMargin(ttl)/2)
	elected := giveUp.Add(-700 * time.Millisecond)
	var tries, after atomic.Int32
	renew := func(ctx context.Context) (time.Duration, error) {
		sent := time.Now()
		if tries.Add(1)%3 == 1 || sent.Before(elected) {
			<-ctx.Done() // the frozen member, or a follower forwarding to it
			return 0, ctx.Err()
		}
		after.Add(1)
		return ttl, nil
	}
	ctx, cancel := context.WithDeadline(context.Background(), giveUp.Add(time.Second))
	defer cancel()
	err := keeper(ttl, stream(ka), renew).Hold(ctx, start)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("gave the lease up %s after the last renewal, the election %s before it had to: %v",
			time.Since(start).Round(time.Millisecond), giveUp.Sub(elected), err)
	}
	if after.Load() == 0 {
		t.Error("no renewal answered after the election: the test did not test")
	}
}

// While the client's renewals do not come, the holder renews directly on
// the client's cadence (TTL/3), not only each time it finds itself late
// again: every direct renewal then has more time to get through.
func TestLeaseKeeperRenewsDirectlyOnTheClientsCadence(t *testing.T) {
	ttl := 3 * time.Second
	ka := make(chan *clientv3.LeaseKeepAliveResponse) // the client's renewals never come
	var (
		mu    sync.Mutex
		times []time.Time
	)
	renew := func(context.Context) (time.Duration, error) {
		mu.Lock()
		times = append(times, time.Now())
		mu.Unlock()
		return ttl, nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5500*time.Millisecond)
	defer cancel()
	if err := keeper(ttl, stream(ka), renew).Hold(ctx, time.Now()); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Hold = %v, want it to keep the lease until ctx ends", err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(times) < 3 {
		t.Fatalf("%d direct renewals in 5.5s", len(times))
	}
	for i := 1; i < len(times); i++ {
		if gap := times[i].Sub(times[i-1]); gap > ttl/3+200*time.Millisecond {
			t.Errorf("direct renewal %d came %s after the one before, want about TTL/3 (%s)", i, gap.Round(time.Millisecond), ttl/3)
		}
	}
}

// An expendable lease (a pool's idle one) whose renewal is late is let go,
// not renewed directly; one that is not expendable at that moment is
// renewed, and asked again next time.
func TestLeaseKeeperLetsAnExpendableLeaseGoWhenLate(t *testing.T) {
	ttl := 2 * time.Second
	ka := make(chan *clientv3.LeaseKeepAliveResponse) // the client's renewals never come
	var renewals, asked atomic.Int32
	renew := func(context.Context) (time.Duration, error) {
		renewals.Add(1)
		return ttl, nil
	}
	k := keeper(ttl, stream(ka), renew)
	k.Expendable = func() bool { return asked.Add(1) > 1 } // lent at first, idle after
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := k.Hold(ctx, time.Now()); !errors.Is(err, ErrLetGo) {
		t.Fatalf("Hold = %v, want ErrLetGo", err)
	}
	if n := renewals.Load(); n != 1 {
		t.Errorf("%d direct renewals, want 1 (while lent) and none once idle", n)
	}
}

// Only an idle lease is retired, and a retired one is never lent again.
func TestLeasePoolRetiresOnlyIdleLeases(t *testing.T) {
	p := &LeasePool{ctx: t.Context(), free: []clientv3.LeaseID{1, 2}, lent: map[clientv3.LeaseID]loan{3: {"r", time.Now().Add(time.Minute)}}}
	if p.retireIfIdle(3) {
		t.Error("retired a lent lease")
	}
	if !p.retireIfIdle(1) {
		t.Error("an idle lease was not retired")
	}
	id, err := p.Lend(t.Context(), "next", time.Now().Add(time.Minute))
	if err != nil || id != 2 {
		t.Fatalf("Lend = %x, %v; want the idle lease 2, not the retired 1", id, err)
	}
	if p.retireIfIdle(2) {
		t.Error("retired lease 2 after lending it")
	}
	if lent, idle := p.Size(); lent != 2 || idle != 0 {
		t.Errorf("pool size = %d lent, %d idle; want 2, 0", lent, idle)
	}
}
