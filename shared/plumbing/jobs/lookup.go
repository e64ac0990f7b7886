package jobs

import (
	"context"
	"strconv"

	"github.com/cockroachdb/errors"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/lockstep-dev/lockstep/shared/contract/domain"
	"github.com/lockstep-dev/lockstep/shared/contract/errs"
	"github.com/lockstep-dev/lockstep/shared/contract/jobspec"
	"github.com/lockstep-dev/lockstep/shared/contract/subjects"
)

// Lookup reads one job record with a single direct get, as Store.Get does,
// but without binding the bucket first: binding asks the server for the
// stream's info, a round trip of its own. It is for a process that reads
// one record once (submit confirming admission's verdict), where that
// round trip would double the read.
func Lookup(ctx context.Context, nc *nats.Conn, id string) (domain.Job, uint64, error) {
	if !jobspec.ValidID(id) {
		return domain.Job{}, 0, errs.MarkPermanent(errors.Newf("job %q: not a valid job ID", id))
	}
	msg, err := nc.RequestWithContext(ctx, subjects.DirectGetJob(id), nil)
	if err != nil {
		return domain.Job{}, 0, errors.Wrapf(err, "get job %s", errors.Safe(id))
	}
	seq, deleted, err := directGetAnswer(msg, subjects.KVJob(id))
	switch {
	case errors.Is(err, jetstream.ErrMsgNotFound) || deleted:
		return domain.Job{}, 0, errors.Mark(errors.Newf("job %s not found", errors.Safe(id)), errs.ErrNotFound)
	case err != nil:
		return domain.Job{}, 0, errors.Wrapf(err, "get job %s", errors.Safe(id))
	}
	j, err := decode(id, msg.Data)
	if err != nil {
		return domain.Job{}, 0, err
	}
	return j, seq, nil
}

// directGetAnswer checks a direct get's answer as the JetStream client does
// (its status, the headers naming the stream, subject and sequence) and
// returns the record's revision, or whether the key was deleted since. An
// answer about another stream or key is refused: the reply subject is an
// inbox, which another client allowed to publish there could answer.
func directGetAnswer(msg *nats.Msg, key string) (seq uint64, deleted bool, err error) {
	if len(msg.Data) == 0 {
		switch status := msg.Header.Get("Status"); status {
		case "":
		case "404":
			return 0, false, jetstream.ErrMsgNotFound
		default:
			return 0, false, errors.Newf("direct get answered %s %s", status, msg.Header.Get("Description"))
		}
	}
	if stream := msg.Header.Get(jetstream.StreamHeader); stream != subjects.StreamKVJobs {
		return 0, false, errors.Newf("direct get answered for stream %q", stream)
	}
	if subj := msg.Header.Get(jetstream.SubjectHeader); subj != key {
		return 0, false, errors.Newf("direct get answered for subject %q", subj)
	}
	seq, err = strconv.ParseUint(msg.Header.Get(jetstream.SequenceHeader), 10, 64)
	if err != nil {
		return 0, false, errors.Wrap(err, "direct get's sequence")
	}
	// A deleted or purged key keeps a marker as its last message.
	switch msg.Header.Get("KV-Operation") {
	case "DEL", "PURGE":
		return seq, true, nil
	}
	if msg.Header.Get(jetstream.MarkerReasonHeader) != "" {
		return seq, true, nil
	}
	return seq, false, nil
}
