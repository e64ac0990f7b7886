package jobs

import (
	"bytes"
	"sync"

	"github.com/lockstep-dev/lockstep/shared/contract/domain"
)

// ownWrites remembers, for the Store's own follower (Active), the record
// each write of the Store sends, encoded, with its brief, until the watch
// delivers the key: a delivered value equal byte for byte to the one
// remembered decodes to that brief, so the follower takes it instead of
// decoding the value. A gang replica writes three of a job's four records,
// and its follower decoded each one back.
//
// The bytes, not the revision, say which write it is: the watch may
// deliver a write before the write's own answer (and its revision) comes
// back, and equal bytes decode alike whoever wrote them. A write that
// failed is forgotten (a failure that stored the value after all only
// costs the follower its own decode); the bound empties the map should
// entries pile up anyway (a watch that never delivers).
type ownWrites struct {
	mu sync.Mutex
	// on is set while a follower takes the briefs: without one, nothing
	// is kept.
	on      bool
	written map[string]ownWrite
}

type ownWrite struct {
	data  []byte
	brief domain.JobBrief
}

// maxOwnWrites bounds the entries kept.
const maxOwnWrites = 100_000

// follow starts keeping briefs for a follower.
func (w *ownWrites) follow() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.on = true
}

// note remembers j, about to be written as data under id.
func (w *ownWrites) note(id string, j domain.Job, data []byte) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.on {
		return
	}
	if w.written == nil || len(w.written) >= maxOwnWrites {
		w.written = map[string]ownWrite{}
	}
	w.written[id] = ownWrite{data: data, brief: domain.BriefOf(j)}
}

// forget drops the entry of a write of data under id that failed, unless
// a later write has replaced it.
func (w *ownWrites) forget(id string, data []byte) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if o, ok := w.written[id]; ok && bytes.Equal(o.data, data) {
		delete(w.written, id)
	}
}

// take is called as the watch delivers value under key: the brief of the
// write that sent exactly value, if one is remembered.
func (w *ownWrites) take(key string, value []byte) (domain.JobBrief, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	o, ok := w.written[key]
	if !ok || !bytes.Equal(o.data, value) {
		return domain.JobBrief{}, false
	}
	delete(w.written, key)
	return o.brief, true
}
