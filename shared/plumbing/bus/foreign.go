package bus

import (
	"context"
	"slices"

	"github.com/cockroachdb/errors"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/lockstep-dev/lockstep/shared/contract/subjects"
)

// A stream stores whatever the server delivers onto one of its subjects,
// under the subject the message had, and JetStream delivers where a
// request's reply subject says, unchecked by any permission. So anyone
// allowed to pull from a stream (users read their events, logs and the job
// records) can have its messages delivered onto another stream's subject:
// the other stream then stores them under the first one's subjects, where
// none of its consumers looks. In a work-queue stream they stay for ever,
// and in any stream they take space that the stream's own limits were
// sized without. Such foreign messages are purged (PurgeForeign); the
// work-queue streams are also capped in bytes, so that a flood between two
// purges fills a bounded share of the disk.

// ForeignSubjects maps each stream that takes messages by subject to the
// subjects of the others: what it may hold only as a redirected delivery.
// The history stream takes its messages from the events stream only (it
// has no subjects) and is left out.
func ForeignSubjects() map[string][]string {
	own := map[string][]string{subjects.StreamKVJobs: {subjects.KVJobsAll}}
	for _, cfg := range Streams(StreamOptions{}) { // subjects do not depend on sizes
		if len(cfg.Subjects) > 0 {
			own[cfg.Name] = cfg.Subjects
		}
	}
	foreign := make(map[string][]string, len(own))
	for name := range own {
		for other, subs := range own {
			if other != name {
				foreign[name] = append(foreign[name], subs...)
			}
		}
		slices.Sort(foreign[name])
	}
	return foreign
}

// Purged names a stream's subject filter under which foreign messages were
// found and purged, and the subject of the last one (which stream they
// came from).
type Purged struct {
	Stream, Filter, Example string
}

// ForeignPurger purges the streams of foreign messages, pass after pass
// (the placement leader's janitor keeps one for its term): what is
// foreign to each stream is worked out once, and each stream is bound on
// its first pass only.
type ForeignPurger struct {
	b       *Bus
	foreign map[string][]string
	names   []string // sorted: passes go in one order
	streams map[string]jetstream.Stream
}

// NewForeignPurger makes a purger over every stream (ForeignSubjects).
func (b *Bus) NewForeignPurger() *ForeignPurger {
	p := &ForeignPurger{b: b, foreign: ForeignSubjects(), streams: map[string]jetstream.Stream{}}
	for name := range p.foreign {
		p.names = append(p.names, name)
	}
	slices.Sort(p.names)
	return p
}

// PurgeForeign is one pass of a new ForeignPurger.
func (b *Bus) PurgeForeign(ctx context.Context) ([]Purged, error) {
	return b.NewForeignPurger().Purge(ctx)
}

// Purge purges every stream of the messages stored under another
// stream's subjects, and says where it found some. Each filter is first
// looked up (the last message under it), so that a clean stream, the
// usual case, costs one read per filter and no write.
func (p *ForeignPurger) Purge(ctx context.Context) ([]Purged, error) {
	var found []Purged
	for _, name := range p.names {
		stream, ok := p.streams[name]
		if !ok {
			var err error
			if stream, err = p.b.JS.Stream(ctx, name); err != nil {
				return found, errors.Wrapf(err, "stream %s", name)
			}
			p.streams[name] = stream
		}
		for _, filter := range p.foreign[name] {
			last, err := stream.GetLastMsgForSubject(ctx, filter)
			if errors.Is(err, jetstream.ErrMsgNotFound) {
				continue
			}
			if err != nil {
				return found, errors.Wrapf(err, "look for %s in stream %s", filter, name)
			}
			if err := stream.Purge(ctx, jetstream.WithPurgeSubject(filter)); err != nil {
				return found, errors.Wrapf(err, "purge %s from stream %s", filter, name)
			}
			found = append(found, Purged{Stream: name, Filter: filter, Example: last.Subject})
		}
	}
	return found, nil
}
