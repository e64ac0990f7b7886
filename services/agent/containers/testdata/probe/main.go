// Command probe is the rank of the container tests: it prints the marker
// file only its image has, its environment's RANK, CUDA_VISIBLE_DEVICES
// and LOCKSTEP_CPUS, its CPU affinity, memory limit, /dev/shm size and
// the GPU devices it has; then it waits for SIGTERM when its first
// argument is "wait", runs a script when it is one's interpreter
// (runScript), or exits with the code it names.
package main

import (
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

func main() {
	marker, err := os.ReadFile("/probe-marker")
	fmt.Printf("marker=%q err=%v\n", marker, err)
	for _, k := range []string{"RANK", "CUDA_VISIBLE_DEVICES", "LOCKSTEP_CPUS", "PROBE_EXTRA"} {
		fmt.Printf("%s=%s\n", k, os.Getenv(k))
	}
	var set unix.CPUSet
	if unix.SchedGetaffinity(0, &set) == nil {
		var cpus []int
		for i := range 1024 {
			if set.IsSet(i) {
				cpus = append(cpus, i)
			}
		}
		fmt.Printf("affinity=%v\n", cpus)
	}
	fmt.Printf("uid=%d gid=%d\n", os.Getuid(), os.Getgid())
	// The container's memory limit, as its own cgroup says (v2, else v1).
	for _, f := range []string{"/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"} {
		if max, err := os.ReadFile(f); err == nil {
			fmt.Printf("memory-limit=%s\n", strings.TrimSpace(string(max)))
			break
		}
	}
	// The size of /dev/shm (a private one's is the container's shmSize).
	var shm unix.Statfs_t
	if unix.Statfs("/dev/shm", &shm) == nil {
		fmt.Printf("shm-bytes=%d\n", int64(shm.Blocks)*shm.Bsize)
	}
	// The GPUs the engine passed in: /dev/nvidiaN, one per GPU.
	var gpus []string
	ents, _ := os.ReadDir("/dev")
	for _, e := range ents {
		if n := strings.TrimPrefix(e.Name(), "nvidia"); n != e.Name() && n != "" && strings.Trim(n, "0123456789") == "" {
			gpus = append(gpus, e.Name())
		}
	}
	fmt.Printf("gpu-devices=%v\n", gpus)
	if len(os.Args) > 1 && strings.HasPrefix(os.Args[1], "/") {
		if script, err := os.ReadFile(os.Args[1]); err == nil && strings.HasPrefix(string(script), "#!/probe") {
			os.Exit(runScript(string(script)))
		}
	}
	if len(os.Args) > 1 && os.Args[1] == "wait" {
		ch := make(chan os.Signal, 1)
		signal.Notify(ch, syscall.SIGTERM, syscall.SIGUSR1)
		fmt.Println("waiting")
		s := <-ch
		fmt.Printf("got %v\n", s)
		if s == syscall.SIGUSR1 {
			if ack := os.Getenv("LOCKSTEP_CHECKPOINT_ACK"); ack != "" {
				if err := os.WriteFile(ack, []byte("step=7 path=/ckpt/7\n"), 0o644); err != nil {
					fmt.Println("ack:", err)
					os.Exit(4)
				}
			}
			os.Exit(0)
		}
		os.Exit(3)
	}
	if len(os.Args) > 1 {
		code, _ := strconv.Atoi(os.Args[1])
		os.Exit(code)
	}
}

// runScript is the probe as a batch script's interpreter ("#!/probe";
// its image has no shell): each line that is not a comment is a command,
// its words split on spaces, run in turn; the first that fails ends the
// script with its code.
func runScript(script string) int {
	for _, line := range strings.Split(script, "\n") {
		argv := strings.Fields(line)
		if len(argv) == 0 || strings.HasPrefix(argv[0], "#") {
			continue
		}
		cmd := exec.Command(argv[0], argv[1:]...)
		cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
		if err := cmd.Run(); err != nil {
			fmt.Printf("script: %s: %v\n", line, err)
			if cmd.ProcessState != nil && cmd.ProcessState.ExitCode() > 0 {
				return cmd.ProcessState.ExitCode()
			}
			return 127
		}
	}
	return 0
}
