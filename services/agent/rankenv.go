package agent

import (
	"net/url"
	"os"
	"slices"
	"strings"

	"github.com/lockstep-dev/lockstep/shared/contract/domain"
	"github.com/lockstep-dev/lockstep/shared/contract/rankenv"
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
	env := rankenv.For(s.as, r)
	env.Path = rankenv.DefaultPath
	if s.acct.Cred == nil {
		// The ranks run as the agent's user, as they always did, and find
		// programs where the agent does.
		env.Path = os.Getenv("PATH")
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
	return env.List()
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
