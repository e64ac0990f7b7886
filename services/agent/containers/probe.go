package containers

import (
	"archive/tar"
	"bytes"
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"

	"github.com/cockroachdb/errors"
	"github.com/moby/moby/client"
)

// ProbeMarker is the text of /probe-marker, a file only the probe image has.
const ProbeMarker = "lockstep-probe-image"

// BuildProbe builds the test probe image tag: FROM scratch, the static
// probe binary (testdata/probe, built here with CGO_ENABLED=0) and
// /probe-marker. Tests of this package and of the dev cluster use it; it
// needs the Go toolchain (or tag already on the engine) and an engine,
// never a registry.
func BuildProbe(ctx context.Context, d *Docker, tag string) error {
	if _, err := exec.LookPath("go"); err != nil {
		// A machine without the toolchain (a GPU machine the tests were
		// copied to) uses the image loaded there (docker load).
		if _, ierr := d.c.ImageInspect(ctx, tag); ierr == nil {
			return nil
		}
	}
	_, self, _, _ := runtime.Caller(0)
	dir, err := os.MkdirTemp("", "probe")
	if err != nil {
		return errors.Wrap(err, "probe build dir")
	}
	defer os.RemoveAll(dir)
	bin := filepath.Join(dir, "probe")
	build := exec.CommandContext(ctx, "go", "build", "-o", bin, "./testdata/probe")
	build.Dir = filepath.Dir(self)
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		return errors.Wrapf(err, "build probe: %s", out)
	}
	exe, err := os.ReadFile(bin)
	if err != nil {
		return errors.Wrap(err, "read probe")
	}
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, f := range []struct {
		name string
		mode int64
		data []byte
	}{
		{"Dockerfile", 0o644, []byte("FROM scratch\nCOPY probe /probe\nCOPY probe-marker /probe-marker\nENTRYPOINT [\"/probe\"]\n")},
		{"probe", 0o755, exe},
		{"probe-marker", 0o644, []byte(ProbeMarker)},
	} {
		if err := tw.WriteHeader(&tar.Header{Name: f.name, Mode: f.mode, Size: int64(len(f.data))}); err != nil {
			return errors.Wrap(err, "probe context")
		}
		_, _ = tw.Write(f.data)
	}
	if err := tw.Close(); err != nil {
		return errors.Wrap(err, "probe context")
	}
	res, err := d.c.ImageBuild(ctx, &buf, client.ImageBuildOptions{Tags: []string{tag}, Remove: true, ForceRemove: true})
	if err != nil {
		return errors.Wrap(err, "build probe image")
	}
	defer res.Body.Close()
	out, _ := io.ReadAll(res.Body)
	if _, err := d.c.ImageInspect(ctx, tag); err != nil {
		return errors.Wrapf(err, "probe image not built: %s", out)
	}
	return nil
}
