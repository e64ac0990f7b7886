package store

import (
	"fmt"

	"github.com/cockroachdb/errors"

	"github.com/lockstep-dev/lockstep/shared/contract/codec"
)

// Running is the value of running/<node>/<job>: which attempt's ranks are
// alive on the node, and under which registration (epoch) of its agent.
// The key is what counts: its presence holds back the job's next
// reservation (ReservationTxn), whatever the value says.
type Running struct {
	JobID   string `json:"jobId"`
	Node    string `json:"node"`
	Attempt int    `json:"attempt"`
	Epoch   int64  `json:"epoch"`
}

// DecodeRunning decodes the value of a running key and checks that it
// agrees with its key; a failure is an ErrMalformed error naming the key.
func DecodeRunning(key string, value []byte) (Running, error) {
	var r Running
	node, job, ok := ParseRunningKey(key)
	if !ok {
		return r, markMalformed(errors.Newf("%s: not a running/<node>/<job> key", key))
	}
	if err := codec.Decode(value, &r); err != nil {
		return Running{}, markMalformed(errors.Wrapf(err, "%s: undecodable", key))
	}
	bad := func(field, format string, args ...any) error {
		return markMalformed(errors.Newf("%s: %s: %s", key, field, fmt.Sprintf(format, args...)))
	}
	switch {
	case r.JobID != job:
		return Running{}, bad("jobId", "%q is not the job the key names", r.JobID)
	case r.Node != node:
		return Running{}, bad("node", "%q is not the node the key names", r.Node)
	case r.Attempt < 1:
		return Running{}, bad("attempt", "%d is not a positive attempt", r.Attempt)
	}
	return r, nil
}
