package topology

import (
	"compress/gzip"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/cockroachdb/errors"
	"github.com/lockstep-dev/lockstep/shared/contract/errs"
)

// LoadFile reads a topology file, choosing the format by extension:
// .yaml or .yml (LoadYAML), .conf (LoadSlurm, e.g. topology.conf) or .csv
// (LoadLingjunCSV). A further .gz suffix means the file is gzip-compressed,
// as the Lingjun trace ships.
func LoadFile(path string) (*Topology, error) {
	name := strings.TrimSuffix(path, ".gz")
	var load func(io.Reader) (*Topology, error)
	switch strings.ToLower(filepath.Ext(name)) {
	case ".yaml", ".yml":
		load = LoadYAML
	case ".conf":
		load = LoadSlurm
	case ".csv":
		load = LoadLingjunCSV
	default:
		return nil, errs.MarkInvalid(errors.Newf(
			"topology file %s: unknown format; name it .yaml, .yml, .conf or .csv (optionally .gz)", path))
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, errors.Wrap(err, "opening topology file")
	}
	defer f.Close() // read-only: a close error cannot lose data
	var r io.Reader = f
	if name != path {
		gz, err := gzip.NewReader(f)
		if err != nil {
			return nil, errs.MarkInvalid(errors.Wrapf(err, "decompressing topology file %s", path))
		}
		defer gz.Close()
		r = gz
	}
	t, err := load(r)
	if err != nil {
		return nil, errors.Wrapf(err, "topology file %s", path)
	}
	return t, nil
}

// loadParsed parses r with parse and builds the topology; a parse error makes
// the topology invalid, and names the format (what).
func loadParsed(r io.Reader, what string, parse func(io.Reader) (Spec, error)) (*Topology, error) {
	s, err := parse(r)
	if err != nil {
		return nil, errs.MarkInvalid(errors.Wrapf(err, "parsing %s", what))
	}
	return New(s)
}
