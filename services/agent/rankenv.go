package agent

import (
	"maps"
	"net/url"
	"os"
	"slices"
	"strings"

	"github.com/lockstep-dev/lockstep/shared/contract/domain"
	"github.com/lockstep-dev/lockstep/shared/contract/rankenv"
	"github.com/lockstep-dev/lockstep/shared/core/place"
)

// rankSetup is what every rank of one attempt on this node shares.
type rankSetup struct {
	as domain.Assignment
	// hw is this node as the agent itself knows it (never the assignment's
	// word): which NICs are near which GPUs. uuids are its GPUs' UUIDs by
	// index when CUDA_VISIBLE_DEVICES names GPUs by UUID, else nil.
	hw    domain.Node
	uuids []string
	node  string
	acct  account
	// natsURL is the agent's NATS URL without credentials; sock and token
	// are the ack socket ("" when it is not served) and the attempt's
	// token; ackDir holds the ranks' ack files.
	natsURL, sock, token, ackDir string
	// slurm is the job's Slurm set on this node; shimDir ("" when there
	// is none) holds the Slurm command shims, put first on PATH.
	slurm   *rankenv.SlurmJob
	shimDir string
}

// rankEnv builds a rank's environment from an allow-list, never from the
// agent's own: the account's PATH, HOME, USER, LOGNAME and SHELL, then
// the spec's env, then what Lockstep sets (which wins: a spec cannot fake
// its rank). Whatever else the agent was started with (credentials,
// tokens, its own configuration) stays with the agent.
func rankEnv(s rankSetup, r domain.Rank) []string { return rankEnvOf(s, r).List() }

// rankEnvOf is rankEnv before it is written out.
func rankEnvOf(s rankSetup, r domain.Rank) rankenv.Env {
	env := rankenv.For(s.as, r)
	env.Path = rankenv.DefaultPath
	if s.acct.Cred == nil {
		// The ranks run as the agent's user, as they always did, and find
		// programs where the agent does.
		env.Path = os.Getenv("PATH")
	}
	if s.shimDir != "" {
		env.Path = s.shimDir + ":" + env.Path
		// A spec's PATH (sbatch --export=ALL sends the submitter's) replaces
		// the account's; the Slurm commands must still come first on it.
		if p, ok := env.Spec[rankenv.Path]; ok {
			env.Spec = maps.Clone(env.Spec)
			env.Spec[rankenv.Path] = s.shimDir + ":" + p
		}
	}
	env.Home, env.User, env.Shell = s.acct.Home, s.acct.Name, s.acct.Shell
	// The agent's own name: checkAssignment made sure it is the
	// assignment's.
	env.Node = s.node
	env.NATS = s.natsURL
	if s.sock != "" {
		env.AgentSocket, env.AckToken = s.sock, s.token
	}
	env.CheckpointAck = ackFile(s.ackDir, r.Rank)
	env.NICs = place.ClosestNICs(s.hw, r.GPUs)
	if s.uuids != nil {
		// checkAssignment kept every GPU index below the node's count,
		// which Config.Validate made the number of UUIDs.
		env.GPUIDs = make([]string, len(r.GPUs))
		for i, g := range r.GPUs {
			env.GPUIDs[i] = s.uuids[g]
		}
	}
	// A rank of a job that is not a batch job is a task of its step 0.
	if s.slurm != nil {
		env.Slurm = s.slurm
		env.Task = rankenv.SlurmTask{ProcID: r.Rank, LocalID: r.LocalRank, NodeID: s.as.NodeRank,
			Step: &rankenv.SlurmStep{ID: 0, NumTasks: s.as.WorldSize, NumNodes: s.as.NNodes, NodeList: s.slurm.NodeList}}
	}
	return env
}

// publicNATS is the agent's NATS URL list with any user name, password or
// token taken out: ranks learn where the bus is, never how the agent logs
// in to it.
func publicNATS(urls string) string {
	parts := strings.Split(urls, ",")
	for i, p := range parts {
		u, err := url.Parse(strings.TrimSpace(p))
		if err != nil || u.Host == "" {
			parts[i] = "" // unparseable: could hold anything
			continue
		}
		u.User = nil
		parts[i] = u.String()
	}
	return strings.Join(slices.DeleteFunc(parts, func(s string) bool { return s == "" }), ",")
}
