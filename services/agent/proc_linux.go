package agent

import (
	"os/exec"
	"syscall"

	"github.com/cockroachdb/errors"
	"golang.org/x/sys/unix"
)

// procAttr puts each rank in its own process group (so a stop reaches its
// children too) and has the kernel kill it if the agent dies: ranks never
// outlive their agent.
func procAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}

// signalGroup signals a rank's whole process group.
func signalGroup(p *exec.Cmd, sig syscall.Signal) {
	if p.Process != nil {
		_ = syscall.Kill(-p.Process.Pid, sig)
	}
}

// pin binds a started rank to its cores (gpuBind closest / cpusPerTask).
// The window between exec and pinning is the rank's first instructions;
// everything it starts afterwards inherits the mask.
func pin(p *exec.Cmd, cpus []int) error {
	if len(cpus) == 0 || p.Process == nil {
		return nil
	}
	var set unix.CPUSet
	for _, c := range cpus {
		set.Set(c)
	}
	return errors.Wrapf(unix.SchedSetaffinity(p.Process.Pid, &set), "pin rank to cores %v", cpus)
}
