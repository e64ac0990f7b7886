package containers

import (
	"fmt"
	"hash/fnv"
	"path"
	"regexp"
	"strconv"
	"strings"

	"github.com/cockroachdb/errors"
	"github.com/moby/moby/api/types/container"
	"github.com/moby/moby/api/types/mount"
	"github.com/moby/moby/client"

	"github.com/lockstep-dev/lockstep/shared/contract/jobspec"
)

// Labels every container the agent makes carries: Marker says Lockstep
// made it; the rest say whose rank it runs, so a restarted agent finds
// its own (Reap).
const (
	LabelMarker  = "dev.lockstep.rank-container"
	LabelJob     = "dev.lockstep.job"
	LabelAttempt = "dev.lockstep.attempt"
	LabelRank    = "dev.lockstep.rank"
	LabelNode    = "dev.lockstep.node"
	// LabelScope is the agent's data directory: two agents sharing an
	// engine (a dev cluster's, or two clusters on one machine) never take
	// each other's containers for leftovers, while a restarted agent,
	// with the same directory, finds its own.
	LabelScope = "dev.lockstep.scope"
)

// Rank is everything one rank's container is made from, decided by the
// agent (its checks of the assignment, its pinning, its rank environment).
type Rank struct {
	Job     string
	Attempt int
	Rank    int
	// Task names a container that is not a rank's: a batch job's script
	// ("batch") or one task of an srun step ("s2t5"); "" for a rank.
	Task string
	Node string
	// Scope is the agent's data directory (LabelScope).
	Scope   string
	Image   string
	Command []string
	// Env is the whole rank environment, KEY=value.
	Env []string
	// Workdir is the working directory in the container ("" = image's).
	Workdir string
	// Mounts are bind mounts: the spec's, and the agent's own (the
	// attempt's directory, the ack socket) at their host paths.
	Mounts []jobspec.Mount
	// CPUs and Mems are the rank's cores and memory nodes (nil: unpinned).
	CPUs, Mems []int
	// GPUs are the rank's GPUs as the engine's device driver names them
	// (UUIDs); nil: no GPU is passed through (a simulated node).
	GPUs []string
	// Devices are host device files passed through at the same path: the
	// closest NICs' RDMA devices (RDMADevices); nil: none.
	Devices []string
	// User is uid:gid inside the container.
	User string
	// ShmSize, when > 0, gives the container its own IPC namespace with a
	// /dev/shm of this many bytes. Only for a node's only rank of the job
	// (a per-node launcher such as torchrun, whose workers share the
	// container): ranks of one job in separate containers share the
	// host's IPC namespace, which NCCL and CUDA IPC between them need,
	// and whose /dev/shm the engine cannot size.
	ShmSize int64
	// MemoryBytes is the container's memory limit (MemoryShare; 0: none).
	MemoryBytes int64
}

// Name is the container's name: unique per agent (node and scope) and
// attempt, readable in `docker ps`.
func Name(r Rank) string {
	h := fnv.New32a()
	_, _ = h.Write([]byte(r.Scope))
	what := "r" + strconv.Itoa(r.Rank)
	if r.Task != "" {
		what = nameSafe(r.Task)
	}
	return fmt.Sprintf("lockstep-%s-a%d-%s-%s-%08x", nameSafe(r.Job), r.Attempt, what, nameSafe(r.Node), h.Sum32())
}

var notNameChar = regexp.MustCompile(`[^a-zA-Z0-9_.-]`)

func nameSafe(s string) string { return notNameChar.ReplaceAllString(s, "_") }

// Labels are the labels of r's container.
func Labels(r Rank) map[string]string {
	return map[string]string{LabelMarker: "true", LabelJob: r.Job, LabelAttempt: strconv.Itoa(r.Attempt),
		LabelRank: strconv.Itoa(r.Rank), LabelNode: r.Node, LabelScope: r.Scope}
}

// CreateOptions is the engine request that makes r's container.
//
// Host network and IPC: NCCL's sockets and shared-memory transports, and
// CUDA IPC between the node's ranks, need them (IPC is private only for
// a node's only rank with a shmSize, see Rank.ShmSize). Init: the engine's init is
// PID 1 and forwards the checkpoint and stop signals to the rank, which
// as PID 1 would ignore any it has no handler for. RDMA devices come with
// an unlimited memlock limit: verbs pin the buffers they register, and the
// engine's default (64 KiB) fails the first registration.
func CreateOptions(r Rank) client.ContainerCreateOptions {
	init := true
	ipc, shm := container.IpcMode("host"), int64(0)
	if r.ShmSize > 0 {
		ipc, shm = "private", r.ShmSize
	}
	hc := &container.HostConfig{
		NetworkMode: "host",
		IpcMode:     ipc,
		Init:        &init,
		ShmSize:     shm,
		Resources: container.Resources{
			CpusetCpus: cpuList(r.CPUs),
			CpusetMems: cpuList(r.Mems),
			Memory:     r.MemoryBytes,
		},
	}
	// A rank never gains privileges it did not start with: no setuid or
	// file-capability binary of the image (a user's image can hold any)
	// raises it, and a rank not run as root holds no capability at all, so
	// a host path it may bind stays as writable as its uid makes it.
	hc.SecurityOpt = []string{"no-new-privileges"}
	if !strings.HasPrefix(r.User+":", "0:") {
		hc.CapDrop = []string{"ALL"}
	}
	for _, m := range r.Mounts {
		hc.Mounts = append(hc.Mounts, mount.Mount{Type: mount.TypeBind, Source: m.Source, Target: m.Target, ReadOnly: m.ReadOnly})
	}
	for _, d := range r.Devices {
		hc.Devices = append(hc.Devices, container.DeviceMapping{PathOnHost: d, PathInContainer: d, CgroupPermissions: "rwm"})
	}
	if len(r.Devices) > 0 {
		hc.Ulimits = []*container.Ulimit{{Name: "memlock", Soft: -1, Hard: -1}}
	}
	if len(r.GPUs) > 0 {
		hc.DeviceRequests = []container.DeviceRequest{{DeviceIDs: r.GPUs, Capabilities: [][]string{{"gpu"}}}}
	}
	// The NVIDIA runtime also reads which GPUs to give from the container's
	// environment, which the image (CUDA images say "all") or the spec may
	// set: an engine whose default runtime is NVIDIA's would give every GPU
	// of the node. It names the rank's own, or none, whatever was given
	// (a duplicate would not do: a process reads the first of two).
	visible := "void"
	if len(r.GPUs) > 0 {
		visible = strings.Join(r.GPUs, ",")
	}
	env := make([]string, 0, len(r.Env)+1)
	for _, kv := range r.Env {
		if !strings.HasPrefix(kv, nvidiaVisibleDevices+"=") {
			env = append(env, kv)
		}
	}
	env = append(env, nvidiaVisibleDevices+"="+visible)
	return client.ContainerCreateOptions{
		Name: Name(r),
		Config: &container.Config{
			Image:      r.Image,
			Entrypoint: r.Command[:1],
			Cmd:        r.Command[1:],
			Env:        env,
			WorkingDir: r.Workdir,
			User:       r.User,
			Labels:     Labels(r),
			// Output is attached before start, never a terminal.
			AttachStdout: true,
			AttachStderr: true,
		},
		HostConfig: hc,
	}
}

// nvidiaVisibleDevices is the NVIDIA container runtime's variable naming
// the GPUs a container gets ("void": none, the runtime stands aside).
const nvidiaVisibleDevices = "NVIDIA_VISIBLE_DEVICES"

// Within says whether path is dir or lies below it, as paths (/data2 is
// not within /data).
func Within(path, dir string) bool {
	return path == dir || strings.HasPrefix(path, strings.TrimSuffix(dir, "/")+"/")
}

// cpuList writes ids as the engine's cpuset ("0,1,5"; "" for none).
func cpuList(ids []int) string {
	s := make([]string, len(ids))
	for i, id := range ids {
		s[i] = strconv.Itoa(id)
	}
	return strings.Join(s, ",")
}

// Sharing is how the ranks' containers of an agent that itself runs in a
// container (the compose cluster's nodes) reach what the agent has: they
// join its network and IPC namespaces instead of the host's (the names of
// the agent's network resolve, MASTER_ADDR included, and its ranks share
// one IPC namespace as on a host), and mount its data directory's volume
// instead of binding the agent's own paths from the host, where they are
// not. That volume only: not all of the agent's (VolumesFrom), which hold
// its credentials and, in compose, the engine's socket. The zero value
// shares nothing.
type Sharing struct {
	// Container is the agent's container, by name or ID.
	Container string
	// DataDir is the agent's data directory, a volume of Container: binds
	// of paths under it (the attempt's directory, the ack socket) are
	// dropped, and the volume is mounted at the same path instead.
	DataDir string
}

// dataMount is what a rank mounts to see the agent's data directory, from
// the agent's container's mounts as the engine reports them.
func (s Sharing) dataMount(mounts []container.MountPoint) (mount.Mount, error) {
	for _, m := range mounts {
		if path.Clean(m.Destination) != path.Clean(s.DataDir) {
			continue
		}
		switch m.Type {
		case mount.TypeVolume:
			return mount.Mount{Type: mount.TypeVolume, Source: m.Name, Target: path.Clean(s.DataDir)}, nil
		case mount.TypeBind:
			return mount.Mount{Type: mount.TypeBind, Source: m.Source, Target: path.Clean(s.DataDir)}, nil
		}
		return mount.Mount{}, errors.Newf("--container-share %s: its --data-dir %s is a %s mount, not a volume or a bind", s.Container, s.DataDir, m.Type)
	}
	return mount.Mount{}, errors.Newf("--container-share %s: --data-dir %s is not one of its volumes", s.Container, s.DataDir)
}

// Apply makes opts share what s says, data being the agent's data
// directory's volume (dataMount); a zero s leaves them as they are.
func (s Sharing) Apply(opts *client.ContainerCreateOptions, data mount.Mount) {
	if s.Container == "" {
		return
	}
	hc := opts.HostConfig
	hc.NetworkMode = container.NetworkMode("container:" + s.Container)
	if hc.IpcMode.IsHost() {
		// The host's IPC namespace is the agent's there; a private one
		// (a per-node launcher's shmSize) stays private.
		hc.IpcMode = container.IpcMode("container:" + s.Container)
	}
	var kept []mount.Mount
	for _, m := range hc.Mounts {
		if s.DataDir != "" && Within(m.Source, s.DataDir) {
			continue
		}
		kept = append(kept, m)
	}
	hc.Mounts = append(kept, data)
}
