package agent

import (
	"bufio"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/cockroachdb/errors"
	"golang.org/x/sys/unix"

	"github.com/lockstep-dev/lockstep/services/agent/procfs"
)

// Containment selects how the agent tracks each rank's process tree.
type Containment string

const (
	// ContainAuto uses a cgroup per rank where the agent may create cgroups
	// (cgroup v2 with cgroup.kill), else supervisors alone.
	ContainAuto Containment = "auto"
	// ContainCgroup requires cgroups: the agent refuses to start without.
	ContainCgroup Containment = "cgroup"
	// ContainProcess uses supervisors alone (subreaper, process group,
	// lifeline pipe), even where cgroups are available.
	ContainProcess Containment = "process"
)

// container holds the rank trees of one agent: a supervisor per rank
// always, plus a cgroup per rank under cgParent when it has one. Every
// rank has a record in stateDir from before it starts until its last
// process is gone, so an agent that died leaves its successor enough to
// find (and verify) what is left.
type container struct {
	log      *slog.Logger
	stateDir string
	cgParent string // "" without cgroups
}

// rankRecord is a rank's entry in the state directory.
type rankRecord struct {
	// Token is in the environment of every process of the rank's tree.
	Token string `json:"token"`
	// Cgroup is the rank's cgroup directory, if it has one.
	Cgroup string `json:"cgroup,omitempty"`
}

func newContainer(cfg Config, log *slog.Logger) (*container, error) {
	c := &container{log: log, stateDir: filepath.Join(cfg.DataDir, "ranks")}
	if err := os.MkdirAll(c.stateDir, 0o700); err != nil {
		return nil, errors.Wrap(err, "rank state directory")
	}
	if cfg.Containment == ContainProcess {
		return c, nil
	}
	parent, err := cgroupParent(cfg.DataDir)
	switch {
	case err == nil:
		// Created on demand (prepare): an agent killed while it runs no rank
		// leaves no empty cgroup behind. Leftovers keep it from going.
		_ = os.Remove(parent)
		c.cgParent = parent
	case cfg.Containment == ContainCgroup:
		return nil, errors.Wrap(err, "--containment=cgroup")
	default:
		log.Info("cgroups not usable; rank trees are contained by supervisors alone", "err", err)
	}
	return c, nil
}

// cgroupParent creates (or finds) the cgroup under which this agent puts
// its ranks: below the agent's own cgroup, named after its data directory,
// so agents sharing a machine (or a test run) never touch each other's.
func cgroupParent(dataDir string) (string, error) {
	dir, err := cgroupParentPath(dataDir)
	if err != nil {
		return "", err
	}
	if err := os.Mkdir(dir, 0o755); err != nil && !os.IsExist(err) {
		return "", errors.Wrap(err, "create the agent's cgroup")
	}
	if _, err := os.Stat(filepath.Join(dir, "cgroup.kill")); err != nil {
		_ = os.Remove(dir)
		return "", errors.Wrap(err, "cgroup.kill (kernel before 5.14?)")
	}
	return dir, nil
}

// cgroupParentPath is where cgroupParent puts the agent's cgroup.
func cgroupParentPath(dataDir string) (string, error) {
	mnt, err := cgroup2Mount()
	if err != nil {
		return "", err
	}
	own, err := ownCgroup()
	if err != nil {
		return "", err
	}
	abs, err := filepath.Abs(dataDir)
	if err != nil {
		return "", errors.Wrap(err, "data dir")
	}
	sum := sha256.Sum256([]byte(abs))
	return filepath.Join(mnt, own, "lockstep-"+hex.EncodeToString(sum[:6])), nil
}

// cgroup2Mount finds where the cgroup v2 hierarchy is mounted
// (/sys/fs/cgroup, or /sys/fs/cgroup/unified on hybrid hosts).
func cgroup2Mount() (string, error) {
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return "", errors.Wrap(err, "mountinfo")
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	for s.Scan() {
		// "36 35 98:0 / /sys/fs/cgroup rw,... shared:1 - cgroup2 cgroup2 rw"
		pre, post, ok := strings.Cut(s.Text(), " - ")
		fields, tail := strings.Fields(pre), strings.Fields(post)
		if ok && len(fields) >= 5 && len(tail) >= 1 && tail[0] == "cgroup2" {
			return fields[4], nil
		}
	}
	return "", errors.New("no cgroup v2 hierarchy mounted")
}

// ownCgroup is this process's cgroup v2 path ("0::/path").
func ownCgroup() (string, error) {
	b, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return "", errors.Wrap(err, "read own cgroup")
	}
	for _, line := range strings.Split(string(b), "\n") {
		if p, ok := strings.CutPrefix(line, "0::"); ok {
			return p, nil
		}
	}
	return "", errors.New("not in a cgroup v2 hierarchy")
}

// prepare makes a new rank's token, cgroup and record, before anything of
// the rank exists. The cgroup gets pin's cores and memory nodes where the
// cpuset controller is delegated to the agent.
func (c *container) prepare(pin rankPin) (rankRecord, error) {
	var b [12]byte
	_, _ = rand.Read(b[:])
	rec := rankRecord{Token: hex.EncodeToString(b[:])}
	if c.cgParent != "" {
		rec.Cgroup = filepath.Join(c.cgParent, "rank-"+rec.Token)
		if err := mkdirUnder(c.cgParent, rec.Cgroup); err != nil {
			return rankRecord{}, errors.Wrap(err, "create the rank's cgroup")
		}
		if err := c.cpuset(rec.Cgroup, pin); err != nil {
			// The supervisor's affinity and memory policy pin the rank
			// anyway (startPinned); the cpuset only makes it binding.
			c.log.Debug("rank cgroup without a cpuset", "err", err)
		}
	}
	if err := writeFileSync(c.recordPath(rec.Token), mustJSON(rec)); err != nil {
		c.release(rec, false)
		return rankRecord{}, errors.Wrap(err, "record the rank")
	}
	return rec, nil
}

// cpuset writes pin into the rank cgroup's cpuset.cpus and cpuset.mems,
// enabling the cpuset controller below the agent's cgroup first. That works
// only where it is delegated to the agent (cgroup v2, e.g. systemd's
// Delegate=yes); elsewhere it fails and changes nothing.
func (c *container) cpuset(dir string, pin rankPin) error {
	if len(pin.cpus) == 0 && len(pin.mems) == 0 {
		return nil
	}
	if err := os.WriteFile(filepath.Join(c.cgParent, "cgroup.subtree_control"), []byte("+cpuset"), 0o644); err != nil {
		return errors.Wrap(err, "enable the cpuset controller")
	}
	for file, list := range map[string][]int{"cpuset.cpus": pin.cpus, "cpuset.mems": pin.mems} {
		if len(list) == 0 {
			continue
		}
		if err := os.WriteFile(filepath.Join(dir, file), []byte(cpuList(list)), 0o644); err != nil {
			return errors.Wrapf(err, "write %s", file)
		}
	}
	return nil
}

// cpuList writes cores or nodes as a cpuset takes them: "0,1,5".
func cpuList(xs []int) string {
	var b strings.Builder
	for i, x := range xs {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.Itoa(x))
	}
	return b.String()
}

// mkdirUnder creates dir in parent, creating parent as needed: the
// supervisor of the last rank removes parent when it ends its tree on its
// own, and may do so between the two mkdirs.
func mkdirUnder(parent, dir string) error {
	var err error
	for range 3 {
		if err = os.Mkdir(parent, 0o755); err != nil && !os.IsExist(err) {
			return err
		}
		if err = os.Mkdir(dir, 0o755); !os.IsNotExist(err) {
			return err
		}
	}
	return err
}

func (c *container) recordPath(token string) string {
	return filepath.Join(c.stateDir, token+".json")
}

// release ends whatever is left of a rank's tree and forgets the rank.
// Without a cgroup, search means looking for the tree's processes by their
// token: needed when the supervisor did not end the tree itself (it was
// killed), a scan of /proc otherwise spared.
func (c *container) release(rec rankRecord, search bool) {
	if rec.Cgroup != "" {
		if err := removeCgroup(rec.Cgroup); err != nil {
			c.log.Warn("rank cgroup not removed", "cgroup", rec.Cgroup, "err", err)
			search = true
		}
	}
	if search {
		killHolders(map[string]bool{rec.Token: true})
	}
	_ = os.Remove(c.recordPath(rec.Token))
}

// sweep ends what a previous incarnation of this agent left running (it
// was killed before its supervisors could act, or they were killed). It
// runs before the agent registers, so nothing here is a current rank. One
// scan of /proc serves every record.
func (c *container) sweep() {
	ents, _ := os.ReadDir(c.stateDir)
	var recs []rankRecord
	tokens := map[string]bool{}
	for _, e := range ents {
		path := filepath.Join(c.stateDir, e.Name())
		var rec rankRecord
		b, err := os.ReadFile(path)
		if err != nil || json.Unmarshal(b, &rec) != nil || !validToken(rec.Token) || e.Name() != rec.Token+".json" {
			c.log.Warn("unreadable rank record removed", "path", path)
			_ = os.Remove(path)
			continue
		}
		// A record names a cgroup of ours only below our parent: a forged
		// or stale path elsewhere is not ours to kill.
		if rec.Cgroup != "" && (c.cgParent == "" || filepath.Dir(rec.Cgroup) != c.cgParent) {
			rec.Cgroup = ""
		}
		recs = append(recs, rec)
		tokens[rec.Token] = true
	}
	if n := killHolders(tokens); n > 0 {
		c.log.Info("leftover rank processes of a previous agent ended", "processes", n, "ranks", len(recs))
	}
	for _, rec := range recs {
		c.release(rec, false)
	}
	// A cgroup without a record (the agent died between the two).
	if c.cgParent != "" {
		ents, _ := os.ReadDir(c.cgParent)
		for _, e := range ents {
			if e.IsDir() && strings.HasPrefix(e.Name(), "rank-") {
				_ = removeCgroup(filepath.Join(c.cgParent, e.Name()))
			}
		}
	}
}

// close removes the agent's cgroup parent if no rank is left in it.
func (c *container) close() {
	if c.cgParent != "" {
		_ = os.Remove(c.cgParent)
	}
}

func validToken(s string) bool {
	_, err := hex.DecodeString(s)
	return err == nil && len(s) == 24
}

// killCgroup SIGKILLs every process in a cgroup at once.
func killCgroup(dir string) error {
	return os.WriteFile(filepath.Join(dir, "cgroup.kill"), []byte("1"), 0)
}

// removeCgroup kills what is in a cgroup, waits for it to empty and
// removes it.
func removeCgroup(dir string) error {
	if _, err := os.Stat(dir); os.IsNotExist(err) {
		return nil
	}
	if err := killCgroup(dir); err != nil {
		return errors.Wrap(err, "cgroup.kill")
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		err := os.Remove(dir)
		if err == nil || os.IsNotExist(err) {
			return nil
		}
		// EBUSY until the killed processes are reaped.
		if !errors.Is(err, syscall.EBUSY) || time.Now().After(deadline) {
			return errors.Wrap(err, "remove cgroup")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// killHolders SIGKILLs every process carrying one of tokens until none is
// left, and returns how many it found at first. Bounded: a process that
// cannot die (uninterruptible sleep) is left to the next sweep rather than
// waited on forever.
func killHolders(tokens map[string]bool) int {
	if len(tokens) == 0 {
		return 0
	}
	first := -1
	for range 50 {
		pids := tokenHolders(tokens)
		if first < 0 {
			first = len(pids)
		}
		if len(pids) == 0 {
			break
		}
		for _, pid := range pids {
			killHolder(pid, tokens)
		}
		time.Sleep(20 * time.Millisecond)
	}
	return first
}

// killHolder SIGKILLs pid if it still carries one of tokens. Between the
// scan of /proc and the kill, the process may have ended and its PID gone
// to someone else's: a pidfd names one process for good, so the token is
// checked again after opening it and the signal goes through it (to a
// process that ended meanwhile it goes nowhere). Without pidfds (Linux
// before 5.3) it falls back to kill(2).
func killHolder(pid int, tokens map[string]bool) {
	fd, err := unix.PidfdOpen(pid, 0)
	if errors.Is(err, unix.ENOSYS) {
		_ = syscall.Kill(pid, syscall.SIGKILL)
		return
	}
	if err != nil {
		return // gone
	}
	defer unix.Close(fd)
	if !tokens[procfs.EnvValue(pid, envRankToken)] {
		return // the PID is another process's now
	}
	_ = unix.PidfdSendSignal(fd, unix.SIGKILL, nil, 0)
}

func writeFileSync(path string, b []byte) error {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o600)
	if err != nil {
		return err
	}
	if _, err := f.Write(b); err != nil {
		_ = f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		_ = f.Close()
		return err
	}
	return f.Close()
}

func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}
