package containers

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/moby/moby/api/types/container"
	"github.com/moby/moby/api/types/mount"

	"github.com/lockstep-dev/lockstep/shared/contract/jobspec"
)

func TestCreateOptions(t *testing.T) {
	base := Rank{Job: "train-1", Attempt: 2, Rank: 5, Node: "gpu-07.rack1", Scope: "/var/lib/lockstep", Image: "nvcr.io/nvidia/pytorch:24.10-py3",
		Command: []string{"torchrun", "--nproc-per-node=1", "train.py"}, Env: []string{"RANK=5", "WORLD_SIZE=8"},
		User: "1000:1000"}
	for _, c := range []struct {
		name  string
		edit  func(*Rank)
		check func(t *testing.T, cfg *container.Config, hc *container.HostConfig)
	}{
		{"defaults", func(*Rank) {}, func(t *testing.T, cfg *container.Config, hc *container.HostConfig) {
			if hc.NetworkMode != "host" || hc.IpcMode != "host" || hc.Init == nil || !*hc.Init {
				t.Errorf("network %q ipc %q init %v", hc.NetworkMode, hc.IpcMode, hc.Init)
			}
			if hc.Memory != 0 {
				t.Errorf("memory limit %d with no share given", hc.Memory)
			}
			if hc.CpusetCpus != "" || hc.DeviceRequests != nil || hc.Mounts != nil || hc.Devices != nil || hc.Ulimits != nil {
				t.Errorf("unpinned rank got cpuset %q device requests %v mounts %v devices %v ulimits %v", hc.CpusetCpus, hc.DeviceRequests, hc.Mounts, hc.Devices, hc.Ulimits)
			}
			if !reflect.DeepEqual(cfg.Entrypoint, []string{"torchrun"}) || !reflect.DeepEqual(cfg.Cmd, []string{"--nproc-per-node=1", "train.py"}) {
				t.Errorf("entrypoint %v cmd %v", cfg.Entrypoint, cfg.Cmd)
			}
			if cfg.User != "1000:1000" || cfg.Env[0] != "RANK=5" || cfg.Tty {
				t.Errorf("user %q env %v tty %v", cfg.User, cfg.Env, cfg.Tty)
			}
			want := map[string]string{LabelMarker: "true", LabelJob: "train-1", LabelAttempt: "2", LabelRank: "5", LabelNode: "gpu-07.rack1", LabelScope: "/var/lib/lockstep"}
			if !reflect.DeepEqual(cfg.Labels, want) {
				t.Errorf("labels %v", cfg.Labels)
			}
		}},
		{"no privilege gained", func(*Rank) {}, func(t *testing.T, _ *container.Config, hc *container.HostConfig) {
			if !reflect.DeepEqual(hc.SecurityOpt, []string{"no-new-privileges"}) || !reflect.DeepEqual(hc.CapDrop, []string{"ALL"}) {
				t.Errorf("a user's rank: security options %v, capabilities dropped %v", hc.SecurityOpt, hc.CapDrop)
			}
		}},
		{"root where allowed", func(r *Rank) { r.User = "0:0" }, func(t *testing.T, _ *container.Config, hc *container.HostConfig) {
			if !reflect.DeepEqual(hc.SecurityOpt, []string{"no-new-privileges"}) || hc.CapDrop != nil {
				t.Errorf("a root rank (allowRoot): security options %v, capabilities dropped %v", hc.SecurityOpt, hc.CapDrop)
			}
		}},
		{"pinned", func(r *Rank) { r.CPUs, r.Mems = []int{8, 9, 10, 11}, []int{1} }, func(t *testing.T, _ *container.Config, hc *container.HostConfig) {
			if hc.CpusetCpus != "8,9,10,11" || hc.CpusetMems != "1" {
				t.Errorf("cpuset %q mems %q", hc.CpusetCpus, hc.CpusetMems)
			}
		}},
		{"memory share", func(r *Rank) { r.MemoryBytes = 256 << 30 }, func(t *testing.T, _ *container.Config, hc *container.HostConfig) {
			if hc.Memory != 256<<30 {
				t.Errorf("memory limit %d, want %d", hc.Memory, int64(256<<30))
			}
		}},
		{"gpus by uuid", func(r *Rank) {
			r.GPUs = []string{"GPU-aaa", "GPU-bbb"}
			r.Env = append(r.Env, "NVIDIA_VISIBLE_DEVICES=all") // as a CUDA image or the spec may say
		}, func(t *testing.T, cfg *container.Config, hc *container.HostConfig) {
			want := []container.DeviceRequest{{DeviceIDs: []string{"GPU-aaa", "GPU-bbb"}, Capabilities: [][]string{{"gpu"}}}}
			if !reflect.DeepEqual(hc.DeviceRequests, want) {
				t.Errorf("device requests %+v", hc.DeviceRequests)
			}
			if got := envOf(cfg.Env, "NVIDIA_VISIBLE_DEVICES"); !reflect.DeepEqual(got, []string{"GPU-aaa,GPU-bbb"}) {
				t.Errorf("NVIDIA_VISIBLE_DEVICES %v, want the rank's GPUs alone", got)
			}
		}},
		{"no gpus", func(r *Rank) { r.Env = append(r.Env, "NVIDIA_VISIBLE_DEVICES=all") }, func(t *testing.T, cfg *container.Config, _ *container.HostConfig) {
			if got := envOf(cfg.Env, "NVIDIA_VISIBLE_DEVICES"); !reflect.DeepEqual(got, []string{"void"}) {
				t.Errorf("NVIDIA_VISIBLE_DEVICES %v, want void (no GPU)", got)
			}
		}},
		{"rdma devices", func(r *Rank) { r.Devices = []string{"/dev/infiniband/uverbs3", "/dev/infiniband/rdma_cm"} }, func(t *testing.T, _ *container.Config, hc *container.HostConfig) {
			want := []container.DeviceMapping{{PathOnHost: "/dev/infiniband/uverbs3", PathInContainer: "/dev/infiniband/uverbs3", CgroupPermissions: "rwm"},
				{PathOnHost: "/dev/infiniband/rdma_cm", PathInContainer: "/dev/infiniband/rdma_cm", CgroupPermissions: "rwm"}}
			if !reflect.DeepEqual(hc.Devices, want) {
				t.Errorf("devices %+v", hc.Devices)
			}
			if len(hc.Ulimits) != 1 || hc.Ulimits[0].Name != "memlock" || hc.Ulimits[0].Soft != -1 || hc.Ulimits[0].Hard != -1 {
				t.Errorf("ulimits %+v, want memlock unlimited", hc.Ulimits)
			}
		}},
		{"mounts, workdir, shm", func(r *Rank) {
			r.Mounts = []jobspec.Mount{{Source: "/data", Target: "/data", ReadOnly: true}, {Source: "/scratch/a", Target: "/out"}}
			r.Workdir, r.ShmSize = "/workspace", 1<<30
		}, func(t *testing.T, cfg *container.Config, hc *container.HostConfig) {
			want := []mount.Mount{{Type: mount.TypeBind, Source: "/data", Target: "/data", ReadOnly: true}, {Type: mount.TypeBind, Source: "/scratch/a", Target: "/out"}}
			if !reflect.DeepEqual(hc.Mounts, want) || cfg.WorkingDir != "/workspace" || hc.ShmSize != 1<<30 || hc.IpcMode != "private" {
				t.Errorf("mounts %+v workdir %q shm %d ipc %q: want a private 1 GiB /dev/shm", hc.Mounts, cfg.WorkingDir, hc.ShmSize, hc.IpcMode)
			}
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := base
			c.edit(&r)
			opts := CreateOptions(r)
			if !strings.HasPrefix(opts.Name, "lockstep-train-1-a2-r5-gpu-07.rack1-") || len(opts.Name) != len("lockstep-train-1-a2-r5-gpu-07.rack1-")+8 {
				t.Errorf("name %q", opts.Name)
			}
			c.check(t, opts.Config, opts.HostConfig)
		})
	}
}

func TestNameIsSafe(t *testing.T) {
	a, b := Name(Rank{Job: "arr_3", Attempt: 1, Rank: 0, Node: "n 1/x", Scope: "/a"}), Name(Rank{Job: "arr_3", Attempt: 1, Rank: 0, Node: "n 1/x", Scope: "/b"})
	if !strings.HasPrefix(a, "lockstep-arr_3-a1-r0-n_1_x-") || a == b {
		t.Errorf("names %q %q", a, b)
	}
}

// RDMADevices finds each NIC's verbs device through sysfs, adds rdma_cm
// once, and passes nothing that is not on the host: a NIC without a verbs
// device, a device file missing, a name that would leave sysfs.
func TestRDMADevices(t *testing.T) {
	root := t.TempDir()
	mk := func(path string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Join(root, path), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for nic, dev := range map[string]string{"mlx5_0": "uverbs0", "mlx5_3": "uverbs3", "mlx5_9": "uverbs9"} {
		mk(filepath.Join("sys/class/infiniband", nic, "device/infiniband_verbs", dev))
	}
	mk("sys/class/infiniband/eth_only/device")                      // no verbs driver
	for _, dev := range []string{"uverbs0", "uverbs3", "rdma_cm"} { // no uverbs9 in /dev
		mk(filepath.Join("dev/infiniband", dev))
	}
	for _, c := range []struct {
		nics []string
		want []string
	}{
		{[]string{"mlx5_3", "mlx5_0"}, []string{"/dev/infiniband/uverbs3", "/dev/infiniband/uverbs0", "/dev/infiniband/rdma_cm"}},
		{[]string{"mlx5_3", "mlx5_3"}, []string{"/dev/infiniband/uverbs3", "/dev/infiniband/rdma_cm"}},
		{[]string{"mlx5_9", "eth_only", "absent", "../../../dev", ".."}, nil},
		{nil, nil},
	} {
		if got := RDMADevices(root, c.nics); !reflect.DeepEqual(got, c.want) {
			t.Errorf("RDMADevices(%v) = %v, want %v", c.nics, got, c.want)
		}
	}
}

// Sharing.Apply: the zero value changes nothing; otherwise network and
// IPC come from the agent's container, binds under its data directory are
// dropped and its data volume mounted instead, and none of its other
// volumes (its credentials, the engine's socket) comes along.
func TestSharingApply(t *testing.T) {
	r := Rank{Job: "j", Image: "img", Command: []string{"x"}, Mounts: []jobspec.Mount{
		{Source: "/var/lib/lockstep/jobs/j/1", Target: "/var/lib/lockstep/jobs/j/1"}, {Source: "/var/lib/lockstep/agent.sock", Target: "/var/lib/lockstep/agent.sock"},
		{Source: "/var/lib/lockstep2", Target: "/x"}, {Source: "/datasets", Target: "/data", ReadOnly: true}}}
	opts := CreateOptions(r)
	Sharing{}.Apply(&opts, mount.Mount{})
	if !reflect.DeepEqual(opts, CreateOptions(r)) {
		t.Errorf("the zero Sharing changed the options: %+v", opts.HostConfig)
	}
	share := Sharing{Container: "lockstep-node-01", DataDir: "/var/lib/lockstep/"}
	data, err := share.dataMount([]container.MountPoint{
		{Type: mount.TypeBind, Source: "/srv/secrets", Destination: "/etc/lockstep"},
		{Type: mount.TypeBind, Source: "/var/run/docker.sock", Destination: "/var/run/docker.sock"},
		{Type: mount.TypeVolume, Name: "node-01-data", Source: "/var/lib/docker/volumes/node-01-data/_data", Destination: "/var/lib/lockstep"},
	})
	if err != nil {
		t.Fatal(err)
	}
	share.Apply(&opts, data)
	hc := opts.HostConfig
	if hc.NetworkMode != "container:lockstep-node-01" || hc.IpcMode != "container:lockstep-node-01" || len(hc.VolumesFrom) != 0 {
		t.Errorf("network %q ipc %q volumes from %v", hc.NetworkMode, hc.IpcMode, hc.VolumesFrom)
	}
	want := []mount.Mount{{Type: mount.TypeBind, Source: "/var/lib/lockstep2", Target: "/x"}, {Type: mount.TypeBind, Source: "/datasets", Target: "/data", ReadOnly: true},
		{Type: mount.TypeVolume, Source: "node-01-data", Target: "/var/lib/lockstep"}}
	if !reflect.DeepEqual(hc.Mounts, want) {
		t.Errorf("mounts %+v, want %+v", hc.Mounts, want)
	}
	// A per-node launcher's private IPC (its shmSize) stays private.
	r.ShmSize = 1 << 30
	opts = CreateOptions(r)
	Sharing{Container: "lockstep-node-01"}.Apply(&opts, data)
	if opts.HostConfig.IpcMode != "private" || opts.HostConfig.ShmSize != 1<<30 {
		t.Errorf("shared launcher container: ipc %q shm %d, want private with 1 GiB", opts.HostConfig.IpcMode, opts.HostConfig.ShmSize)
	}
}

// A data directory that is not one of the agent's container's mounts is
// said so, naming both flags.
func TestSharingDataDirMustBeAVolume(t *testing.T) {
	share := Sharing{Container: "node-01", DataDir: "/var/lib/lockstep"}
	_, err := share.dataMount([]container.MountPoint{{Type: mount.TypeBind, Source: "/srv", Destination: "/srv"}})
	if err == nil || !strings.Contains(err.Error(), "--data-dir /var/lib/lockstep is not one of its volumes") {
		t.Errorf("got %v", err)
	}
}

// envOf is every value env gives name, in order.
func envOf(env []string, name string) []string {
	var out []string
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, name+"="); ok {
			out = append(out, v)
		}
	}
	return out
}
