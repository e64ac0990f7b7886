package drain

import (
	"time"

	"github.com/lockstep-dev/lockstep/shared/contract/domain"
	"github.com/lockstep-dev/lockstep/shared/contract/jobspec"
	"github.com/lockstep-dev/lockstep/shared/plumbing/jobs"
)

// jobView is the part of a job record the drain service's mirror reads:
// time limits, drains in progress and the η terms. Drain decodes every
// record the cluster writes (four a job or more), and the rest of a
// record (the spec's command, environment, resources; the placement) is
// most of its bytes: decoded here it would be built and thrown away. The
// field names are domain.Job's; TestJobViewKeepsWhatTheMirrorReads
// checks them, and the decisions taken from the mirror, against a full
// decode. A record whose other fields do not decode (one jobs.Decode
// refuses) is mirrored all the same: a drain due on it fails at
// startDrain's full read, which names it in the log each pass, where the
// mirror used to leave it out without a word.
type jobView struct {
	ID        string        `json:"id"`
	State     domain.State  `json:"state"`
	Attempt   int           `json:"attempt"`
	Drain     *domain.Drain `json:"drain,omitempty"`
	Timing    domain.Timing `json:"timing"`
	RunningAt time.Time     `json:"runningAt,omitzero"`
	Spec      struct {
		TimeLimit     jobspec.Duration `json:"timeLimit,omitzero"`
		RestartPolicy struct {
			RequeueOnTimeLimit bool `json:"requeueOnTimeLimit,omitempty"`
		} `json:"restartPolicy"`
	} `json:"spec"`
}

// decodeJobView decodes the record under key as the mirror keeps it: a
// domain.Job holding only jobView's fields. Through jobs.DecodeInto, it
// refuses a record that names another job than its key.
func decodeJobView(key string, data []byte) (domain.Job, error) {
	var v jobView
	if err := jobs.DecodeInto(key, data, &v, &v.ID); err != nil {
		return domain.Job{}, err
	}
	j := domain.Job{ID: v.ID, State: v.State, Attempt: v.Attempt, Drain: v.Drain, Timing: v.Timing, RunningAt: v.RunningAt}
	j.Spec.TimeLimit = v.Spec.TimeLimit
	j.Spec.RestartPolicy.RequeueOnTimeLimit = v.Spec.RestartPolicy.RequeueOnTimeLimit
	return j, nil
}
