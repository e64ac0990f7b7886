package place

import (
	"encoding/json"
	"time"

	"github.com/cockroachdb/errors"
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
func (in Input) Marshal() ([]byte, error) {
	b, err := json.Marshal(in)
	if err != nil {
		return nil, errors.Wrap(err, "encoding placement input")
	}
	return b, nil
}

// UnmarshalInput decodes an input written by Marshal.
func UnmarshalInput(data []byte) (Input, error) {
	var in Input
	if err := json.Unmarshal(data, &in); err != nil {
		return Input{}, errors.Wrap(err, "decoding placement input")
	}
	if in.Snapshot == nil {
		return Input{}, errors.New("decoding placement input: no snapshot")
	}
	return in, nil
}
