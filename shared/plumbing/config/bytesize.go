package config

import (
	"strconv"

	"github.com/cockroachdb/errors"
	"github.com/docker/go-units"
)

// byteSize is a flag of a size in bytes, written with binary units as
// Docker's flags are ("20GiB", "512m", "1048576").
type byteSize struct{ n *int64 }

func (b byteSize) Set(s string) error {
	n, err := units.RAMInBytes(s)
	if err != nil {
		return errors.Newf("%q is not a size (e.g. 20GiB, 512MiB, 0)", s)
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
