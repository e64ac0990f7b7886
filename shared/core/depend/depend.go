package depend

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/lockstep-dev/lockstep/shared/contract/domain"
	"github.com/lockstep-dev/lockstep/shared/contract/jobspec"
)

// Job is what the decision needs of a job: the one that waits, a job it
// names, or a namesake (same name and owner) for singleton.
type Job struct {
	ID          string       `json:"id"`
	Owner       string       `json:"owner,omitempty"`
	State       domain.State `json:"state"`
	SubmittedAt time.Time    `json:"submittedAt"`
}

// JobOf is what the decision needs of a job record.
func JobOf(j domain.Job) Job {
	return Job{ID: j.ID, Owner: j.Owner, State: j.State, SubmittedAt: j.SubmittedAt}
}

// Input is one job's dependency question.
type Input struct {
	Job          Job                  `json:"job"`
	Dependencies []jobspec.Dependency `json:"dependencies,omitempty"`
	Singleton    bool                 `json:"singleton,omitempty"`
	// Known holds the records of the jobs Dependencies name, by ID; an ID
	// missing from it has no record.
	Known map[string]Job `json:"known,omitempty"`
	// Namesakes are the other unfinished jobs of the same name and owner
	// (only read with Singleton).
	Namesakes []Job `json:"namesakes,omitempty"`
	// Now and UnknownGrace: an ID with no record is taken for no job only
	// once the job has been submitted UnknownGrace before Now. Until then
	// it waits: submissions are admitted concurrently, so the record of a
	// job submitted just before this one may land just after it.
	Now          time.Time     `json:"now"`
	UnknownGrace time.Duration `json:"unknownGrace,omitempty"`
}

// Verdict is what a job's dependencies allow.
type Verdict int

const (
	// Ready: every dependency holds; the job may be placed.
	Ready Verdict = iota
	// Wait: some dependency may still come to hold.
	Wait
	// Never: some dependency can never hold.
	Never
)

func (v Verdict) String() string {
	switch v {
	case Ready:
		return "ready"
	case Wait:
		return "wait"
	}
	return "never"
}

// Decision is a verdict and, unless Ready, why in words.
type Decision struct {
	Verdict Verdict
	Detail  string
}

// maxNamed bounds the job IDs a detail names.
const maxNamed = 5

// Decide answers in. Never wins over Wait: a job that can never start
// ends now, whatever else it waits for. A job may depend only on jobs of
// its own owner (any, when it has none: auth off, or an admin); another
// owner's job reads as no job at all, so the outcome tells nothing about
// it.
func Decide(in Input) Decision {
	var waiting []string
	for _, d := range in.Dependencies {
		for _, id := range d.Jobs {
			dep, ok := in.Known[id]
			if ok && in.Job.Owner != "" && dep.Owner != in.Job.Owner {
				ok = false
			}
			switch {
			case id == in.Job.ID:
				return Decision{Never, fmt.Sprintf("%s on itself", d.Type)}
			case !ok && in.UnknownGrace > 0 && in.Now.Sub(in.Job.SubmittedAt) < in.UnknownGrace:
				waiting = append(waiting, d.Type+":"+id+" (not known yet)")
				continue
			case !ok:
				return Decision{Never, fmt.Sprintf("%s on %s: no such job%s", d.Type, id, ofOwner(in.Job.Owner))}
			}
			switch holds(d.Type, dep.State) {
			case Never:
				return Decision{Never, fmt.Sprintf("%s on %s, which ended %s", d.Type, id, dep.State)}
			case Wait:
				waiting = append(waiting, d.Type+":"+id)
			}
		}
	}
	if len(waiting) > 0 {
		return Decision{Wait, "waiting for " + list(waiting)}
	}
	if in.Singleton {
		if blocker, ok := singletonBlocker(in.Job, in.Namesakes); ok {
			return Decision{Wait, "singleton: job " + blocker.ID + " of the same name is " + string(blocker.State)}
		}
	}
	return Decision{Verdict: Ready}
}

// holds says whether a dependency of kind t on a job in state s holds
// now (Ready), may later (Wait), or never can (Never).
func holds(t string, s domain.State) Verdict {
	switch t {
	case jobspec.DependAfter:
		if s == domain.StateRunning || s.Terminal() {
			return Ready
		}
	case jobspec.DependAfterAny:
		if s.Terminal() {
			return Ready
		}
	case jobspec.DependAfterOK:
		switch {
		case s == domain.StateSucceeded:
			return Ready
		case s.Terminal():
			return Never
		}
	case jobspec.DependAfterNotOK:
		switch {
		case s == domain.StateSucceeded:
			return Never
		case s.Terminal():
			return Ready
		}
	default:
		// Parse admits only the four kinds; a record that says otherwise
		// cannot be satisfied.
		return Never
	}
	return Wait
}

// singletonBlocker is a namesake that holds the job back: one that runs
// (or is reserved), or one still pending that was submitted before it
// (by time, then ID), so namesakes start one at a time in order.
func singletonBlocker(self Job, namesakes []Job) (Job, bool) {
	ns := slices.Clone(namesakes)
	slices.SortFunc(ns, func(a, b Job) int {
		if c := a.SubmittedAt.Compare(b.SubmittedAt); c != 0 {
			return c
		}
		return strings.Compare(a.ID, b.ID)
	})
	for _, n := range ns {
		if n.ID == self.ID || n.Owner != self.Owner {
			continue
		}
		if n.State.Active() {
			return n, true
		}
	}
	for _, n := range ns {
		if n.ID == self.ID || n.Owner != self.Owner || n.State != domain.StatePending {
			continue
		}
		if n.SubmittedAt.Before(self.SubmittedAt) || (n.SubmittedAt.Equal(self.SubmittedAt) && n.ID < self.ID) {
			return n, true
		}
	}
	return Job{}, false
}

func ofOwner(owner string) string {
	if owner == "" {
		return ""
	}
	return " of " + owner
}

func list(ids []string) string {
	if len(ids) <= maxNamed {
		return strings.Join(ids, ", ")
	}
	return strings.Join(ids[:maxNamed], ", ") + fmt.Sprintf(" and %d more", len(ids)-maxNamed)
}
