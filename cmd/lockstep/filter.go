package main

import (
	"slices"
	"strings"

	"github.com/spf13/pflag"

	"github.com/lockstep-dev/lockstep/shared/contract/domain"
	"github.com/lockstep-dev/lockstep/shared/contract/subjects"
)

// allStates are the job states --state takes.
var allStates = []domain.State{
	domain.StatePending, domain.StateReserved, domain.StateRunning, domain.StateSucceeded,
	domain.StateFailed, domain.StateCancelled, domain.StateRejected, domain.StateTimeout,
}

// selection is what queue, cancel and history share: -u, --state
// and --queue, each a comma-separated list (or repeated); empty selects
// all.
type selection struct {
	users, states, queues []string
}

// addSelection registers the selection flags on fs.
func addSelection(fs *pflag.FlagSet) *selection {
	f := &selection{}
	fs.StringSliceVarP(&f.users, "user", "u", nil, "only these users' jobs (comma-separated; "+subjects.NoOwner+" for jobs submitted without credentials)")
	fs.StringSliceVar(&f.states, "state", nil, "only jobs in these states (comma-separated: "+stateNames()+")")
	fs.StringSliceVar(&f.queues, "queue", nil, "only jobs in these queues (comma-separated)")
	return f
}

func stateNames() string {
	names := make([]string, len(allStates))
	for i, s := range allStates {
		names[i] = string(s)
	}
	return strings.Join(names, ", ")
}

// check refuses a selection that can match nothing by its spelling: a
// state that is none, a user or queue name no job can have.
func (f *selection) check() error {
	for _, s := range f.states {
		if !slices.Contains(allStates, domain.State(s)) {
			return usagef("--state: %q is not a job state (want %s)", s, stateNames())
		}
	}
	for _, u := range f.users {
		if u != subjects.NoOwner && !domain.ValidUserName(u) {
			return usagef("-u/--user: %q is not a user name", u)
		}
	}
	for _, q := range f.queues {
		if !subjects.Token(q) {
			return usagef("--queue: %q is not a queue name", q)
		}
	}
	return nil
}

// selects reports whether the selection names anything at all.
func (f *selection) selects() bool {
	return len(f.users)+len(f.states)+len(f.queues) > 0
}

// match reports whether a job of owner, in queue and state, is selected.
func (f *selection) match(owner, queue string, state domain.State) bool {
	if owner == "" {
		owner = subjects.NoOwner
	}
	return (len(f.users) == 0 || slices.Contains(f.users, owner)) &&
		(len(f.queues) == 0 || slices.Contains(f.queues, queue)) &&
		(len(f.states) == 0 || slices.Contains(f.states, string(state)))
}

// apply selects jobs for a listing: the filter's, and unless all (or
// --state names them) only the unfinished ones. rejected counts the
// rejected jobs the filter selects but the listing left out.
func (f *selection) apply(jobs []domain.Job, all bool) (shown []domain.Job, rejected int) {
	for _, j := range jobs {
		if !f.match(j.Owner, j.Spec.Queue, j.State) {
			continue
		}
		switch {
		case all || len(f.states) > 0 || !j.State.Terminal():
			shown = append(shown, j)
		case j.State == domain.StateRejected:
			rejected++
		}
	}
	return shown, rejected
}
