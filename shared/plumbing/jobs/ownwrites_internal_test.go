package jobs

import (
	"testing"

	"github.com/lockstep-dev/lockstep/shared/contract/domain"
)

// A brief is given for the exact bytes written, once; nothing is kept
// without a follower; a key written again keeps only the latest write.
func TestOwnWritesAreTakenForTheirBytesOnly(t *testing.T) {
	var w ownWrites
	job := func(st domain.State) domain.Job { return domain.Job{ID: "a", State: st, Attempt: 1, Owner: "o"} }

	w.note("a", job(domain.StatePending), []byte(`pending`))
	if _, ok := w.take("a", []byte(`pending`)); ok {
		t.Fatal("a brief kept with no follower")
	}
	w.follow()
	w.note("a", job(domain.StateReserved), []byte(`reserved`))
	if _, ok := w.take("a", []byte(`reserved by someone else`)); ok {
		t.Fatal("a brief given for other bytes")
	}
	if b, ok := w.take("a", []byte(`reserved`)); !ok || b != (domain.JobBrief{ID: "a", State: domain.StateReserved, Attempt: 1, Owner: "o"}) {
		t.Fatalf("take of the written bytes: %+v %v", b, ok)
	}
	if _, ok := w.take("a", []byte(`reserved`)); ok {
		t.Fatal("a brief taken twice")
	}
	w.note("a", job(domain.StateRunning), []byte(`running`))
	w.note("a", job(domain.StateSucceeded), []byte(`succeeded`))
	if _, ok := w.take("a", []byte(`running`)); ok {
		t.Fatal("a brief of a write the next one replaced was given")
	}
	if _, ok := w.take("b", []byte(`succeeded`)); ok {
		t.Fatal("a brief given under another key")
	}
}
