package containers

import (
	"bytes"
	"context"
	"io"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cockroachdb/errors"
	"github.com/moby/moby/api/types/container"
	"github.com/moby/moby/api/types/mount"
	"github.com/moby/moby/client"

	"github.com/lockstep-dev/lockstep/shared/contract/jobspec"
)

// syncBuf is an io.Writer the test reads while the engine writes.
type syncBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuf) Write(p []byte) (int, error) { s.mu.Lock(); defer s.mu.Unlock(); return s.b.Write(p) }
func (s *syncBuf) String() string              { s.mu.Lock(); defer s.mu.Unlock(); return s.b.String() }

const probeTag = "lockstep-probe:test"

// engine connects to the local engine and builds the probe image, or
// skips the test when no engine answers.
func engine(t *testing.T) *Docker {
	t.Helper()
	d, err := ProbeEngine(t.Context(), probeTag)
	if errors.Is(err, ErrNoEngine) {
		t.Skipf("%v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = d.Close() })
	return d
}

// A rank container runs the image's binary with its env and cpuset, its
// output reaches the writers, SIGTERM reaches it through init, and its
// exit code is the rank's.
func TestDockerRankLifecycle(t *testing.T) {
	d := engine(t)
	ctx := t.Context()
	node := "ctest-" + strings.ReplaceAll(t.Name(), "/", "_")
	r := Rank{Job: "lifecycle", Attempt: 1, Rank: 3, Node: node, Image: probeTag, Command: []string{"/probe", "wait"},
		Env: []string{"RANK=3", "CUDA_VISIBLE_DEVICES=6", "LOCKSTEP_CPUS=0"}, CPUs: []int{0}, User: "65534:65534"}
	var out, errOut syncBuf
	id, copied, err := d.Start(ctx, CreateOptions(r), &out, &errOut)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = d.Remove(context.WithoutCancel(ctx), id) })
	deadline := time.Now().Add(30 * time.Second)
	for !strings.Contains(out.String(), "waiting") && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if err := d.Signal(ctx, id, "SIGTERM"); err != nil {
		t.Fatal(err)
	}
	code, err := d.Wait(ctx, id)
	if err != nil || code != 3 {
		t.Fatalf("exit %d, %v; output %s", code, err, out.String())
	}
	<-copied
	got := out.String()
	for _, want := range []string{`marker="` + ProbeMarker + `"`, "RANK=3", "CUDA_VISIBLE_DEVICES=6", "affinity=[0]", "uid=65534 gid=65534", "got terminated"} {
		if !strings.Contains(got, want) {
			t.Errorf("output lacks %q:\n%s", want, got)
		}
	}
	if err := d.Remove(ctx, id); err != nil {
		t.Fatal(err)
	}
	if owned, _ := d.Owned(ctx, node, ""); len(owned) != 0 {
		t.Errorf("left after remove: %+v", owned)
	}
}

// A container the engine made but could not start (its command, run
// without init, does not exist in the image) is removed: nothing of a
// failed start is left.
func TestDockerFailedStartLeavesNothing(t *testing.T) {
	d := engine(t)
	ctx := t.Context()
	node := "ctest-" + strings.ReplaceAll(t.Name(), "/", "_")
	r := Rank{Job: "nostart", Attempt: 1, Node: node, Image: probeTag, Command: []string{"/no-such-binary"}, User: "65534:65534"}
	opts := CreateOptions(r)
	noInit := false
	opts.HostConfig.Init = &noInit // else init starts and the missing command only makes it exit
	if id, _, err := d.Start(ctx, opts, io.Discard, io.Discard); err == nil {
		_ = d.Remove(context.WithoutCancel(ctx), id)
		t.Fatal("a container without its command started")
	}
	if owned, err := d.Owned(ctx, node, ""); err != nil || len(owned) != 0 {
		t.Errorf("left after a failed start: %+v (%v)", owned, err)
	}
}

// Never with a missing image fails naming it; IfNotPresent with a present
// image does not pull.
func TestDockerEnsure(t *testing.T) {
	d := engine(t)
	_, err := d.Ensure(t.Context(), "lockstep-no-such-image:never", "Never")
	if err == nil || !strings.Contains(err.Error(), "image lockstep-no-such-image:never is not on this node") {
		t.Fatalf("Never, missing: %v", err)
	}
	pulled, err := d.Ensure(t.Context(), probeTag, "IfNotPresent")
	if err != nil || pulled {
		t.Fatalf("IfNotPresent, present: pulled %v, %v", pulled, err)
	}
	if _, err := d.Ensure(t.Context(), "lockstep-no-such-image:x", "IfNotPresent"); err == nil {
		t.Fatal("pull of an image no registry has succeeded")
	}
}

// Reap removes the node's containers of attempts it is not told to keep,
// and only those of the node's agent (node and scope).
func TestDockerReap(t *testing.T) {
	d := engine(t)
	ctx := t.Context()
	mk := func(node, scope, job string, attempt int) string {
		r := Rank{Job: job, Attempt: attempt, Node: node, Scope: scope, Image: probeTag, Command: []string{"/probe", "wait"}}
		res, err := d.c.ContainerCreate(ctx, CreateOptions(r))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := d.c.ContainerStart(ctx, res.ID, client.ContainerStartOptions{}); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = d.Remove(context.WithoutCancel(ctx), res.ID) })
		return res.ID
	}
	stale, kept := mk("reap-n1", "/a", "old", 1), mk("reap-n1", "/a", "live", 2)
	other, otherScope := mk("reap-n2", "/a", "old", 1), mk("reap-n1", "/b", "old", 1)
	n, err := Reap(ctx, d, "reap-n1", "/a", func(job string, attempt int) bool { return job == "live" && attempt == 2 })
	if err != nil || n != 1 {
		t.Fatalf("reaped %d, %v", n, err)
	}
	left := map[string]bool{}
	for _, o := range [][2]string{{"reap-n1", "/a"}, {"reap-n2", "/a"}, {"reap-n1", "/b"}} {
		owned, _ := d.Owned(ctx, o[0], o[1])
		for _, o := range owned {
			left[o.ID] = true
		}
	}
	if left[stale] || !left[kept] || !left[other] || !left[otherScope] {
		t.Errorf("after reap: stale %v kept %v other node's %v other agent's %v", left[stale], left[kept], left[other], left[otherScope])
	}
}

// A rank of an agent that runs in a container itself shares that
// container's network, IPC and data volume (the rank writes its ack file
// there), none of its other volumes, and the binds of the agent's paths,
// not on the host, are dropped.
func TestDockerSharing(t *testing.T) {
	d := engine(t)
	ctx := t.Context()
	const dataDir = "/lockstep-share-test"
	host, err := d.c.ContainerCreate(ctx, client.ContainerCreateOptions{
		Config:     &container.Config{Image: probeTag, Cmd: []string{"wait"}, Labels: map[string]string{LabelMarker: "true", LabelNode: "share-agent"}},
		HostConfig: &container.HostConfig{IpcMode: "shareable", Mounts: []mount.Mount{{Type: mount.TypeVolume, Target: dataDir}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_, _ = d.c.ContainerRemove(context.WithoutCancel(ctx), host.ID, client.ContainerRemoveOptions{Force: true, RemoveVolumes: true})
	})
	if _, err := d.c.ContainerStart(ctx, host.ID, client.ContainerStartOptions{}); err != nil {
		t.Fatal(err)
	}
	shared, err := NewDocker("", WithSharing(Sharing{Container: host.ID, DataDir: dataDir}))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = shared.Close() })
	r := Rank{Job: "share", Attempt: 1, Node: "share-n1", Image: probeTag, Command: []string{"/probe", "wait"},
		Env:    []string{"LOCKSTEP_CHECKPOINT_ACK=" + dataDir + "/ack"},
		Mounts: []jobspec.Mount{{Source: dataDir + "/jobs/share/1", Target: dataDir + "/jobs/share/1"}}}
	var out syncBuf
	id, copied, err := shared.Start(ctx, CreateOptions(r), &out, &out)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = d.Remove(context.WithoutCancel(ctx), id) })
	insp, err := d.c.ContainerInspect(ctx, id, client.ContainerInspectOptions{})
	if err != nil {
		t.Fatal(err)
	}
	hc := insp.Container.HostConfig
	if string(hc.NetworkMode) != "container:"+host.ID || string(hc.IpcMode) != "container:"+host.ID || len(hc.VolumesFrom) != 0 ||
		len(hc.Mounts) != 1 || hc.Mounts[0].Type != mount.TypeVolume || hc.Mounts[0].Target != dataDir {
		t.Errorf("network %q ipc %q volumes from %v mounts %+v", hc.NetworkMode, hc.IpcMode, hc.VolumesFrom, hc.Mounts)
	}
	deadline := time.Now().Add(30 * time.Second)
	for !strings.Contains(out.String(), "waiting") && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if err := shared.Signal(ctx, id, "SIGUSR1"); err != nil {
		t.Fatal(err)
	}
	if code, err := shared.Wait(ctx, id); err != nil || code != 0 {
		<-copied
		t.Fatalf("exit %d, %v: the ack could not be written in the shared volume:\n%s", code, err, out.String())
	}
}

// On a machine with an NVIDIA GPU and the engine's NVIDIA runtime, a rank
// given a GPU by UUID (the device request) has that GPU's device and no
// other; a rank given none has none. Skipped where nvidia-smi lists no GPU.
func TestDockerGPUPassthrough(t *testing.T) {
	raw, err := exec.Command("nvidia-smi", "--query-gpu=uuid", "--format=csv,noheader").Output()
	uuids := strings.Fields(string(raw))
	if err != nil || len(uuids) == 0 {
		t.Skipf("no NVIDIA GPU here (%v)", err)
	}
	d := engine(t)
	ctx := t.Context()
	run := func(gpus []string) string {
		r := Rank{Job: "gpu", Attempt: 1, Rank: len(gpus), Node: "gpu-n1", Image: probeTag, Command: []string{"/probe"}, GPUs: gpus}
		var out syncBuf
		id, copied, err := d.Start(ctx, CreateOptions(r), &out, &out)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = d.Remove(context.WithoutCancel(ctx), id) })
		if code, err := d.Wait(ctx, id); err != nil || code != 0 {
			t.Fatalf("exit %d, %v", code, err)
		}
		<-copied
		t.Logf("GPUs %v:\n%s", gpus, out.String())
		_, dev, _ := strings.Cut(out.String(), "gpu-devices=[")
		dev, _, _ = strings.Cut(dev, "]")
		return dev
	}
	if got := strings.Fields(run(uuids[:1])); len(got) != 1 {
		t.Errorf("one GPU by UUID %s: devices %v, want one /dev/nvidiaN", uuids[0], got)
	}
	if got := run(nil); got != "" {
		t.Errorf("no GPU asked: devices %q", got)
	}
}
