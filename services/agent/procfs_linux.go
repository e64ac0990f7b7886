package agent

import (
	"bytes"
	"os"
	"strconv"
	"strings"
)

// procInfo is what the containment code needs of a process.
type procInfo struct {
	pid, ppid int
	state     byte // R, S, D, T, Z, ...
	// start is the start time in clock ticks after boot (stat field 22):
	// with the PID it names one process for the machine's uptime.
	start uint64
}

// listProcs reads every process's stat line. Processes that exit during
// the scan are skipped.
func listProcs() []procInfo {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	out := make([]procInfo, 0, len(ents))
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if p, ok := readStat(pid); ok {
			out = append(out, p)
		}
	}
	return out
}

// readStat parses /proc/PID/stat. The command name (field 2) may hold
// spaces and parentheses, so fields are counted from its last ')'.
func readStat(pid int) (procInfo, bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return procInfo{}, false
	}
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return procInfo{}, false
	}
	f := strings.Fields(string(b[i+1:]))
	// f[0] is field 3 (state), so field n is f[n-3].
	if len(f) < 20 {
		return procInfo{}, false
	}
	ppid, err1 := strconv.Atoi(f[1])
	start, err2 := strconv.ParseUint(f[19], 10, 64)
	if err1 != nil || err2 != nil {
		return procInfo{}, false
	}
	return procInfo{pid: pid, ppid: ppid, start: start, state: f[0][0]}, true
}

// envValue is the value of key in the environment a process was started
// with ("" if absent or unreadable).
func envValue(pid int, key string) string {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/environ")
	if err != nil {
		return ""
	}
	prefix := []byte(key + "=")
	for _, e := range bytes.Split(b, []byte{0}) {
		if v, ok := bytes.CutPrefix(e, prefix); ok {
			return string(v)
		}
	}
	return ""
}

// tokenHolders lists the processes started with one of tokens as their
// rank token: what is left of those ranks' trees. Only the owner (or
// root) can read a process's environment, so others' processes never
// match.
func tokenHolders(tokens map[string]bool) []int {
	var out []int
	self := os.Getpid()
	for _, p := range listProcs() {
		if p.pid != self && tokens[envValue(p.pid, envRankToken)] {
			out = append(out, p.pid)
		}
	}
	return out
}
