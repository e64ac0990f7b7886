package codec

import (
	"encoding/json"

	"github.com/cockroachdb/errors"
)

// Marshal encodes v as JSON (encoding/json, see the package comment); an
// error names what was being encoded. With Unmarshal it is how a pure
// decision's input is dumped and read back for a replay (STYLE rule 23).
func Marshal(what string, v any) ([]byte, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, errors.Wrapf(err, "encoding %s", errors.Safe(what))
	}
	return b, nil
}

// Unmarshal decodes data written by Marshal into a new T. complete, when
// not nil, refuses a value that decoded but lacks what its reader needs
// (JSON of something else decodes to a mostly empty T). An error names
// what was being decoded.
func Unmarshal[T any](what string, data []byte, complete func(*T) error) (T, error) {
	var v T
	if err := Decode(data, &v); err != nil {
		var zero T
		return zero, errors.Wrapf(err, "decoding %s", errors.Safe(what))
	}
	if complete != nil {
		if err := complete(&v); err != nil {
			var zero T
			return zero, errors.Wrapf(err, "decoding %s", errors.Safe(what))
		}
	}
	return v, nil
}
