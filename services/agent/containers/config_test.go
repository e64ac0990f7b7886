package containers

import (
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
			if hc.CpusetCpus != "" || hc.DeviceRequests != nil || hc.Mounts != nil {
				t.Errorf("unpinned rank got cpuset %q devices %v mounts %v", hc.CpusetCpus, hc.DeviceRequests, hc.Mounts)
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
		{"pinned", func(r *Rank) { r.CPUs, r.Mems = []int{8, 9, 10, 11}, []int{1} }, func(t *testing.T, _ *container.Config, hc *container.HostConfig) {
			if hc.CpusetCpus != "8,9,10,11" || hc.CpusetMems != "1" {
				t.Errorf("cpuset %q mems %q", hc.CpusetCpus, hc.CpusetMems)
			}
		}},
		{"gpus by uuid", func(r *Rank) { r.GPUs = []string{"GPU-aaa", "GPU-bbb"} }, func(t *testing.T, _ *container.Config, hc *container.HostConfig) {
			want := []container.DeviceRequest{{DeviceIDs: []string{"GPU-aaa", "GPU-bbb"}, Capabilities: [][]string{{"gpu"}}}}
			if !reflect.DeepEqual(hc.DeviceRequests, want) {
				t.Errorf("device requests %+v", hc.DeviceRequests)
			}
		}},
		{"mounts, workdir, shm", func(r *Rank) {
			r.Mounts = []jobspec.Mount{{Source: "/data", Target: "/data", ReadOnly: true}, {Source: "/scratch/a", Target: "/out"}}
			r.Workdir, r.ShmSize = "/workspace", 1<<30
		}, func(t *testing.T, cfg *container.Config, hc *container.HostConfig) {
			want := []mount.Mount{{Type: mount.TypeBind, Source: "/data", Target: "/data", ReadOnly: true}, {Type: mount.TypeBind, Source: "/scratch/a", Target: "/out"}}
			if !reflect.DeepEqual(hc.Mounts, want) || cfg.WorkingDir != "/workspace" || hc.ShmSize != 1<<30 {
				t.Errorf("mounts %+v workdir %q shm %d", hc.Mounts, cfg.WorkingDir, hc.ShmSize)
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
