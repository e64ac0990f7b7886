package agent

import (
	"os/exec"
	"runtime"

	"github.com/cockroachdb/errors"
	"golang.org/x/sys/unix"
)

// startPinned starts a rank already bound to its cores (gpuBind closest /
// cpusPerTask). A child inherits the affinity of the thread that forks it,
// so the forking thread takes the rank's mask for the fork and gets its own
// back after: nothing of the rank runs unpinned, not even the threads its
// runtime starts first. (Pinning after the start left that window open, and
// sched_setaffinity on a pid reaches only its main thread.) A mask this
// machine cannot honour — a simulated node claiming more cores than there
// are — starts the rank unpinned and says so in pinErr.
func startPinned(cmd *exec.Cmd, cpus []int) (pinErr, err error) {
	if len(cpus) == 0 {
		return nil, cmd.Start()
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	var own unix.CPUSet
	if err := unix.SchedGetaffinity(0, &own); err != nil {
		return errors.Wrap(err, "read the agent thread's cores"), cmd.Start()
	}
	var set unix.CPUSet
	for _, c := range cpus {
		set.Set(c)
	}
	if err := unix.SchedSetaffinity(0, &set); err != nil {
		return errors.Wrapf(err, "pin rank to cores %v", cpus), cmd.Start()
	}
	err = cmd.Start()
	if rerr := unix.SchedSetaffinity(0, &own); rerr != nil {
		// Not expected (it is the mask this thread had); the thread then
		// runs other goroutines on fewer cores, which is slow, not wrong.
		pinErr = errors.Wrap(rerr, "restore the agent thread's cores")
	}
	return pinErr, err
}
