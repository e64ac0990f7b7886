package live

import (
	"context"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/lockstep-dev/lockstep/shared/contract/subjects"
)

// StreamMessages counts what the load wrote to each JetStream stream (and
// the job bucket's stream), from the streams' last sequence numbers before
// and after the load phase: where a job's JetStream traffic goes. On a
// shared cluster the counts include other work's.
type StreamMessages map[string]uint64

// countedStreams are the streams a job's life writes to.
var countedStreams = []string{
	subjects.StreamJobs, subjects.StreamEvents, subjects.StreamWork, "KV_" + subjects.BucketJobs,
}

// streamSeqs reads each counted stream's last sequence; a stream that
// cannot be read is left out.
func streamSeqs(ctx context.Context, js jetstream.JetStream) map[string]uint64 {
	out := map[string]uint64{}
	for _, name := range countedStreams {
		st, err := js.Stream(ctx, name)
		if err != nil {
			continue
		}
		info, err := st.Info(ctx)
		if err != nil {
			continue
		}
		out[name] = info.State.LastSeq
	}
	return out
}

// streamDelta is after − before for the streams read both times.
func streamDelta(before, after map[string]uint64) StreamMessages {
	out := StreamMessages{}
	for name, b := range before {
		if a, ok := after[name]; ok && a >= b {
			out[name] = a - b
		}
	}
	return out
}
