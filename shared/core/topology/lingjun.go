package topology

import (
	"encoding/csv"
	"fmt"
	"io"
	"strings"

	"github.com/cockroachdb/errors"
)

// LingjunNodeName returns the node name LoadLingjunCSV gives the host on the
// i-th data row (1-based): lj-0001, lj-0002, ... The trace's host ids are
// 64-hex-digit hashes, unreadable in a scheduler's output; file order is
// stable, so the names are too.
func LingjunNodeName(i int) string { return fmt.Sprintf("lj-%04d", i) }

// LoadLingjunCSV reads the (decompressed) topology CSV of the Alibaba Lingjun
// 2023 dataset: header "ip,DSW,PSW,ASW", one row per host giving its core
// (DSW), aggregation (PSW) and ToR (ASW) switch. Hosts are named by
// LingjunNodeName in file order. The core and aggregation switches keep their
// names; ToR names repeat under different aggregation switches in the data (S1
// exists under P8 and P10), so each leaf is named "<PSW>/<ASW>", e.g. "P10/S14".
func LoadLingjunCSV(r io.Reader) (*Topology, error) {
	return loadParsed(r, "Lingjun topology CSV", parseLingjun)
}

func parseLingjun(r io.Reader) (Spec, error) {
	cr := csv.NewReader(r)
	cr.FieldsPerRecord = 4
	header, err := cr.Read()
	if err != nil {
		return Spec{}, errors.Wrap(err, "reading header")
	}
	for i, want := range []string{"ip", "DSW", "PSW", "ASW"} {
		if !strings.EqualFold(strings.TrimSpace(header[i]), want) {
			return Spec{}, errors.Newf("header is %q, want ip,DSW,PSW,ASW", strings.Join(header, ","))
		}
	}
	b := newSpecBuilder()
	seen := make(map[string]int) // host id -> line
	for row := 1; ; row++ {
		rec, err := cr.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return Spec{}, err // csv errors carry their line
		}
		line, _ := cr.FieldPos(0)
		for i, f := range rec {
			if strings.TrimSpace(f) == "" {
				return Spec{}, errors.Newf("line %d: empty %s", line, header[i])
			}
		}
		ip, core, agg, tor := rec[0], rec[1], rec[2], rec[3]
		if prev, dup := seen[ip]; dup {
			return Spec{}, errors.Newf("line %d: host %s already listed on line %d", line, ip, prev)
		}
		seen[ip] = line
		leaf := agg + "/" + tor
		b.addChild(core, agg)
		b.addChild(agg, leaf)
		b.addNode(leaf, LingjunNodeName(row))
	}
	if len(seen) == 0 {
		return Spec{}, errors.New("no hosts")
	}
	return b.spec(), nil
}
