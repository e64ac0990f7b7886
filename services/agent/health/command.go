package health

import (
	"context"
	"os/exec"
	"strings"
	"time"

	"github.com/cockroachdb/errors"

	"github.com/lockstep-dev/lockstep/services/agent/discover"
)

// Command runs the nvidia-smi at path for polls. Unlike
// discover.CommandSMI it returns what nvidia-smi printed (standard output,
// then standard error) together with the error when it exits non-zero: with
// one GPU fallen off the bus nvidia-smi fails (NVML's GPU_IS_LOST is 15) yet
// still lists the other GPUs and names the lost one, and the Checker needs
// all of that. Output beyond 1 MiB is dropped.
func Command(path string) discover.SMI {
	return func(ctx context.Context, args ...string) ([]byte, error) {
		stdout := discover.NewCappedBuffer(maxOutput)
		stderr := discover.NewCappedBuffer(maxOutput)
		cmd := exec.CommandContext(ctx, path, args...)
		cmd.Stdout, cmd.Stderr = stdout, stderr
		// Killed at the deadline, a wedged nvidia-smi must not hold the poll
		// through a pipe something else still has open.
		cmd.WaitDelay = time.Second
		err := cmd.Run()
		out := append(stdout.Bytes(), stderr.Bytes()...)
		if err != nil {
			return out, errors.Wrapf(err, "%s %s", path, strings.Join(args, " "))
		}
		return out, nil
	}
}
