package jobs

import (
	"encoding/json"
	"sort"
	"time"

	"github.com/lockstep-dev/lockstep/shared/contract/domain"
)

// DefaultRetention is how long a finished job's record is kept: as long as
// the events stream keeps its events.
const DefaultRetention = 7 * 24 * time.Hour

// RetentionPolicy says what a sweep removes.
type RetentionPolicy struct {
	// Age is how long a record is kept after its job ended.
	Age time.Duration
	// MarkerAge is how long the delete marker a removal leaves is kept, so
	// that watchers behind by less than that see the record go.
	MarkerAge time.Duration
	// Limit bounds the records removed by one sweep (0: no bound); the
	// oldest go first, the rest wait for the next sweep.
	Limit int
}

// SweepPlan is what a sweep removes: records, each only if still at the
// revision it was read at, and delete markers, each with whatever older
// is stored under its key (never a record written after it).
type SweepPlan struct {
	Delete []Entry
	Purge  []Entry
}

// ended is the part of a record retention judges.
type ended struct {
	ID      string       `json:"id"`
	State   domain.State `json:"state"`
	EndedAt time.Time    `json:"endedAt"`
}

// PlanSweep decides, from the bucket's entries and the time, what a sweep
// removes. Only a record that decodes, names its own key and is in a final
// state is ever removed, once its end (or its last write, whichever is
// later) is older than p.Age; and a record naming another job than its
// key, once its last write is that old. No service writes one of those: it
// is a direct get's answer someone had stored under a new key (see
// docs/operations.md, "Redirected deliveries"), and every reader refuses
// it. A record that does not decode at all stays: it may be a newer
// version's, mid-upgrade.
func PlanSweep(entries []Entry, now time.Time, p RetentionPolicy) SweepPlan {
	var plan SweepPlan
	type aged struct {
		e   Entry
		end time.Time
	}
	var due []aged
	for _, e := range entries {
		if e.Deleted {
			if now.Sub(e.Created) >= p.MarkerAge {
				plan.Purge = append(plan.Purge, e)
			}
			continue
		}
		var r ended
		if json.Unmarshal(e.Value, &r) != nil {
			continue
		}
		if r.ID != e.Key {
			if now.Sub(e.Created) >= p.Age {
				due = append(due, aged{e, e.Created})
			}
			continue
		}
		if !r.State.Terminal() {
			continue
		}
		// A record rewritten after its end (a late report folded in) keeps
		// its age from that write: retention never runs ahead of the record.
		end := r.EndedAt
		if e.Created.After(end) {
			end = e.Created
		}
		if now.Sub(end) >= p.Age {
			due = append(due, aged{e, end})
		}
	}
	sort.Slice(due, func(i, j int) bool {
		if !due[i].end.Equal(due[j].end) {
			return due[i].end.Before(due[j].end)
		}
		return due[i].e.Key < due[j].e.Key
	})
	if p.Limit > 0 && len(due) > p.Limit {
		due = due[:p.Limit]
	}
	for _, d := range due {
		plan.Delete = append(plan.Delete, d.e)
	}
	return plan
}
