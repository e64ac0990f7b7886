// Package procfs reads what the agent needs of processes from /proc:
// parent, state and start time (to find a rank's tree and to tell a PID
// from its reuse), and one variable of a process's environment (the rank
// token). It imports the standard library only, as the rank supervisor
// (package reexec) needs it before the heavy packages initialise.
package procfs

import (
	"bytes"
	"os"
	"strconv"
)

// Proc is what the containment code needs of a process.
type Proc struct {
	PID, PPID int
	State     byte // R, S, D, T, Z, ...
	// Start is the start time in clock ticks after boot (stat field 22):
	// with the PID it names one process for the machine's uptime.
	Start uint64
}

// List reads every process's stat line. Processes that exit during the
// scan are skipped.
func List() []Proc {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	out := make([]Proc, 0, len(ents))
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if p, ok := Stat(pid); ok {
			out = append(out, p)
		}
	}
	return out
}

// Stat parses /proc/PID/stat. The command name (field 2) may hold spaces
// and parentheses, so fields are counted from its last ')'.
func Stat(pid int) (Proc, bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return Proc{}, false
	}
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return Proc{}, false
	}
	f := bytes.Fields(b[i+1:])
	// f[0] is field 3 (state), so field n is f[n-3].
	if len(f) < 20 {
		return Proc{}, false
	}
	ppid, err1 := strconv.Atoi(string(f[1]))
	start, err2 := strconv.ParseUint(string(f[19]), 10, 64)
	if err1 != nil || err2 != nil {
		return Proc{}, false
	}
	return Proc{PID: pid, PPID: ppid, Start: start, State: f[0][0]}, true
}

// Descendants lists the processes below root.
func Descendants(root int) []int {
	kids := map[int][]int{}
	for _, p := range List() {
		kids[p.PPID] = append(kids[p.PPID], p.PID)
	}
	var out []int
	queue := []int{root}
	for len(queue) > 0 {
		next := kids[queue[0]]
		queue = queue[1:]
		out = append(out, next...)
		queue = append(queue, next...)
	}
	return out
}

// EnvValue is the value of key in the environment a process was started
// with ("" if absent or unreadable).
func EnvValue(pid int, key string) string {
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
