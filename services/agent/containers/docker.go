package containers

import (
	"context"
	"io"
	"strconv"
	"sync"

	"github.com/cockroachdb/errors"
	cerrdefs "github.com/containerd/errdefs"
	"github.com/moby/moby/api/pkg/stdcopy"
	"github.com/moby/moby/api/types/container"
	"github.com/moby/moby/api/types/mount"
	"github.com/moby/moby/client"

	"github.com/lockstep-dev/lockstep/shared/contract/jobspec"
)

// Docker is a container engine reached through the Docker Engine API.
type Docker struct {
	c *client.Client
	// share is applied to every container Start makes, with shareData
	// (read from the engine once, under mu).
	share     Sharing
	mu        sync.Mutex
	shareData *mount.Mount
}

// Option configures NewDocker.
type Option func(*Docker)

// WithSharing makes every container Start makes share what s says
// (Sharing). Without it: the host's network and IPC, the agent's paths
// bound from the host.
func WithSharing(s Sharing) Option { return func(d *Docker) { d.share = s } }

// NewDocker connects to the engine at host ("" = DOCKER_HOST, else the
// engine's default socket). The API version is negotiated on first use.
func NewDocker(host string, opts ...Option) (*Docker, error) {
	copts := []client.Opt{client.FromEnv}
	if host != "" {
		copts = append(copts, client.WithHost(host))
	}
	c, err := client.New(copts...)
	if err != nil {
		return nil, errors.Wrap(err, "container engine client")
	}
	d := &Docker{c: c}
	for _, o := range opts {
		o(d)
	}
	return d, nil
}

// Close releases the client's connections.
func (d *Docker) Close() error { return d.c.Close() }

// Ping checks that the engine answers.
func (d *Docker) Ping(ctx context.Context) error {
	_, err := d.c.Ping(ctx, client.PingOptions{})
	return errors.Wrapf(err, "container engine at %s", d.c.DaemonHost())
}

// Ensure makes image present as policy says: IfNotPresent pulls it when
// the engine lacks it, Always pulls it, Never only checks it is there.
// It says whether it pulled.
func (d *Docker) Ensure(ctx context.Context, image, policy string) (pulled bool, err error) {
	if policy != jobspec.PullAlways {
		_, err := d.c.ImageInspect(ctx, image)
		switch {
		case err == nil:
			return false, nil
		case !cerrdefs.IsNotFound(err):
			return false, errors.Wrapf(err, "inspect image %s", image)
		case policy == jobspec.PullNever:
			return false, errors.Newf("image %s is not on this node and container.pullPolicy is Never", image)
		}
	}
	resp, err := d.c.ImagePull(ctx, image, client.ImagePullOptions{})
	if err != nil {
		return false, errors.Wrapf(err, "pull image %s", image)
	}
	defer resp.Close()
	// The pull's outcome is the stream's last message.
	if err := resp.Wait(ctx); err != nil {
		return false, errors.Wrapf(err, "pull image %s", image)
	}
	return true, nil
}

// Start creates the container, attaches its output to stdout and stderr,
// and starts it; copied is closed when the output has all been written.
// On error nothing of it is left.
func (d *Docker) Start(ctx context.Context, opts client.ContainerCreateOptions, stdout, stderr io.Writer) (id string, copied <-chan struct{}, err error) {
	if d.share.Container != "" {
		data, err := d.sharedData(ctx)
		if err != nil {
			return "", nil, err
		}
		d.share.Apply(&opts, data)
	}
	created, err := d.c.ContainerCreate(ctx, opts)
	if err != nil {
		return "", nil, errors.Wrapf(err, "create container %s", opts.Name)
	}
	id = created.ID
	made := id // the results are cleared on an error return: remove what was made
	defer func() {
		if err != nil {
			_ = d.Remove(context.WithoutCancel(ctx), made)
		}
	}()
	// Attached before the start, so no line is missed, whatever the
	// engine's logging driver.
	att, err := d.c.ContainerAttach(ctx, id, client.ContainerAttachOptions{Stream: true, Stdout: true, Stderr: true})
	if err != nil {
		return "", nil, errors.Wrapf(err, "attach to container %s", opts.Name)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer att.Close()
		_, _ = stdcopy.StdCopy(stdout, stderr, att.Reader)
	}()
	if _, err := d.c.ContainerStart(ctx, id, client.ContainerStartOptions{}); err != nil {
		att.Close()
		return "", nil, errors.Wrapf(err, "start container %s", opts.Name)
	}
	return id, done, nil
}

// Signal sends sig (a name: "SIGTERM") to the container's init, which
// passes it on to the rank.
func (d *Docker) Signal(ctx context.Context, id, sig string) error {
	_, err := d.c.ContainerKill(ctx, id, client.ContainerKillOptions{Signal: sig})
	return errors.Wrapf(err, "signal %s to container %s", sig, id)
}

// Wait waits for the container to stop and returns its exit code (128+n
// when signal n ended it).
func (d *Docker) Wait(ctx context.Context, id string) (int, error) {
	w := d.c.ContainerWait(ctx, id, client.ContainerWaitOptions{Condition: container.WaitConditionNotRunning})
	select {
	case r := <-w.Result:
		if r.Error != nil && r.Error.Message != "" {
			return int(r.StatusCode), errors.Newf("container %s: %s", id, r.Error.Message)
		}
		return int(r.StatusCode), nil
	case err := <-w.Error:
		return 255, errors.Wrapf(err, "wait for container %s", id)
	}
}

// Remove removes the container, killing it if it still runs.
func (d *Docker) Remove(ctx context.Context, id string) error {
	_, err := d.c.ContainerRemove(ctx, id, client.ContainerRemoveOptions{Force: true})
	if err != nil && !cerrdefs.IsNotFound(err) {
		return errors.Wrapf(err, "remove container %s", id)
	}
	return nil
}

// Owned lists the containers the agent of node with data directory scope
// made, running or not.
func (d *Docker) Owned(ctx context.Context, node, scope string) ([]Owned, error) {
	f := client.Filters{}.Add("label", LabelMarker+"=true", LabelNode+"="+node, LabelScope+"="+scope)
	res, err := d.c.ContainerList(ctx, client.ContainerListOptions{All: true, Filters: f})
	if err != nil {
		return nil, errors.Wrap(err, "list the node's containers")
	}
	out := make([]Owned, 0, len(res.Items))
	for _, c := range res.Items {
		attempt, _ := strconv.Atoi(c.Labels[LabelAttempt])
		out = append(out, Owned{ID: c.ID, Job: c.Labels[LabelJob], Attempt: attempt, Running: c.State == container.StateRunning})
	}
	return out, nil
}

// Owned is one of the node's containers.
type Owned struct {
	ID      string
	Job     string
	Attempt int
	// Running is false for one that has exited (and not been removed).
	Running bool
}

// Reap removes the node's containers whose attempt keep does not claim:
// those a killed agent left behind. It returns how many it removed.
func Reap(ctx context.Context, d *Docker, node, scope string, keep func(job string, attempt int) bool) (int, error) {
	owned, err := d.Owned(ctx, node, scope)
	if err != nil {
		return 0, err
	}
	n := 0
	var errs error
	for _, c := range owned {
		if keep(c.Job, c.Attempt) {
			continue
		}
		if err := d.Remove(ctx, c.ID); err != nil {
			errs = errors.CombineErrors(errs, err)
			continue
		}
		n++
	}
	return n, errs
}

// sharedData is the mount of the agent's data directory its ranks'
// containers take (Sharing), read from the agent's container once.
func (d *Docker) sharedData(ctx context.Context) (mount.Mount, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.shareData != nil {
		return *d.shareData, nil
	}
	insp, err := d.c.ContainerInspect(ctx, d.share.Container, client.ContainerInspectOptions{})
	if err != nil {
		return mount.Mount{}, errors.Wrapf(err, "--container-share: inspect %s", d.share.Container)
	}
	m, err := d.share.dataMount(insp.Container.Mounts)
	if err != nil {
		return mount.Mount{}, err
	}
	d.shareData = &m
	return m, nil
}
