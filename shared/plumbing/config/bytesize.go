package config

import (
	"strconv"

	"github.com/cockroachdb/errors"
	"github.com/docker/go-units"
)

// byteSize is a flag of a size in bytes, written with binary units as
// Docker's flags are ("20GiB", "512m", "1048576"; "20GB" is 20 GiB too).
type byteSize struct{ n *int64 }

// maxByteSize bounds a size flag, far past any stream's disk.
const maxByteSize = 1 << 50

func (b byteSize) Set(s string) error {
	n, err := units.RAMInBytes(s)
	// RAMInBytes wraps past int64 without an error ("9999999999TiB").
	if err != nil || n < 0 || n > maxByteSize {
		return errors.Newf("%q is not a size up to 1PiB (e.g. 20GiB, 512MiB, 0)", s)
	}
	*b.n = n
	return nil
}

func (b byteSize) String() string {
	if b.n == nil || *b.n == 0 {
		return "0"
	}
	return strconv.FormatInt(*b.n, 10)
}

func (byteSize) Type() string { return "size" }
