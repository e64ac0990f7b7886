package bus

import (
	"context"

	"github.com/cockroachdb/errors"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/lockstep-dev/lockstep/shared/contract/subjects"
)

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

// ServerReaders, as StreamOptions.Readers, leaves the cap to the NATS
// server: its default_max_consumers, or the account's max_consumers.
const ServerReaders = -1

// maxConsumers is the MaxConsumers of the streams people read.
func (o StreamOptions) maxConsumers() int {
	switch {
	case o.Readers == 0:
		return ReadersPerStream
	case o.Readers < 0:
		return ServerReaders
	}
	return o.Readers
}

// readersWithin lowers a cap to the account's own, where that is lower:
// the server refuses a stream that asks for more consumers than its
// account may have, and no service would start.
func (b *Bus) readersWithin(ctx context.Context, want int) int {
	if want < 0 {
		return want
	}
	info, err := b.JS.AccountInfo(ctx)
	if err != nil {
		return want // creating the streams will say what is wrong
	}
	if limit := info.Limits.MaxConsumers; limit > 0 && limit < want {
		return limit
	}
	return want
}

// readersHint explains a stream refused for asking more consumers than
// the account allows (the account's limit could not be read beforehand).
func readersHint(err error, o StreamOptions) error {
	if !errors.Is(err, jetstream.ErrMaximumConsumersLimit) {
		return err
	}
	return errors.WithHintf(err, "the NATS account takes fewer consumers per stream than --readers-per-stream (%d): "+
		"give the services the account's max_consumers, or -1 to leave the cap to the server", o.maxConsumers())
}

// ensureJobsBucket creates the jobs bucket, or updates it where it differs
// from jobsBucket, and sets its stream's consumer cap. A bucket's
// configuration has no such cap, and creating or updating the bucket
// resets it to the server's: so a bucket already as wanted is not updated
// again at every service's start, which would drop the cap, for a moment,
// under readers already open.
func (b *Bus) ensureJobsBucket(ctx context.Context, o StreamOptions) error {
	want := jobsBucket(o)
	s, err := b.JS.Stream(ctx, subjects.StreamKVJobs)
	switch {
	case err == nil && bucketAsWanted(s.CachedInfo().Config, want):
		return b.capReaders(ctx, s.CachedInfo().Config, o.maxConsumers())
	case err != nil && !errors.Is(err, jetstream.ErrStreamNotFound):
		return errors.Wrapf(err, "read kv bucket %s", subjects.BucketJobs)
	}
	if _, err := b.JS.CreateOrUpdateKeyValue(ctx, want); err != nil {
		return errors.Wrapf(err, "ensure kv bucket %s", subjects.BucketJobs)
	}
	if s, err = b.JS.Stream(ctx, subjects.StreamKVJobs); err != nil {
		return errors.Wrapf(err, "read kv bucket %s", subjects.BucketJobs)
	}
	return b.capReaders(ctx, s.CachedInfo().Config, o.maxConsumers())
}

// bucketAsWanted compares what jobsBucket sets with a bucket's stream.
func bucketAsWanted(have jetstream.StreamConfig, want jetstream.KeyValueConfig) bool {
	return have.Description == want.Description && have.MaxMsgsPerSubject == int64(want.History) &&
		have.Storage == want.Storage && have.Replicas == want.Replicas
}

// capReaders sets the consumer cap of the stream cfg describes.
func (b *Bus) capReaders(ctx context.Context, cfg jetstream.StreamConfig, readers int) error {
	if cfg.MaxConsumers == readers {
		return nil
	}
	cfg.MaxConsumers = readers
	_, err := b.JS.UpdateStream(ctx, cfg)
	return errors.Wrapf(err, "set the consumer cap of stream %s", cfg.Name)
}
