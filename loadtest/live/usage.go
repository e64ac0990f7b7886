package live

import (
	"bufio"
	"os"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Usage is the process's resource use during the load phase. With the
// embedded cluster the process holds NATS, etcd, the four services and the
// harness (virtual agents, submitter, event follower) alike: the figures
// are an upper bound for the services. External clusters are not
// measured (Measured false).
type Usage struct {
	Measured    bool    `json:"measured"`
	WallSeconds float64 `json:"wallS"`
	CPUSeconds  float64 `json:"cpuS"`
	// Cores is CPU seconds per wall second.
	Cores float64 `json:"cores"`
	// Peak Go heap in use, Go runtime memory obtained from the OS, and the
	// process's peak resident set (VmHWM), in MiB.
	PeakHeapMiB float64 `json:"peakHeapMiB"`
	PeakSysMiB  float64 `json:"peakSysMiB"`
	PeakRSSMiB  float64 `json:"peakRSSMiB"`
	// GCPercent is the GOGC the process ran with (lockstep's default is
	// 400; the GOGC environment variable overrides it).
	GCPercent int `json:"gcPercent"`
}

type usageSampler struct {
	start time.Time
	cpu0  time.Duration
	stopC chan struct{}
	wg    sync.WaitGroup
	mu    sync.Mutex
	heap  uint64
	sys   uint64
}

func startUsage() *usageSampler {
	u := &usageSampler{start: time.Now(), cpu0: cpuTime(), stopC: make(chan struct{})}
	u.wg.Add(1)
	go func() {
		defer u.wg.Done()
		t := time.NewTicker(500 * time.Millisecond)
		defer t.Stop()
		for {
			u.sample()
			select {
			case <-u.stopC:
				return
			case <-t.C:
			}
		}
	}()
	return u
}

func (u *usageSampler) sample() {
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	u.mu.Lock()
	u.heap = max(u.heap, ms.HeapInuse)
	u.sys = max(u.sys, ms.Sys)
	u.mu.Unlock()
}

func (u *usageSampler) stop(measured bool) Usage {
	close(u.stopC)
	u.wg.Wait()
	u.sample()
	wall := time.Since(u.start).Seconds()
	cpu := (cpuTime() - u.cpu0).Seconds()
	if !measured {
		return Usage{WallSeconds: wall}
	}
	const mib = 1 << 20
	return Usage{
		Measured: true, WallSeconds: wall, CPUSeconds: cpu, Cores: cpu / wall,
		PeakHeapMiB: float64(u.heap) / mib, PeakSysMiB: float64(u.sys) / mib, PeakRSSMiB: peakRSS() / mib,
		GCPercent: gcPercent(),
	}
}

// gcPercent reads the GOGC in force (the runtime only reports it when it
// is set, so it is set to itself).
func gcPercent() int {
	p := debug.SetGCPercent(-1)
	debug.SetGCPercent(p)
	return p
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// peakRSS reads VmHWM from /proc/self/status, in bytes (0 if unknown).
func peakRSS() float64 {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "VmHWM:"); ok {
			fields := strings.Fields(rest)
			if len(fields) > 0 {
				kb, _ := strconv.ParseFloat(fields[0], 64)
				return kb * 1024
			}
		}
	}
	return 0
}
