package agent

import (
	"os/exec"
	"runtime"
	"slices"
	"unsafe"

	"github.com/cockroachdb/errors"
	"golang.org/x/sys/unix"
)

// rankPin is where a rank runs: its cores (gpuBind closest / cpusPerTask)
// and the NUMA nodes its memory comes from (those of its cores). Empty
// fields pin nothing.
type rankPin struct {
	cpus, mems []int
}

// startPinned starts a rank already bound to its cores and memory nodes,
// as Slurm's task/affinity does. A child inherits the CPU affinity and the
// memory policy of the thread that forks it, and keeps both across exec,
// so the forking thread takes the rank's for the fork and gets its own back
// after: nothing of the rank runs unpinned, not even the threads its
// runtime starts first. (Pinning after the start left that window open, and
// sched_setaffinity on a pid reaches only its main thread.) A pin this
// machine cannot honour — a simulated node claiming cores or NUMA nodes
// there are not — starts the rank unpinned in that respect and says so in
// pinErr.
func startPinned(cmd *exec.Cmd, pin rankPin) (pinErr, err error) {
	if len(pin.cpus) == 0 && len(pin.mems) == 0 {
		return nil, cmd.Start()
	}
	runtime.LockOSThread()
	// A thread whose own mask or policy could not be restored stays locked
	// to this goroutine: the runtime then never runs another goroutine on
	// it, and ends it when this goroutine exits.
	restored := true
	defer func() {
		if restored {
			runtime.UnlockOSThread()
		}
	}()
	var restores []func() error
	apply := func(ids []int, set func([]int) (func() error, error)) {
		if len(ids) == 0 {
			return
		}
		restore, err := set(ids)
		if err != nil {
			pinErr = errors.CombineErrors(pinErr, err)
			return
		}
		restores = append(restores, restore)
	}
	apply(pin.cpus, setAffinity)
	apply(pin.mems, bindMemory)
	// The child takes this thread's mask and policy at the fork; then the
	// thread gets its own back, the last one set first.
	err = cmd.Start()
	for _, restore := range slices.Backward(restores) {
		if rerr := restore(); rerr != nil {
			// Not expected: it is the mask or policy this thread had.
			restored = false
			pinErr = errors.CombineErrors(pinErr, rerr)
		}
	}
	return pinErr, err
}

// setAffinity pins the calling (locked) thread to cpus; restore puts its
// own mask back.
func setAffinity(cpus []int) (restore func() error, err error) {
	var own unix.CPUSet
	if err := unix.SchedGetaffinity(0, &own); err != nil {
		return nil, errors.Wrap(err, "read the agent thread's cores")
	}
	var set unix.CPUSet
	for _, c := range cpus {
		set.Set(c)
	}
	if err := unix.SchedSetaffinity(0, &set); err != nil {
		return nil, errors.Wrapf(err, "pin rank to cores %v", cpus)
	}
	return func() error {
		return errors.Wrap(unix.SchedSetaffinity(0, &own), "restore the agent thread's cores")
	}, nil
}

// Memory policy modes (linux/mempolicy.h); x/sys/unix does not name them.
const (
	mpolDefault = 0
	mpolBind    = 2
)

// maxNUMANodes bounds the node masks: Linux's MAX_NUMNODES is at most 1024.
const maxNUMANodes = 1024

type nodeMask [maxNUMANodes / 64]uint64

// bindMemory binds the calling (locked) thread's future allocations, and so
// a child's, to the NUMA nodes mems (MPOL_BIND, like numactl --membind and
// a cpuset's mems); restore puts the thread's own policy back.
func bindMemory(mems []int) (restore func() error, err error) {
	var own nodeMask
	var mode int
	if err := getMempolicy(&mode, &own); err != nil {
		return nil, errors.Wrap(err, "read the agent thread's memory policy")
	}
	var mask nodeMask
	for _, n := range mems {
		if n < 0 || n >= maxNUMANodes {
			return nil, errors.Newf("bind rank memory: NUMA node %d is out of range", n)
		}
		mask[n/64] |= 1 << (n % 64)
	}
	if err := setMempolicy(mpolBind, &mask); err != nil {
		return nil, errors.Wrapf(err, "bind rank memory to NUMA nodes %v", mems)
	}
	return func() error {
		m := &own
		if mode == mpolDefault {
			m = nil
		}
		return errors.Wrap(setMempolicy(mode, m), "restore the agent thread's memory policy")
	}, nil
}

func setMempolicy(mode int, mask *nodeMask) error {
	var p unsafe.Pointer
	var n uintptr
	if mask != nil {
		// maxnode counts one past the mask's bits (the kernel drops one).
		p, n = unsafe.Pointer(mask), maxNUMANodes+1
	}
	if _, _, e := unix.Syscall(unix.SYS_SET_MEMPOLICY, uintptr(mode), uintptr(p), n); e != 0 {
		return e
	}
	return nil
}

func getMempolicy(mode *int, mask *nodeMask) error {
	var m int32
	if _, _, e := unix.Syscall6(unix.SYS_GET_MEMPOLICY, uintptr(unsafe.Pointer(&m)), uintptr(unsafe.Pointer(mask)), maxNUMANodes+1, 0, 0, 0); e != 0 {
		return e
	}
	*mode = int(m)
	return nil
}
