package slurmenv

import (
	"strconv"
	"strings"
)

// PatternVars are the values of a filename pattern's replacement symbols
// for one job (and, for the per-node and per-task ones, one node or task).
type PatternVars struct {
	JobID   string // %j; %A too when the job is not an array task
	JobName string // %x
	User    string // %u
	// Node is the short hostname of the node the file is opened on (%N).
	Node   string
	NodeID int // %n
	TaskID int // %t
	// StepID is the step (%s, and %J's .step); nil for the batch script,
	// which %s prints as "batch" and %J leaves out.
	StepID       *int
	ArrayJobID   string // %A
	ArrayTaskID  int    // %a, %b (modulo 10)
	RestartCount int    // %r
	// WorkDir, when set, is prepended to a relative pattern, as Slurm
	// opens a batch job's files relative to its working directory.
	WorkDir string
}

// maxPadding is Slurm's largest zero padding ("%12j" pads to 10).
const maxPadding = 10

// ExpandPattern expands an sbatch --output/--error/--input filename
// pattern as Slurm does for a batch job (sbatch's FILENAME PATTERN):
//
//	%%  a "%"             %j  job ID             %x  job name
//	%A  array job ID      %a  array task index   %b  array index modulo 10
//	%J  job ID.step       %s  step ("batch")     %r  restart count
//	%N  short hostname    %n  node index         %t  task index (rank)
//	%u  user name
//
// A number between % and the letter zero-pads a numeric value to that
// width, at most 10 ("job%4j.out" is job0128.out for job 128); it is
// ignored for text (%N, %u, %x) and for a job ID that is not a number. A %
// before any other character stays as written; a pattern with a backslash
// anywhere is not expanded at all, its backslashes removed. (Slurm's %S,
// the SLUID, has no Lockstep counterpart and stays as written.)
func ExpandPattern(pattern string, v PatternVars) string {
	var b strings.Builder
	if v.WorkDir != "" && !strings.HasPrefix(pattern, "/") {
		b.WriteString(v.WorkDir)
		if !strings.HasSuffix(v.WorkDir, "/") {
			b.WriteByte('/')
		}
	}
	if strings.Contains(pattern, `\`) {
		b.WriteString(strings.ReplaceAll(pattern, `\`, ""))
		return b.String()
	}
	for i := 0; i < len(pattern); i++ {
		c := pattern[i]
		if c != '%' {
			b.WriteByte(c)
			continue
		}
		// After '%': "%", or padding digits and a symbol.
		j := i + 1
		if j < len(pattern) && pattern[j] == '%' {
			b.WriteByte('%')
			i = j
			continue
		}
		for j < len(pattern) && pattern[j] >= '0' && pattern[j] <= '9' {
			j++
		}
		if j >= len(pattern) {
			// A trailing "%" (or "%12") has no symbol; Slurm drops the
			// lone "%" and keeps digits after it.
			if j > i+1 {
				b.WriteString(pattern[i:j])
			}
			return b.String()
		}
		pad := 0
		if j > i+1 {
			for _, d := range pattern[i+1 : j] {
				pad = min(pad*10+int(d-'0'), 1000) // capped below, and never overflows
			}
			pad = min(pad, maxPadding)
		}
		s, ok := v.symbol(pattern[j], pad)
		if !ok {
			b.WriteString(pattern[i : j+1]) // not a symbol: as written
		} else {
			b.WriteString(s)
		}
		i = j
	}
	return b.String()
}

func (v PatternVars) symbol(c byte, pad int) (string, bool) {
	switch c {
	case 'A':
		if v.ArrayJobID != "" {
			return padID(v.ArrayJobID, pad), true
		}
		return padID(v.JobID, pad), true
	case 'a':
		return padInt(v.ArrayTaskID, pad), true
	case 'b':
		return padInt(v.ArrayTaskID%10, pad), true
	case 'j':
		return padID(v.JobID, pad), true
	case 'J':
		if v.StepID == nil {
			return padID(v.JobID, pad), true
		}
		return padID(v.JobID, pad) + "." + strconv.Itoa(*v.StepID), true
	case 's':
		if v.StepID == nil {
			return "batch", true
		}
		return padInt(*v.StepID, pad), true
	case 'r':
		return padInt(v.RestartCount, pad), true
	case 'N':
		return v.Node, true
	case 'n':
		return padInt(v.NodeID, pad), true
	case 't':
		return padInt(v.TaskID, pad), true
	case 'u':
		return v.User, true
	case 'x':
		return v.JobName, true
	}
	return "", false
}

func padInt(n, pad int) string { return padID(strconv.Itoa(n), pad) }

// padID zero-pads a numeric ID; Lockstep job IDs need not be numbers, and
// one that is not is not padded.
func padID(id string, pad int) string {
	if len(id) >= pad || !IsDigits(id) {
		return id
	}
	return strings.Repeat("0", pad-len(id)) + id
}
