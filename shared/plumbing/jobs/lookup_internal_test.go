package jobs

import (
	"errors"
	"testing"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/lockstep-dev/lockstep/shared/contract/subjects"
)

// A direct get's answer is taken only for the stream and key asked about:
// the reply subject is an inbox, and anything else arriving there is not
// the record.
func TestDirectGetAnswerIsCheckedAgainstTheQuestion(t *testing.T) {
	key := subjects.KVJob("train-1")
	answer := func(kv ...string) *nats.Msg {
		m := &nats.Msg{Header: nats.Header{}, Data: []byte(`{"id":"train-1"}`)}
		for i := 0; i+1 < len(kv); i += 2 {
			m.Header.Set(kv[i], kv[i+1])
		}
		return m
	}
	good := []string{jetstream.StreamHeader, subjects.StreamKVJobs, jetstream.SubjectHeader, key, jetstream.SequenceHeader, "42"}
	if seq, deleted, err := directGetAnswer(answer(good...), key); err != nil || deleted || seq != 42 {
		t.Errorf("a good answer: %d %v %v", seq, deleted, err)
	}
	for _, kv := range [][]string{
		{jetstream.StreamHeader, "LOCKSTEP_EVENTS", jetstream.SubjectHeader, key, jetstream.SequenceHeader, "42"},
		{jetstream.StreamHeader, subjects.StreamKVJobs, jetstream.SubjectHeader, subjects.KVJob("train-2"), jetstream.SequenceHeader, "42"},
		{jetstream.StreamHeader, subjects.StreamKVJobs, jetstream.SubjectHeader, key},
		{},
	} {
		if _, _, err := directGetAnswer(answer(kv...), key); err == nil {
			t.Errorf("answer with headers %v taken", kv)
		}
	}
	if _, deleted, err := directGetAnswer(answer(append(good, "KV-Operation", "DEL")...), key); err != nil || !deleted {
		t.Errorf("a delete marker: deleted %v, %v", deleted, err)
	}
	missing := &nats.Msg{Header: nats.Header{"Status": []string{"404"}}}
	if _, _, err := directGetAnswer(missing, key); !errors.Is(err, jetstream.ErrMsgNotFound) {
		t.Errorf("a 404: %v", err)
	}
}
