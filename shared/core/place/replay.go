package place

import (
	"time"

	"github.com/cockroachdb/errors"

	"github.com/lockstep-dev/lockstep/shared/contract/codec"
)

// Input is everything one decision depends on. It round-trips through
// JSON (the topology file included), so a decision dumped by the service
// can be replayed by a test or the simulator with Replay.
type Input struct {
	Snapshot *Snapshot `json:"snapshot"`
	Request  Request   `json:"request"`
	Now      time.Time `json:"now"`
	Seed     uint64    `json:"seed"`
}

// Replay runs Place on the input.
func (in Input) Replay() Result {
	return Place(in.Snapshot, in.Request, in.Now, in.Seed)
}

// Marshal encodes the input as JSON.
func (in Input) Marshal() ([]byte, error) { return codec.Marshal("placement input", in) }

// UnmarshalInput decodes an input written by Marshal.
func UnmarshalInput(data []byte) (Input, error) {
	return codec.Unmarshal("placement input", data, func(in *Input) error {
		if in.Snapshot == nil {
			return errors.New("no snapshot")
		}
		return in.Snapshot.CheckNodes()
	})
}

// CheckNodes refuses a decoded snapshot with a node view that has no node
// record, which no decision could read.
func (s *Snapshot) CheckNodes() error {
	for i, nv := range s.Nodes {
		if nv.Node == nil {
			return errors.Newf("snapshot.nodes.%d.node: missing", i)
		}
	}
	return nil
}
