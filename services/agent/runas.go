package agent

import (
	"os"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"github.com/cockroachdb/errors"

	"github.com/lockstep-dev/lockstep/shared/contract/domain"
)

// Who a gang's ranks run as. An agent running as root starts each rank
// with its owner's uid, gid and supplementary groups (Slurm's task launch
// does the same with the submitter's UID): a job can then read and write
// what its owner can, and nothing of the node's or another user's. An
// agent that is not root cannot change user: its ranks run as itself, as
// they always did, and it says so once in its log.

// account is the local user a gang's ranks run as.
type account struct {
	// Name, Home and Shell give the ranks USER/LOGNAME, HOME and SHELL.
	Name, Home, Shell string
	// Cred is what the rank is started with; nil runs it as the agent.
	Cred *syscall.Credential
}

// runAs decides who a job's ranks run as on this node: the agent itself
// when it is not root, or the job has no owner on a cluster without auth
// (where no job has one); else the owner's local account. An owner with no
// local account is mapped to cfg.MapUnknownUsersTo when set, else the job
// fails here; an owner that is root, or maps to uid 0, runs only where the
// agent allows it (cfg.AllowRootRanks). With auth on, a job without an
// owner (an admin's or a service's, sent on the shared submit subject) is
// mapped as an unknown user is, or runs as root only where allowed: it is
// not root's by default.
func (e *executor) runAs(owner string) (account, error) {
	if !e.root || (owner == "" && e.cfg.Creds == "") {
		return e.self, nil
	}
	node := e.cfg.Node.Name
	if owner == "" {
		switch {
		case e.cfg.MapUnknownUsersTo != "":
			owner = e.cfg.MapUnknownUsersTo
		case e.cfg.AllowRootRanks:
			return e.self, nil
		default:
			return account{}, errors.Newf("the job has no owner, and on %s a job without one runs as root only where the agent allows it (--allow-root-ranks) or is mapped to a user (--map-unknown-users-to)", node)
		}
	}
	u, err := user.Lookup(owner)
	var unknown user.UnknownUserError
	if errors.As(err, &unknown) && e.cfg.MapUnknownUsersTo != "" {
		u, err = user.Lookup(e.cfg.MapUnknownUsersTo)
		if err != nil {
			return account{}, errors.Wrapf(err, "user %q does not exist on %s, nor %q that unknown users map to", owner, node, e.cfg.MapUnknownUsersTo)
		}
	}
	if errors.As(err, &unknown) {
		return account{}, errors.Newf("user %q does not exist on %s", owner, node)
	}
	if err != nil {
		return account{}, errors.Wrapf(err, "look up user %q on %s", owner, node)
	}
	acct, err := accountOf(u)
	if err != nil {
		return account{}, errors.Wrapf(err, "user %q on %s", owner, node)
	}
	if acct.Cred.Uid == 0 && !e.cfg.AllowRootRanks {
		return account{}, errors.Newf("user %q is root on %s, and ranks run as root only where the agent allows it (--allow-root-ranks)", owner, node)
	}
	return acct, nil
}

// accountOf reads what a rank needs of a local account: ids, groups,
// home and login shell.
func accountOf(u *user.User) (account, error) {
	uid, err1 := strconv.ParseUint(u.Uid, 10, 32)
	gid, err2 := strconv.ParseUint(u.Gid, 10, 32)
	if err := errors.CombineErrors(err1, err2); err != nil {
		return account{}, errors.Wrap(err, "non-numeric uid or gid")
	}
	ids, err := u.GroupIds()
	if err != nil {
		return account{}, errors.Wrap(err, "list groups")
	}
	groups := make([]uint32, 0, len(ids))
	for _, id := range ids {
		g, err := strconv.ParseUint(id, 10, 32)
		if err != nil {
			return account{}, errors.Wrapf(err, "group id %q", id)
		}
		groups = append(groups, uint32(g))
	}
	return account{
		Name: u.Username, Home: u.HomeDir, Shell: loginShell(u.Username),
		Cred: &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid), Groups: groups},
	}, nil
}

// selfAccount is the agent's own user, for ranks that run as the agent.
func selfAccount() account {
	a := account{Name: strconv.Itoa(os.Getuid()), Home: os.Getenv("HOME"), Shell: "/bin/sh"}
	if u, err := user.Current(); err == nil {
		a.Name, a.Home, a.Shell = u.Username, u.HomeDir, loginShell(u.Username)
	}
	return a
}

// loginShell is name's shell from /etc/passwd (os/user does not say), or
// /bin/sh.
func loginShell(name string) string {
	b, err := os.ReadFile("/etc/passwd")
	if err != nil {
		return "/bin/sh"
	}
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Split(line, ":")
		if len(f) == 7 && f[0] == name && f[6] != "" {
			return f[6]
		}
	}
	return "/bin/sh"
}

// attemptDir creates the attempt's directory (rank logs, ack files, the
// default working directory). Ranks running as their owner get it as
// theirs, closed to other users: they write their ack files there.
//
// It is made afresh. One already there is another job's: IDs are reused
// once a record is gone, and an attempt starts once on a node. Taken over
// as it was, its former owner's files would be the new job's: a planted
// checkpoint ack naming a resume path, a log file linked elsewhere.
func (e *executor) attemptDir(as domain.Assignment, acct account) (string, error) {
	dir := filepath.Join(e.cfg.DataDir, "jobs", as.JobID, strconv.Itoa(as.Attempt))
	if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
		return "", errors.Wrap(err, "rank working directory")
	}
	if _, err := os.Lstat(dir); err == nil {
		gone, err := e.moveAside(dir)
		if err != nil {
			return "", errors.Wrap(err, "an earlier job's directory of this ID")
		}
		go func() { _ = os.RemoveAll(gone) }() // outside dirMu, which start holds
	}
	// Closed to others even when the ranks run as the agent (root's own
	// ranks, a job without an owner): their output is nobody else's.
	if err := os.Mkdir(dir, 0o700); err != nil {
		return "", errors.Wrap(err, "rank working directory")
	}
	if acct.Cred == nil {
		return dir, nil
	}
	if err := os.Chown(dir, int(acct.Cred.Uid), int(acct.Cred.Gid)); err != nil {
		return "", errors.Wrapf(err, "give the attempt's directory to %s", acct.Name)
	}
	return dir, nil
}
