package queue

import (
	"github.com/cockroachdb/errors"

	"github.com/lockstep-dev/lockstep/shared/contract/codec"
)

// Marshal encodes the input as JSON (the snapshot's topology included), so
// a plan can be dumped and replayed by a test or the simulator.
func (in Input) Marshal() ([]byte, error) { return codec.Marshal("queue input", in) }

// UnmarshalInput decodes an input written by Marshal.
func UnmarshalInput(data []byte) (Input, error) {
	return codec.Unmarshal("queue input", data, func(in *Input) error {
		if in.Snapshot == nil {
			return errors.New("no snapshot")
		}
		return in.Snapshot.CheckNodes()
	})
}
