package jobs

import (
	"github.com/lockstep-dev/lockstep/shared/contract/domain"
)

// DecodeUnplaced parses the job record stored at key as Decode does, but
// leaves out the gang's placement of a record that is not pending: for a
// follower that reads what gangs hold from their allocations (placement's
// scheduler). A running gang's placement, every rank's GPUs and cores, is
// most of its record's bytes and more than half of decoding it; skipped,
// it is only scanned.
//
// A pending record comes back whole, the placement too if one is there
// (Requeue clears it, so none should be), because a pending record is the
// one a follower writes back with UpdateFrom (a pending reason), and a
// record written back must lose nothing. A record of another state must
// not be written back from what this returns.
//
// Unlike Decode it accepts a record whose placement is not a valid
// placement, when the record is not pending: the follower reads none.
func DecodeUnplaced(key string, data []byte) (domain.Job, error) {
	var r unplaced
	if err := DecodeInto(key, data, &r, &r.ID); err != nil {
		return domain.Job{}, err
	}
	if r.State == domain.StatePending && r.Placement.present {
		return decode(key, data)
	}
	return r.Job, nil
}

// unplaced is a job record whose placement is skipped: the outer field,
// less deeply nested, takes the "placement" key from domain.Job's
// (encoding/json's rule for embedded structs, which codec keeps).
type unplaced struct {
	domain.Job
	Placement skipped `json:"placement"`
}

// skipped consumes a JSON value without decoding it, remembering whether
// it was there and not null.
type skipped struct{ present bool }

func (s *skipped) UnmarshalJSON(data []byte) error {
	s.present = string(data) != "null"
	return nil
}
