package bus

import (
	"context"
	"slices"
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
	// ReadersPerStream; ServerReaders: the server's own).
	Readers int
	// EventsMaxBytes and HistoryMaxBytes cap the events and history
	// streams on disk, the oldest messages going first (0: no cap; their
	// MaxAge still holds). JetStream reserves a stream's cap against the
	// server's storage when it creates the stream, so a cap the server
	// cannot hold keeps the services from starting, with its error.
	EventsMaxBytes, HistoryMaxBytes int64
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
			MaxBytes:          maxBytes(o.EventsMaxBytes),
			Discard:           jetstream.DiscardOld,
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
			Name:        subjects.StreamLogs,
			Description: "Lockstep rank stdout and stderr",
			Subjects:    []string{subjects.LogsAll},
			Retention:   jetstream.LimitsPolicy,
			MaxAge:      72 * time.Hour,
			MaxBytes:    1 << 30,
			Discard:     jetstream.DiscardOld,
		},
		historyStream(o),
	}
	// Every stream outlives a server restart and is replicated alike; the
	// ones people read take their readers (the jobs bucket's is set apart:
	// ensureJobsBucket).
	for i := range streams {
		streams[i].Storage, streams[i].Replicas = jetstream.FileStorage, max(o.Replicas, 1)
		if slices.Contains(subjects.ReadableStreams(), streams[i].Name) {
			streams[i].MaxConsumers = o.maxConsumers()
		}
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
		MaxBytes:          maxBytes(o.HistoryMaxBytes),
		Discard:           jetstream.DiscardOld,
		Sources: []*jetstream.StreamSource{{
			Name: subjects.StreamEvents, SubjectTransforms: transforms,
		}},
	}
}

// maxBytes is a stream's MaxBytes for a cap (0: none, which JetStream
// spells -1).
func maxBytes(limit int64) int64 {
	if limit <= 0 {
		return -1
	}
	return limit
}

// EnsureStreams creates or updates every stream and the jobs KV bucket.
// Every service calls it at start, so any one of them can bootstrap an
// empty NATS.
func (b *Bus) EnsureStreams(ctx context.Context, o StreamOptions) error {
	ctx, cancel := withDefaultTimeout(ctx, 30*time.Second)
	defer cancel()
	o.Readers = b.readersWithin(ctx, o.maxConsumers())
	for _, cfg := range Streams(o) {
		if err := b.ensureStream(ctx, cfg); err != nil {
			return readersHint(errors.Wrapf(err, "ensure stream %s", cfg.Name), o)
		}
	}
	return readersHint(b.ensureJobsBucket(ctx, o), o)
}

// ensureStream creates the stream, or updates it where it differs from
// want. One already as wanted is left alone: every service declares every
// stream at each start, and on a NATS cluster each update is a proposal to
// the meta leader, so a fleet's restart would send one per stream and
// process for nothing.
func (b *Bus) ensureStream(ctx context.Context, want jetstream.StreamConfig) error {
	s, err := b.JS.Stream(ctx, want.Name)
	switch {
	case err == nil && streamAsWanted(s.CachedInfo().Config, want):
		return nil
	case err != nil && !errors.Is(err, jetstream.ErrStreamNotFound):
		return errors.Wrap(err, "read its configuration")
	}
	_, err = b.JS.CreateOrUpdateStream(ctx, want)
	return err
}

// streamAsWanted compares what Streams sets with a stream's configuration
// as the server holds it. A limit Streams leaves at zero is the server's
// to choose (it stores its default in its place), so it is not compared;
// the settings whose zero means something (limits retention, discarding
// the oldest, file storage) are.
func streamAsWanted(have, want jetstream.StreamConfig) bool {
	same := have.Description == want.Description && slices.Equal(have.Subjects, want.Subjects) &&
		have.Retention == want.Retention && have.Discard == want.Discard &&
		have.Storage == want.Storage && have.Replicas == want.Replicas
	limits := [][2]int64{
		{int64(want.Duplicates), int64(have.Duplicates)},
		{int64(want.MaxAge), int64(have.MaxAge)},
		{want.MaxMsgsPerSubject, have.MaxMsgsPerSubject},
		{want.MaxBytes, have.MaxBytes},
		{int64(want.MaxMsgSize), int64(have.MaxMsgSize)},
		{int64(want.MaxConsumers), int64(have.MaxConsumers)},
	}
	for _, l := range limits {
		same = same && (l[0] == 0 || l[0] == l[1])
	}
	return same && sourcesAsWanted(have.Sources, want.Sources)
}

// sourcesAsWanted compares the streams sourced and the subjects taken
// from each.
func sourcesAsWanted(have, want []*jetstream.StreamSource) bool {
	return slices.EqualFunc(have, want, func(h, w *jetstream.StreamSource) bool {
		return h != nil && w != nil && h.Name == w.Name && h.FilterSubject == w.FilterSubject &&
			slices.Equal(h.SubjectTransforms, w.SubjectTransforms)
	})
}

// jobsBucket is the jobs KV bucket's configuration.
func jobsBucket(o StreamOptions) jetstream.KeyValueConfig {
	return jetstream.KeyValueConfig{
		Bucket:      subjects.BucketJobs,
		Description: "Lockstep job records (the durable queue)",
		History:     1,
		Storage:     jetstream.FileStorage,
		Replicas:    max(o.Replicas, 1),
	}
}
