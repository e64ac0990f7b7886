package health

import (
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/cockroachdb/errors"

	"github.com/lockstep-dev/lockstep/services/agent/discover"
)

// DefaultProgramTimeout is how long the health-check program may run, as
// Slurm allows its HealthCheckProgram.
const DefaultProgramTimeout = 60 * time.Second

// maxProgramOutput bounds what is kept of the program's output.
const maxProgramOutput = 64 << 10

// Program runs the health-check program once.
type Program func(ctx context.Context) ProgramResult

// ProgramResult is one run of the health-check program.
type ProgramResult struct {
	// Output is its standard output and error, the first 64 KiB.
	Output []byte
	// ExitCode is its exit status; meaningful only when Err is nil.
	ExitCode int
	// Err says it could not be started or did not finish in time.
	Err error
}

// CommandProgram runs the executable at path with no arguments, killing it
// (and anything it started) after timeout.
func CommandProgram(path string, timeout time.Duration) Program {
	return func(ctx context.Context) ProgramResult {
		ctx, cancel := context.WithTimeout(ctx, timeout)
		defer cancel()
		out := discover.NewCappedBuffer(maxProgramOutput)
		cmd := exec.CommandContext(ctx, path)
		cmd.Stdout, cmd.Stderr = out, out
		// A child that keeps the pipe open must not hold us past the kill.
		cmd.WaitDelay = time.Second
		killGroupOnCancel(cmd)
		err := cmd.Run()
		res := ProgramResult{Output: out.Bytes()}
		var exit *exec.ExitError
		switch {
		case ctx.Err() != nil:
			res.Err = errors.Newf("%s was killed after %s", path, timeout)
		case errors.As(err, &exit):
			res.ExitCode = exit.ExitCode()
		case err != nil:
			res.Err = errors.Wrapf(err, "running %s", path)
		}
		return res
	}
}

// Verdict is what a health-check program run says.
type Verdict struct {
	// Node is the node-level reason; "" when the node as a whole is fine.
	Node string
	// GPUs are the GPUs the program named ("gpu <index|uuid>: <reason>").
	GPUs []NamedGPU
}

// NamedGPU is one "gpu <ref>: <reason>" line: Ref is an index or a UUID.
type NamedGPU struct {
	Ref    string
	Reason string
}

var gpuLine = regexp.MustCompile(`(?i)^gpu\s+([0-9]{1,4}|GPU-[0-9A-Fa-f-]{8,64})\s*:\s*(.*)$`)

// JudgeProgram reads a run of the health-check program by the convention in
// the package documentation.
func JudgeProgram(res ProgramResult) Verdict {
	if res.Err != nil {
		return Verdict{Node: "health-check program: " + cleanN(res.Err.Error(), maxReason)}
	}
	if res.ExitCode == 0 {
		return Verdict{}
	}
	var v Verdict
	first := ""
	for _, raw := range bytes.Split(res.Output, []byte("\n")) {
		line := strings.TrimSpace(string(raw))
		if line == "" {
			continue
		}
		if first == "" {
			first = line
		}
		if m := gpuLine.FindStringSubmatch(line); m != nil {
			reason := cleanN(m[2], maxReason)
			if reason == "" {
				reason = "named by the health-check program"
			}
			v.GPUs = append(v.GPUs, NamedGPU{Ref: m[1], Reason: "health-check program: " + reason})
		}
	}
	if len(v.GPUs) > 0 {
		return v
	}
	if first == "" {
		v.Node = fmt.Sprintf("health-check program exited %d with no output", res.ExitCode)
	} else {
		v.Node = fmt.Sprintf("health-check program (exit %d): %s", res.ExitCode, cleanN(first, maxReason))
	}
	return v
}

// matches reports whether the program's ref names GPU index/uuid.
func (n NamedGPU) matches(index int, uuid string) bool {
	if strings.HasPrefix(strings.ToUpper(n.Ref), "GPU-") {
		return strings.EqualFold(n.Ref, uuid)
	}
	i, err := strconv.Atoi(n.Ref)
	return err == nil && i == index
}
