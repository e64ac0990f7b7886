package queue

import (
	"encoding/json"

	"github.com/cockroachdb/errors"
)

// Marshal encodes the input as JSON (the snapshot's topology included), so
// a plan can be dumped and replayed by a test or the simulator.
func (in Input) Marshal() ([]byte, error) {
	b, err := json.Marshal(in)
	if err != nil {
		return nil, errors.Wrap(err, "encoding queue input")
	}
	return b, nil
}

// UnmarshalInput decodes an input written by Marshal.
func UnmarshalInput(data []byte) (Input, error) {
	var in Input
	if err := json.Unmarshal(data, &in); err != nil {
		return Input{}, errors.Wrap(err, "decoding queue input")
	}
	if in.Snapshot == nil {
		return Input{}, errors.New("decoding queue input: no snapshot")
	}
	return in, nil
}
