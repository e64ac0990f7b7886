package bus_test

import (
	"context"
	"fmt"
	"maps"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/errors"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/lockstep-dev/lockstep/shared/contract/events"
	"github.com/lockstep-dev/lockstep/shared/contract/subjects"
	"github.com/lockstep-dev/lockstep/shared/plumbing/bus"
	"github.com/lockstep-dev/lockstep/shared/plumbing/testenv"
)

// readerCap is the test stream's consumer cap, standing in for the
// server's default one (1,000 per stream) at a size a test can reach.
const readerCap = 3

// cappedStream makes a stream that takes at most readerCap consumers,
// holding three messages on reads.one.
func cappedStream(t *testing.T, h *harness) jetstream.Stream {
	t.Helper()
	ctx := context.Background()
	s, err := h.b.JS.CreateStream(ctx, jetstream.StreamConfig{
		Name: "READS", Subjects: []string{"reads.>"}, MaxConsumers: readerCap, Storage: jetstream.MemoryStorage,
	})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		if _, err := h.b.JS.Publish(ctx, "reads.one", fmt.Appendf(nil, "m%d", i)); err != nil {
			t.Fatal(err)
		}
	}
	return s
}

func consumersOn(t *testing.T, s jetstream.Stream) int {
	t.Helper()
	info, err := s.Info(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return info.State.Consumers
}

// fetchAll reads what r holds in batches of two, the way the client reads
// a job's events, and returns how many messages it got.
func fetchAll(t *testing.T, r *bus.Reader) int {
	t.Helper()
	n := 0
	for {
		batch, err := r.FetchNoWait(2)
		if err != nil {
			t.Fatal(err)
		}
		got := 0
		for range batch.Messages() {
			got++
		}
		if got == 0 {
			return n
		}
		n += got
	}
}

// Reads that close their readers leave no consumer behind, so any number
// of them fit under the server's cap on consumers per stream; a few left
// open fill it.
func TestReadersDoNotPileUpConsumers(t *testing.T) {
	h := newHarness(t)
	ctx := context.Background()
	s := cappedStream(t, h)

	for i := range 4 * readerCap {
		r, err := h.b.Snapshot(ctx, "READS", jetstream.ConsumerConfig{FilterSubject: "reads.one"})
		if err != nil {
			t.Fatalf("snapshot read %d: %v", i, err)
		}
		if n := fetchAll(t, r); n != 3 {
			t.Fatalf("snapshot read %d got %d messages, want 3", i, n)
		}
		r.Close()

		f, err := h.b.Follow(ctx, "READS", jetstream.OrderedConsumerConfig{FilterSubjects: []string{"reads.one"}})
		if err != nil {
			t.Fatalf("follow %d: %v", i, err)
		}
		it, err := f.Messages()
		if err != nil {
			t.Fatal(err)
		}
		if _, err := it.Next(); err != nil {
			t.Fatal(err)
		}
		it.Stop()
		f.Close()
	}
	testenv.Eventually(t, 5*time.Second, func() error {
		if n := consumersOn(t, s); n != 0 {
			return fmt.Errorf("%d consumers left on the stream after every reader closed", n)
		}
		return nil
	})

	// The control: readers not closed keep their consumers, and the cap
	// refuses the next one.
	for range readerCap {
		if _, err := h.b.Snapshot(ctx, "READS", jetstream.ConsumerConfig{FilterSubject: "reads.one"}); err != nil {
			t.Fatal(err)
		}
	}
	_, err := h.b.Snapshot(ctx, "READS", jetstream.ConsumerConfig{FilterSubject: "reads.one"})
	if err == nil {
		t.Fatalf("a reader past the cap of %d open ones was let in: the cap this test relies on is not there", readerCap)
	}
	if hint := errors.FlattenHints(err); !strings.Contains(hint, "--readers-per-stream") || !strings.Contains(hint, "default_max_consumers") {
		t.Errorf("refused past the cap with %v, hint %q: want the hint naming the services' and the server's limits", err, hint)
	}
}

// What people could leave on the streams they read to fill the server's
// cap on consumers (durables, consumers kept idle for a day) is removed;
// what readers, the services' watches of the job records and the history
// stream's sourcing of events use is left alone, and keeps working.
func TestRemoveSquattersLeavesReadersAndServicesAlone(t *testing.T) {
	h := newHarness(t)
	ctx := context.Background()
	if err := h.b.EnsureStreams(ctx, bus.StreamOptions{}); err != nil {
		t.Fatal(err)
	}
	kv, err := h.b.JS.KeyValue(ctx, subjects.BucketJobs)
	if err != nil {
		t.Fatal(err)
	}
	watch, err := kv.WatchAll(ctx, jetstream.UpdatesOnly())
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = watch.Stop() }()
	// A reader asking to be kept a day gets the readers' bound instead.
	follow, err := h.b.Follow(ctx, subjects.StreamEvents, jetstream.OrderedConsumerConfig{
		FilterSubjects: []string{subjects.JobEventsAll}, InactiveThreshold: 24 * time.Hour,
	})
	if err != nil {
		t.Fatal(err)
	}
	defer follow.Close()

	squat := map[string]jetstream.ConsumerConfig{
		subjects.StreamKVJobs:  {Durable: "squat-kv", FilterSubject: subjects.KVJobsAll},
		subjects.StreamEvents:  {Durable: "squat-events", FilterSubject: subjects.JobEventsAll},
		subjects.StreamLogs:    {Name: "squat-logs", FilterSubject: subjects.LogsAll, InactiveThreshold: 24 * time.Hour},
		subjects.StreamHistory: {Name: "idle-history", FilterSubject: subjects.JobEventsAll, InactiveThreshold: 5 * time.Minute},
	}
	for stream, cfg := range squat {
		if _, err := h.b.JS.CreateConsumer(ctx, stream, cfg); err != nil {
			t.Fatalf("consumer on %s: %v", stream, err)
		}
	}
	removed, err := h.b.RemoveSquatters(ctx, subjects.ReadableStreams())
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]bool{}
	for _, sq := range removed {
		got[sq.Stream+"/"+sq.Consumer] = true
	}
	want := map[string]bool{
		subjects.StreamKVJobs + "/squat-kv": true, subjects.StreamEvents + "/squat-events": true, subjects.StreamLogs + "/squat-logs": true,
	}
	if !maps.Equal(got, want) {
		t.Fatalf("removed %v, want the durables and the day-long idle one only: %v", removed, want)
	}

	// The watch, the reader and the history's sourcing still work.
	if _, err := kv.Put(ctx, "after", []byte("{}")); err != nil {
		t.Fatal(err)
	}
	select {
	case e := <-watch.Updates():
		if e == nil || e.Key() != "after" {
			t.Fatalf("watch got %v, want the put of after", e)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the job records' watch went quiet after the sweep")
	}
	if err := h.b.PublishEvent(ctx, events.Event{Type: events.Admitted, JobID: "after", Time: time.Now().UTC(), Attempt: 1}); err != nil {
		t.Fatal(err)
	}
	if _, err := follow.Next(jetstream.FetchMaxWait(5 * time.Second)); err != nil {
		t.Fatalf("the reader lost its consumer: %v", err)
	}
	hist, err := h.b.JS.Stream(ctx, subjects.StreamHistory)
	if err != nil {
		t.Fatal(err)
	}
	waitMsgs(t, hist, 1)
}

// The streams people read take more readers at once than the server's
// default cap (1,000 consumers per stream): a sweep of waiting submits
// must not leave the services unable to open their watches. A service's
// start with the bucket already as wanted does not update the bucket,
// which would drop its stream's cap under the readers already open.
func TestReadableStreamsTakeMoreReadersThanTheServersDefault(t *testing.T) {
	h := newHarness(t)
	ctx := context.Background()
	for _, name := range subjects.ReadableStreams() {
		s, err := h.b.JS.Stream(ctx, name)
		if err != nil {
			t.Fatal(err)
		}
		if got := s.CachedInfo().Config.MaxConsumers; got != bus.ReadersPerStream {
			t.Errorf("stream %s takes %d consumers, want %d", name, got, bus.ReadersPerStream)
		}
	}
	read := func(i int) {
		t.Helper()
		_, err := h.b.JS.CreateConsumer(ctx, subjects.StreamKVJobs, jetstream.ConsumerConfig{
			AckPolicy: jetstream.AckNonePolicy, MemoryStorage: true, InactiveThreshold: time.Minute,
		})
		if err != nil {
			t.Fatalf("reader %d of the job records: %v", i, err)
		}
	}
	const serversDefault = 1_000
	for i := range serversDefault + 1 {
		read(i + 1)
	}

	updated, err := h.b.NC.SubscribeSync("$JS.EVENT.ADVISORY.STREAM.UPDATED." + subjects.StreamKVJobs)
	if err != nil {
		t.Fatal(err)
	}
	if err := h.b.EnsureStreams(ctx, bus.StreamOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := h.b.NC.Flush(); err != nil {
		t.Fatal(err)
	}
	if msg, err := updated.NextMsg(200 * time.Millisecond); err == nil {
		t.Errorf("a second start updated the jobs bucket, as wanted already: %s", msg.Data)
	}
	read(serversDefault + 2)

	// A bucket that differs (here, its stream's cap lowered by hand) is
	// put right.
	s, err := h.b.JS.Stream(ctx, subjects.StreamKVJobs)
	if err != nil {
		t.Fatal(err)
	}
	cfg := s.CachedInfo().Config
	cfg.MaxConsumers = -1
	if _, err := h.b.JS.UpdateStream(ctx, cfg); err != nil {
		t.Fatal(err)
	}
	if err := h.b.EnsureStreams(ctx, bus.StreamOptions{}); err != nil {
		t.Fatal(err)
	}
	read(serversDefault + 3)
}

// An account that takes fewer consumers per stream than the readers' cap
// (an operator's limit) still gets its streams: the cap is lowered to the
// account's, where the server would refuse every stream and no service
// would start.
func TestStreamsFitAnAccountsConsumerLimit(t *testing.T) {
	const limit = 50
	env := testenv.Start(t, testenv.WithAccountMaxConsumers(limit)) // its start ensures the streams
	ctx := context.Background()
	b, err := bus.Connect(ctx, env.NATSURL, "limit-test")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(b.Close)
	if err := b.EnsureStreams(ctx, bus.StreamOptions{}); err != nil {
		t.Fatalf("streams on an account limited to %d consumers a stream: %v", limit, err)
	}
	for _, name := range subjects.ReadableStreams() {
		s, err := b.JS.Stream(ctx, name)
		if err != nil {
			t.Fatal(err)
		}
		if got := s.CachedInfo().Config.MaxConsumers; got != limit {
			t.Errorf("stream %s takes %d consumers, want the account's %d", name, got, limit)
		}
	}
	// The control: the server does refuse a stream asking for more.
	_, err = b.JS.CreateStream(ctx, jetstream.StreamConfig{Name: "OVER_LIMIT", Subjects: []string{"over.limit"}, MaxConsumers: bus.ReadersPerStream})
	if err == nil {
		t.Errorf("a stream asking %d consumers was created on an account limited to %d", bus.ReadersPerStream, limit)
	}
}
