package bus

import (
	"context"
	"time"

	"github.com/cockroachdb/errors"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/lockstep-dev/lockstep/shared/contract/subjects"
)

// StreamOptions sizes the streams; Replicas is 1 on a single server and 3
// on a NATS cluster.
type StreamOptions struct {
	Replicas int
	// HistoryAge is how long the accounting history keeps a job's events
	// (0: DefaultHistoryAge).
	HistoryAge time.Duration
	// Readers is the consumer cap of each stream people read (0:
	// ReadersPerStream).
	Readers int
}

func (o StreamOptions) readers() int {
	if o.Readers <= 0 {
		return ReadersPerStream
	}
	return o.Readers
}

// DefaultHistoryAge is how long `lockstep history` and `usage` can look
// back by default: a quarter, well past the events' and job records' week.
const DefaultHistoryAge = 90 * 24 * time.Hour

// WorkQueueMaxBytes caps each work-queue stream (requests, work between
// services). Their messages are deleted once handled, so a few KiB each
// make 256 MiB a backlog of a hundred thousand; the cap is for what
// nobody consumes (see ForeignSubjects). A full stream refuses new
// messages rather than drop accepted ones: the publisher gets the error.
// JetStream reserves a stream's cap against the server's storage when
// the stream is created (75 % of the free disk by default), so the caps
// are kept small: a server short of room refuses the stream
// ("insufficient storage resources") and the services do not start.
const WorkQueueMaxBytes = 256 << 20

// EventsPerSubject bounds the events kept under one subject (one job's
// events of one type, one node's of one type), the oldest going first. A
// user may pull their own events with the reply naming one of their own
// event subjects, and the stream stores each delivery again there: every
// pull doubles them, and without a bound a few dozen pulls fill the disk.
// A job requeued more often than this keeps only its latest requeues'
// events of each type.
const EventsPerSubject = 512

// ReadersPerStream is the consumer cap of the streams people read: the
// events, the logs, the history and the job records. NATS caps a stream at
// 1,000 consumers unless the stream sets its own cap (the server's
// default_max_consumers), and that one cap is shared by readers and
// services alike. A pipeline running a thousand `submit --wait` or
// `sbatch --wait` at once would hold all of it, and no service could open
// its watch of the job records again until they ended. Readers delete
// their consumers when done, and the placement leader removes those left
// behind (RemoveSquatters), so the cap bounds what is open at one time.
// Each reader costs the NATS server about 50 KiB (28 KiB of heap and three
// goroutines, measured on an ephemeral consumer), so a full stream holds
// about 500 MiB.
const ReadersPerStream = 10_000

// Streams lists the stream configurations Lockstep needs.
func Streams(o StreamOptions) []jetstream.StreamConfig {
	streams := []jetstream.StreamConfig{
		{
			Name:        subjects.StreamJobs,
			Description: "Lockstep requests: submissions, cancels, drains, node drains",
			Subjects:    []string{subjects.JobsAll, subjects.NodesAll},
			Retention:   jetstream.WorkQueuePolicy,
			Duplicates:  10 * time.Minute,
			MaxMsgSize:  1 << 20,
			MaxBytes:    WorkQueueMaxBytes,
			Discard:     jetstream.DiscardNew,
		},
		{
			Name:              subjects.StreamEvents,
			Description:       "Lockstep job and node events",
			Subjects:          []string{subjects.EventsAll},
			Retention:         jetstream.LimitsPolicy,
			Duplicates:        10 * time.Minute,
			MaxAge:            7 * 24 * time.Hour,
			MaxMsgsPerSubject: EventsPerSubject,
			MaxConsumers:      o.readers(),
		},
		{
			Name:        subjects.StreamWork,
			Description: "Lockstep internal work between services",
			Subjects:    []string{subjects.WorkAll},
			Retention:   jetstream.WorkQueuePolicy,
			Duplicates:  2 * time.Minute,
			MaxBytes:    WorkQueueMaxBytes,
			Discard:     jetstream.DiscardNew,
		},
		{
			Name:         subjects.StreamLogs,
			Description:  "Lockstep rank stdout and stderr",
			Subjects:     []string{subjects.LogsAll},
			Retention:    jetstream.LimitsPolicy,
			MaxAge:       72 * time.Hour,
			MaxBytes:     1 << 30,
			Discard:      jetstream.DiscardOld,
			MaxConsumers: o.readers(),
		},
		historyStream(o),
	}
	// Every stream outlives a server restart and is replicated alike.
	for i := range streams {
		streams[i].Storage, streams[i].Replicas = jetstream.FileStorage, max(o.Replicas, 1)
	}
	return streams
}

// historyStream copies the lifecycle job events from the events stream
// (the server sources them: no service writes a second copy) and keeps
// them for o.HistoryAge. The copies keep their subjects, so the same
// per-owner filter a user may read events with reads their history.
func historyStream(o StreamOptions) jetstream.StreamConfig {
	filters := subjects.HistoryEvents()
	transforms := make([]jetstream.SubjectTransformConfig, len(filters))
	for i, f := range filters {
		transforms[i] = jetstream.SubjectTransformConfig{Source: f} // a filter; the subject is kept
	}
	age := o.HistoryAge
	if age <= 0 {
		age = DefaultHistoryAge
	}
	return jetstream.StreamConfig{
		Name:              subjects.StreamHistory,
		Description:       "Lockstep job lifecycle events kept for accounting",
		Retention:         jetstream.LimitsPolicy,
		MaxAge:            age,
		MaxMsgsPerSubject: EventsPerSubject,
		Discard:           jetstream.DiscardOld,
		MaxConsumers:      o.readers(),
		Sources: []*jetstream.StreamSource{{
			Name: subjects.StreamEvents, SubjectTransforms: transforms,
		}},
	}
}

// EnsureStreams creates or updates every stream and the jobs KV bucket.
// Every service calls it at start, so any one of them can bootstrap an
// empty NATS.
func (b *Bus) EnsureStreams(ctx context.Context, o StreamOptions) error {
	err := b.ensureStreams(ctx, o)
	if errors.Is(err, jetstream.ErrMaximumConsumersLimit) {
		// A stream's cap may not exceed its account's.
		err = errors.WithHintf(err, "the NATS account takes fewer consumers per stream than --readers-per-stream (%d): "+
			"give the services the account's max_consumers", o.readers())
	}
	return err
}

func (b *Bus) ensureStreams(ctx context.Context, o StreamOptions) error {
	ctx, cancel := withDefaultTimeout(ctx, 30*time.Second)
	defer cancel()
	for _, cfg := range Streams(o) {
		if _, err := b.JS.CreateOrUpdateStream(ctx, cfg); err != nil {
			return errors.Wrapf(err, "ensure stream %s", cfg.Name)
		}
	}
	_, err := b.JS.CreateOrUpdateKeyValue(ctx, jetstream.KeyValueConfig{
		Bucket:      subjects.BucketJobs,
		Description: "Lockstep job records (the durable queue)",
		History:     1,
		Storage:     jetstream.FileStorage,
		Replicas:    max(o.Replicas, 1),
	})
	if err != nil {
		return errors.Wrapf(err, "ensure kv bucket %s", subjects.BucketJobs)
	}
	return b.capReaders(ctx, subjects.StreamKVJobs, o.readers())
}

// capReaders sets a stream's consumer cap to readers. The jobs
// bucket needs it set apart: a bucket's configuration has no such field,
// and creating or updating the bucket resets its stream's cap to the
// server's default.
func (b *Bus) capReaders(ctx context.Context, name string, readers int) error {
	s, err := b.JS.Stream(ctx, name)
	if err != nil {
		return errors.Wrapf(err, "read stream %s", name)
	}
	cfg := s.CachedInfo().Config
	if cfg.MaxConsumers == readers {
		return nil
	}
	cfg.MaxConsumers = readers
	_, err = b.JS.UpdateStream(ctx, cfg)
	return errors.Wrapf(err, "set the consumer cap of stream %s", name)
}
