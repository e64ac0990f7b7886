package agent

import (
	"github.com/lockstep-dev/lockstep/services/agent/reexec"
	"github.com/lockstep-dev/lockstep/shared/contract/rankenv"
)

// Each rank runs under a supervisor, this binary executed again as
// reexec.SupervisorArg0 (see package reexec): it makes itself a child
// subreaper and ends the rank's whole tree when the rank exits or when
// its lifeline, a pipe whose write end only the agent holds, reads EOF.

// envRankToken marks every process of one rank's tree (the rank and its
// descendants inherit it): a restarted agent finds leftovers by it, and
// verifies with it that a PID it recorded is still one of ours.
const envRankToken = rankenv.RankToken

// The supervisor runs as the agent (root on a real node) and only its
// rank takes the owner's credential, so it must not run with the rank's
// environment: variables the user chose (the spec's env, srun's) would
// steer a root process. LD_PRELOAD alone runs the user's code as root in
// a binary built with cgo, and GODEBUG or GOTRACEBACK change the Go
// runtime's behaviour in any build. The supervisor gets a fixed
// environment of its own (supervisorEnv) and the rank's arrives on
// reexec.EnvFD (reexec.EncodeRankEnv), applied only to the rank it
// starts.

// supervisorEnv is all the supervisor's own environment holds: the token
// (the supervisor is part of the rank's tree) and its cgroup.
func supervisorEnv(token, cgroup string) []string {
	env := []string{envRankToken + "=" + token}
	if cgroup != "" {
		env = append(env, reexec.EnvRankCgroup+"="+cgroup)
	}
	return env
}
