package store

import (
	"bytes"
	"log/slog"

	"github.com/cockroachdb/errors"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/lockstep-dev/lockstep/shared/contract/codec"
	"github.com/lockstep-dev/lockstep/shared/contract/domain"
)

// Holding is an allocation record as HoldingsCache mirrors it: the record,
// checked as DecodeAllocation checks it, and its placement's JSON (kept,
// about a kilobyte a gang, to compare the key's next record with). Its
// placement may be shared with the record it replaced: read-only, as every
// cached value is.
type Holding struct {
	domain.Allocation
	// placementJSON is the placement as the record spelled it; empty when
	// it may not be reused (decodeHolding).
	placementJSON []byte
}

// SamePlacement reports whether h and prev hold the same placement, spelled
// the same way: a record written again within its attempt (a start, an
// exit, the launch barrier) keeps it.
func (h *Holding) SamePlacement(prev *Holding) bool {
	return prev != nil && len(h.placementJSON) > 0 && bytes.Equal(h.placementJSON, prev.placementJSON)
}

// HoldingsCache mirrors the allocation records as gang's reconciler reads
// them (DecodeAllocation): the record of its key's job, naming each node
// and GPU once. A record it leaves out is one the reconciler releases with
// its keys, so what it holds is what the claim keys do; placement and the
// web UI take what is taken from it.
//
// A gang's record is written three times or more within its attempt and
// keeps its placement, most of its bytes and of decoding it: a record
// whose placement is spelled as the one it replaces takes that one's
// decoded placement (decodeHolding).
func HoldingsCache(cli *clientv3.Client, log *slog.Logger) *Cache[Holding] {
	return newCacheOver(cli, AllocPrefix, decodeHolding, log)
}

// decodeHolding decodes an allocation record written over prev (nil for
// none), giving what DecodeAllocation gives, with the placement's JSON. A
// placement spelled as prev's decodes as prev's did, so that is taken
// instead; every check runs on the result either way.
func decodeHolding(key string, value []byte, prev *Holding) (Holding, error) {
	var r struct {
		domain.Allocation
		// Less deeply nested, this takes the "placement" key from the
		// embedded record's field (as jobs.DecodeUnplaced does).
		Placement rawValue `json:"placement"`
	}
	if err := codec.Decode(value, &r); err != nil {
		return Holding{}, markMalformed(errors.Wrapf(err, "%s: undecodable", key))
	}
	if r.Placement.seen > 1 {
		// A placement given twice (only a hand-written record does) is
		// decoded as encoding/json would, the second over the first; its
		// bytes alone say nothing, so it is never reused.
		a, err := DecodeAllocation(key, value)
		return Holding{Allocation: a}, err
	}
	h := Holding{Allocation: r.Allocation, placementJSON: r.Placement.data}
	switch {
	case h.SamePlacement(prev):
		h.Placement = prev.Placement
	case len(h.placementJSON) > 0:
		if err := codec.Decode(h.placementJSON, &h.Placement); err != nil {
			return Holding{}, markMalformed(errors.Wrapf(err, "%s: placement: undecodable", key))
		}
	}
	if err := CheckAllocation(key, h.Allocation); err != nil {
		return Holding{}, err
	}
	return h, nil
}

// rawValue keeps a JSON value's bytes undecoded, and counts the values it
// was given.
type rawValue struct {
	data []byte
	seen int
}

func (r *rawValue) UnmarshalJSON(data []byte) error {
	r.data = append(r.data[:0], data...)
	r.seen++
	return nil
}
