package gang

import (
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/lockstep-dev/lockstep/shared/contract/domain"
	"github.com/lockstep-dev/lockstep/shared/core/lifecycle"
)

// A job record placement proposed from can be missing from gang's read of
// the jobs KV: a KV get is a JetStream direct get, which any replica may
// answer, and JetStream does not promise read-after-write for it
// (nats-io/nats.docs#815, nats-server#6557). It was seen under a network
// fault in the compose cluster, where refusing the proposal left the job
// waiting for the proposal timeout. Such a proposal is read again a few times while it is
// fresh, and refused after that.
const (
	// staleReadWindow is how long after it was proposed a proposal whose
	// job is not found is read again.
	staleReadWindow = lifecycle.StaleReadWindow
	// staleReadDeliveries bounds the reads, whatever the clocks say.
	staleReadDeliveries = 4
)

// mayBeStaleRead reports whether a proposal whose job gang found no record
// of should be read again rather than refused: placement saw a record
// (a revision), recently (by this clock, allowing as much skew ahead), and
// it has not been read too often already. A forged or old proposal is
// refused at once.
func mayBeStaleRead(prop domain.Proposal, delivered uint64, now time.Time) bool {
	age := now.Sub(prop.ProposedAt)
	return prop.JobRevision > 0 && !prop.ProposedAt.IsZero() &&
		age < staleReadWindow && age > -staleReadWindow &&
		delivered < staleReadDeliveries
}

// deliveries is how often msg has been delivered, this time included (1
// when its metadata cannot be read).
func deliveries(msg jetstream.Msg) uint64 {
	md, err := msg.Metadata()
	if err != nil {
		return 1
	}
	return md.NumDelivered
}
