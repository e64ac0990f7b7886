//go:build unix

package health

import (
	"os/exec"
	"syscall"
)

// killGroupOnCancel starts the program in its own process group and kills
// the whole group at the timeout: a health-check script's children (a hung
// nvidia-smi, say) must die with it.
func killGroupOnCancel(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
}
