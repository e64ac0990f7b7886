package agent

import (
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/lockstep-dev/lockstep/shared/contract/domain"
)

// Variables of the rank environment that concern checkpoint acks through
// the agent (see acksock.go); `lockstep ckpt-done` reads them.
const (
	// EnvAgentSocket names the agent's Unix socket.
	EnvAgentSocket = "LOCKSTEP_AGENT_SOCKET"
	// EnvAckToken is the attempt's token: only its ranks have it, and the
	// agent forwards an ack only with the token of the attempt it names.
	EnvAckToken = "LOCKSTEP_ACK_TOKEN"
)

// rankSetup is what every rank of one attempt on this node shares.
type rankSetup struct {
	as   domain.Assignment
	node string
	acct account
	// natsURL is the agent's NATS URL without credentials; sock and token
	// are the ack socket ("" when it is not served) and the attempt's
	// token; ackDir holds the ranks' ack files.
	natsURL, sock, token, ackDir string
}

// rankEnv builds a rank's environment from an allow-list, never from the
// agent's own: the account's PATH, HOME, USER, LOGNAME and SHELL, then
// the spec's env, then what Lockstep sets (which wins: a spec cannot fake
// its rank). Whatever else the agent was started with (credentials,
// tokens, its own configuration) stays with the agent.
func rankEnv(s rankSetup, r domain.Rank) []string {
	path := defaultPath
	if s.acct.Cred == nil {
		// The ranks run as the agent's user, as they always did, and find
		// programs where the agent does.
		path = os.Getenv("PATH")
	}
	env := []string{
		"PATH=" + path, "HOME=" + s.acct.Home, "USER=" + s.acct.Name,
		"LOGNAME=" + s.acct.Name, "SHELL=" + s.acct.Shell,
	}
	as := s.as
	for k, v := range as.Env {
		env = append(env, k+"="+v)
	}
	resumeFrom, resumeStep := "", ""
	if as.Resume != nil {
		resumeFrom, resumeStep = as.Resume.Path, strconv.FormatInt(as.Resume.Step, 10)
	}
	if len(r.CPUs) > 0 {
		env = append(env, "LOCKSTEP_CPUS="+joinInts(r.CPUs))
	}
	if s.sock != "" {
		env = append(env, EnvAgentSocket+"="+s.sock, EnvAckToken+"="+s.token)
	}
	return append(env,
		"LOCKSTEP_NATS="+s.natsURL,
		"LOCKSTEP_RESTART_COUNT="+strconv.Itoa(as.RestartCount),
		"LOCKSTEP_RESUME_FROM="+resumeFrom,
		"LOCKSTEP_RESUME_STEP="+resumeStep,
		"LOCKSTEP_CHECKPOINT_DIR="+as.CheckpointDir,
		"LOCKSTEP_CHECKPOINT_ACK="+ackFile(s.ackDir, r.Rank),
		"MASTER_ADDR="+as.MasterAddr,
		"MASTER_PORT="+strconv.Itoa(as.MasterPort),
		"WORLD_SIZE="+strconv.Itoa(as.WorldSize),
		"RANK="+strconv.Itoa(r.Rank),
		"LOCAL_RANK="+strconv.Itoa(r.LocalRank),
		"LOCAL_WORLD_SIZE="+strconv.Itoa(len(as.Ranks)),
		"NODE_RANK="+strconv.Itoa(as.NodeRank),
		"NNODES="+strconv.Itoa(as.NNodes),
		"CUDA_VISIBLE_DEVICES="+joinInts(r.GPUs),
		"LOCKSTEP_JOB_ID="+as.JobID,
		"LOCKSTEP_ATTEMPT="+strconv.Itoa(as.Attempt),
		"LOCKSTEP_NODE="+s.node,
	)
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
