package store_test

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/lockstep-dev/lockstep/shared/contract/domain"
	"github.com/lockstep-dev/lockstep/shared/plumbing/auth"
	"github.com/lockstep-dev/lockstep/shared/plumbing/store"
	"github.com/lockstep-dev/lockstep/shared/plumbing/testenv"
)

// Every reservation in flight has a lease of its own; one given back is
// lent again rather than a new one granted.
func TestLeasePoolLendsEachReservationItsOwnLease(t *testing.T) {
	env := testenv.Start(t)
	ctx := t.Context()
	pool := store.NewLeasePool(ctx, env.Etcd, 10*time.Second, slog.New(slog.DiscardHandler))
	deadline := time.Now().Add(time.Minute)
	seen := map[clientv3.LeaseID]bool{}
	var ids []clientv3.LeaseID
	for i := range 3 {
		id, err := pool.Lend(ctx, fmt.Sprint("r", i), deadline)
		if err != nil {
			t.Fatal(err)
		}
		if seen[id] {
			t.Fatalf("lease %x lent twice while in use", id)
		}
		seen[id] = true
		ids = append(ids, id)
	}
	pool.Return(ids[1], "r1")
	again, err := pool.Lend(ctx, "r3", deadline)
	if err != nil {
		t.Fatal(err)
	}
	if again != ids[1] {
		t.Errorf("lent %x after %x came back, want the idle one", again, ids[1])
	}
	if lent, idle := pool.Size(); lent != 3 || idle != 0 {
		t.Errorf("pool size = %d lent, %d idle; want 3, 0", lent, idle)
	}
	// A lease the pool never lent is not taken in.
	pool.Return(env.Lease(t, time.Minute), "r0")
	if lent, idle := pool.Size(); lent != 3 || idle != 0 {
		t.Errorf("after returning a stranger: %d lent, %d idle; want 3, 0", lent, idle)
	}
}

// A gang gives its lease back at its launch barrier and again when it is
// released; by then the lease is lent to another reservation, whose keys
// are on it: the second return must leave that loan alone.
func TestLeasePoolIgnoresAReturnByAFormerBorrower(t *testing.T) {
	env := testenv.Start(t)
	ctx := t.Context()
	pool := store.NewLeasePool(ctx, env.Etcd, 10*time.Second, slog.New(slog.DiscardHandler))
	deadline := time.Now().Add(time.Minute)
	first, err := pool.Lend(ctx, "job-1#1", deadline)
	if err != nil {
		t.Fatal(err)
	}
	pool.Return(first, "job-1#1") // the launch barrier
	second, err := pool.Lend(ctx, "job-2#1", deadline)
	if err != nil {
		t.Fatal(err)
	}
	if second != first {
		t.Fatalf("lent %x, want the idle %x", second, first)
	}
	pool.Return(first, "job-1#1") // job-1's release
	if lent, idle := pool.Size(); lent != 1 || idle != 0 {
		t.Fatalf("after job-1 returned job-2's lease: %d lent, %d idle; want 1, 0", lent, idle)
	}
	if other, err := pool.Lend(ctx, "job-3#1", deadline); err != nil || other == first {
		t.Errorf("job-3 was lent %x (%v), job-2's lease", other, err)
	}
}

// A lease whose reservation is past its deadline (launched or released by
// another replica) comes back by itself.
func TestLeasePoolReclaimsLeasesPastTheirDeadline(t *testing.T) {
	env := testenv.Start(t)
	ctx := t.Context()
	pool := store.NewLeasePool(ctx, env.Etcd, 10*time.Second, slog.New(slog.DiscardHandler))
	old, err := pool.Lend(ctx, "old", time.Now().Add(-time.Second))
	if err != nil {
		t.Fatal(err)
	}
	var next clientv3.LeaseID
	// Reclaiming runs at most once a second.
	for end := time.Now().Add(5 * time.Second); next != old && time.Now().Before(end); {
		if next != 0 {
			pool.Return(next, "next")
			time.Sleep(200 * time.Millisecond)
		}
		if next, err = pool.Lend(ctx, "next", time.Now().Add(time.Minute)); err != nil {
			t.Fatal(err)
		}
	}
	if next != old {
		t.Fatalf("lease %x, lent past its deadline, was never lent again", old)
	}
}

// The pool keeps its leases alive past their TTL, lent or idle (an idle
// one until a renewal of it is late: it is then let go, and says so), and
// leaves them all to expire when its context ends (a replica's death).
func TestLeasePoolLeasesLiveWithThePool(t *testing.T) {
	env := testenv.Start(t)
	ctx, stop := context.WithCancel(t.Context())
	var log testenv.LockedBuffer
	// A renewal is late after LateAfter(ttl): with 4 s leases, 2.3 s after
	// the last, twice the client's cadence (2 s leases left a loaded
	// machine, the race run beside other packages, 0.5 s).
	const ttl = 4 * time.Second
	pool := store.NewLeasePool(ctx, env.Etcd, ttl, slog.New(slog.NewTextHandler(&log, &slog.HandlerOptions{Level: slog.LevelDebug})))
	lent, err := pool.Lend(ctx, "lent", time.Now().Add(time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	idle, err := pool.Lend(ctx, "idle", time.Now().Add(time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	pool.Return(idle, "idle")
	time.Sleep(ttl * 3 / 2) // past the TTL: only renewals keep them
	for _, l := range []struct {
		name string
		id   clientv3.LeaseID
	}{{"lent", lent}, {"idle", idle}} {
		resp, err := env.Etcd.TimeToLive(t.Context(), l.id)
		if err != nil {
			t.Fatal(err)
		}
		letGo := strings.Contains(log.String(), fmt.Sprintf(`msg="idle reservation lease let go when its renewal was late" lease=%d`, int64(l.id)))
		switch {
		case resp.TTL > 0:
		case l.name == "idle" && letGo:
			t.Logf("the idle lease's renewal was late here, so it was let go")
		default:
			t.Fatalf("%s lease %x expired while its pool lived; the pool's log:\n%s", l.name, l.id, log.String())
		}
	}
	stop()
	deadline := time.Now().Add(30 * time.Second)
	for _, id := range []clientv3.LeaseID{lent, idle} {
		for {
			resp, err := env.Etcd.TimeToLive(t.Context(), id)
			if err != nil {
				t.Fatal(err)
			}
			if resp.TTL <= 0 {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("lease %x outlived its pool by 30 s", id)
			}
			time.Sleep(200 * time.Millisecond)
		}
	}
	if _, err := pool.Lend(t.Context(), "late", time.Now().Add(time.Minute)); err == nil {
		t.Error("a closed pool lent a lease")
	}
}

// Leases beyond the idle ones a pool keeps are revoked as they come back:
// that is the pool's own doing, not a lost lease, and is not logged as one.
func TestLeasePoolRevokesSurplusLeasesQuietly(t *testing.T) {
	env := testenv.Start(t)
	ctx := t.Context()
	var log testenv.LockedBuffer
	pool := store.NewLeasePool(ctx, env.Etcd, 10*time.Second, slog.New(slog.NewTextHandler(&log, nil)))
	const n = 260 // more than the pool keeps idle
	ids := make([]clientv3.LeaseID, n)
	for i := range ids {
		id, err := pool.Lend(ctx, fmt.Sprint("r", i), time.Now().Add(time.Minute))
		if err != nil {
			t.Fatal(err)
		}
		ids[i] = id
	}
	for i, id := range ids {
		pool.Return(id, fmt.Sprint("r", i))
	}
	last := ids[n-1]
	testenv.Eventually(t, 10*time.Second, func() error {
		resp, err := env.Etcd.TimeToLive(ctx, last)
		if err != nil {
			return err
		}
		if resp.TTL > 0 {
			return fmt.Errorf("lease %x, returned past the idle limit, still lives", last)
		}
		return nil
	})
	time.Sleep(time.Second) // a keeper that took the revocation for a loss would log by now
	if strings.Contains(log.String(), "lease lost") {
		t.Errorf("the pool's own revocations were logged as lost leases:\n%s", log.String())
	}
	if lent, idle := pool.Size(); lent != 0 || idle >= n {
		t.Errorf("pool size = %d lent, %d idle; want none lent and fewer than %d idle", lent, idle, n)
	}
}

// BenchmarkReserveWithAuth measures reservations, as the gang identity on
// an etcd with auth on, that stay reserved (a backlog not yet launched),
// each under the one lease they share ("shared", a replica's single
// session before) or a lease of its own from a LeasePool ("pool"). etcd
// checks every key already on a lease for each put under it, so "shared"
// slows down as its backlog grows and "pool" does not: compare ns/op at a
// given -benchtime, e.g.
//
//	go test -run '^$' -bench ReserveWithAuth -benchtime 400x ./shared/plumbing/store/
func BenchmarkReserveWithAuth(b *testing.B) {
	env := testenv.Start(b, testenv.WithAuth())
	creds := env.Auth.Credentials(b, auth.Identity{Name: "gang", Role: auth.RoleGang})
	cli, err := store.Connect(b.Context(), env.EtcdEndpoint, store.WithCredentials(creds))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = cli.Close() })
	for _, mode := range []string{"shared", "pool"} {
		b.Run("lease="+mode, func(b *testing.B) {
			prefix := fmt.Sprintf("%s-%d-", mode, b.N)
			names := make([]string, b.N)
			for i := range names {
				names[i] = fmt.Sprintf("%s%05d", prefix, i)
			}
			revs := env.RegisterNodes(b, env.Lease(b, 10*time.Minute), 8, names...)
			pool := store.NewLeasePool(b.Context(), cli, time.Minute, slog.New(slog.DiscardHandler))
			shared, err := pool.Lend(b.Context(), "shared", time.Now().Add(time.Hour))
			if err != nil {
				b.Fatal(err)
			}
			b.ResetTimer()
			for i := range b.N {
				lease := shared
				if mode == "pool" {
					if lease, err = pool.Lend(b.Context(), fmt.Sprint("r", i), time.Now().Add(time.Hour)); err != nil {
						b.Fatal(err)
					}
				}
				p := testenv.GangPlacement(names[i:i+1], 8, 29500+i)
				a := domain.Allocation{JobID: fmt.Sprintf("%sjob-%d", prefix, i), Attempt: 1, State: domain.AllocReserved, Placement: p}
				ok, _, err := store.Reserve(b.Context(), cli, a, testenv.GangAssignments(a.JobID, p, []string{"true"}), revs, lease)
				if err != nil || !ok {
					b.Fatalf("reservation %d: ok=%v err=%v", i, ok, err)
				}
			}
		})
	}
}
