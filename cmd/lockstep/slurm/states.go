package slurm

import (
	"slices"
	"strings"

	"github.com/cockroachdb/errors"

	"github.com/lockstep-dev/lockstep/shared/contract/domain"
)

// JobState is a Slurm job state: squeue's compact code (%t) and its name
// (%T, sacct's State).
type JobState struct{ Code, Name string }

// Slurm's job states (squeue(1), JOB STATE CODES) that Lockstep's states
// map onto.
var (
	Pending     = JobState{"PD", "PENDING"}
	Configuring = JobState{"CF", "CONFIGURING"}
	Running     = JobState{"R", "RUNNING"}
	Signaling   = JobState{"SI", "SIGNALING"}
	Completing  = JobState{"CG", "COMPLETING"}
	Completed   = JobState{"CD", "COMPLETED"}
	Failed      = JobState{"F", "FAILED"}
	Cancelled   = JobState{"CA", "CANCELLED"}
	Timeout     = JobState{"TO", "TIMEOUT"}
)

// jobStates is every state code squeue -t and sacct -s accept (squeue(1)),
// those Lockstep never shows included, so that a script's filter is not
// an error.
var jobStates = []JobState{
	{"BF", "BOOT_FAIL"}, Cancelled, Completed, Configuring, Completing,
	{"DL", "DEADLINE"}, Failed, {"NF", "NODE_FAIL"}, {"OOM", "OUT_OF_MEMORY"},
	Pending, {"PR", "PREEMPTED"}, Running, {"RD", "RESV_DEL_HOLD"},
	{"RF", "REQUEUE_FED"}, {"RH", "REQUEUE_HOLD"}, {"RQ", "REQUEUED"},
	{"RS", "RESIZING"}, {"RV", "REVOKED"}, Signaling, {"SE", "SPECIAL_EXIT"},
	{"SO", "STAGE_OUT"}, {"ST", "STOPPED"}, {"S", "SUSPENDED"}, Timeout,
}

// StateOf maps a Lockstep job onto Slurm's states:
//
//	pending                      PD PENDING
//	reserved (GPUs held,         CF CONFIGURING (Slurm's state while an
//	  ranks starting)               allocation's nodes get ready)
//	running                      R  RUNNING
//	running, checkpoint drain    SI SIGNALING (the checkpoint signal is out)
//	running, cancel drain        CG COMPLETING
//	succeeded                    CD COMPLETED
//	failed, rejected             F  FAILED
//	cancelled                    CA CANCELLED
//	timeout                      TO TIMEOUT
func StateOf(state domain.State, drain *domain.Drain) JobState {
	switch state {
	case domain.StatePending:
		return Pending
	case domain.StateReserved:
		return Configuring
	case domain.StateRunning:
		switch {
		case drain == nil:
			return Running
		case drain.Then == domain.ThenCancel:
			return Completing
		}
		return Signaling
	case domain.StateSucceeded:
		return Completed
	case domain.StateCancelled:
		return Cancelled
	case domain.StateTimeout:
		return Timeout
	}
	return Failed // failed, rejected, and a state this binary does not know
}

// ParseStates parses squeue's -t (and scancel's -t): a comma-separated
// list of state codes or names, in any case, or "all". The result holds
// the names ("PENDING"); all is nil.
func ParseStates(s string) ([]string, error) {
	var out []string
	for _, w := range strings.Split(s, ",") {
		w = strings.ToUpper(strings.TrimSpace(w))
		if w == "" {
			continue
		}
		if w == "ALL" {
			return nil, nil
		}
		i := slices.IndexFunc(jobStates, func(st JobState) bool { return st.Code == w || st.Name == w })
		if i < 0 {
			return nil, errors.Newf("invalid job state %q (want a code such as PD, R, CD or a name such as PENDING, or all)", w)
		}
		out = append(out, jobStates[i].Name)
	}
	if len(out) == 0 {
		return nil, errors.New("no state given")
	}
	return out, nil
}

// reasons maps Lockstep's pending reason codes (the first word of a
// job's reason) onto Slurm's (squeue(1), JOB REASON CODES) where Slurm
// has one; the others are shown as Lockstep writes them.
var reasons = map[string]string{
	domain.ReasonResources: "Resources",
	domain.ReasonPriority:  "Priority",
	// Lockstep's backfill holds a reservation for the job it will start
	// next; Slurm shows that job as waiting for Resources.
	"Reserved": "Resources",
	// A commit lost a race with another gang and is being retried.
	domain.ReasonConflict: "Resources",
	// The gang can never fit this cluster: Slurm's "constraints can not be
	// satisfied".
	domain.ReasonNoNodes: "BadConstraints",
	"InvalidRequest":     "BadConstraints",
	// The queue's GPU quota (Slurm: the QOS's group GRES limit) and the
	// user's MaxRunningGPUs (the association's GRES limit).
	"QuotaExceeded": "QOSGrpGRES",
	"UserGPULimit":  "AssocGrpGRES",
	"Dependency":    "Dependency",

	"DependencyNeverSatisfied": "DependencyNeverSatisfied",
}

// Reason is squeue's reason (%r, and %R of a pending job) for a Lockstep
// reason: Slurm's word where there is one, else Lockstep's reason code,
// and "None" for none.
func Reason(reason string) string {
	code := reason
	if i := strings.IndexAny(code, ": ("); i >= 0 {
		code = code[:i]
	}
	if code == "" {
		return "None"
	}
	if r, ok := reasons[code]; ok {
		return r
	}
	return code
}

// NodeState is sinfo's state of a node (sinfo(1), NODE STATE CODES):
// down, drain (drained and empty), drng (draining: drained with work
// left), alloc (every usable GPU busy), mix (some), idle.
func NodeState(up, drained bool, gpusUsed, gpus int) string {
	switch {
	case !up:
		return "down"
	case drained && gpusUsed > 0:
		return "drng"
	case drained:
		return "drain"
	case gpusUsed > 0 && gpusUsed >= gpus:
		return "alloc"
	case gpusUsed > 0:
		return "mix"
	}
	return "idle"
}
