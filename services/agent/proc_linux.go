package agent

import (
	"os/exec"
	"syscall"
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
