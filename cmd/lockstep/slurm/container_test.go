package slurm

import (
	"reflect"
	"strings"
	"testing"

	"github.com/lockstep-dev/lockstep/shared/contract/jobspec"
)

// pyxis's --container-image: enroot's registry#image is the engine's
// registry/image; a squashfs file and USER@ credentials are refused.
func TestParseContainerImage(t *testing.T) {
	for in, want := range map[string]string{
		"nvcr.io#nvidia/pytorch:24.10-py3":          "nvcr.io/nvidia/pytorch:24.10-py3",
		"nvcr.io/nvidia/pytorch:24.10-py3":          "nvcr.io/nvidia/pytorch:24.10-py3",
		"ubuntu":                                    "ubuntu",
		"registry:5000#team/img:v1":                 "registry:5000/team/img:v1",
		"busybox@sha256:" + strings.Repeat("a", 64): "busybox@sha256:" + strings.Repeat("a", 64),
	} {
		if got, err := ParseContainerImage(in); err != nil || got != want {
			t.Errorf("ParseContainerImage(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	checkRejects(t, "ParseContainerImage", ParseContainerImage, "", "/lustre/pytorch.sqsh", "./img.sqsh", "img.sqsh",
		"alice@nvcr.io#nvidia/pytorch", "UPPER/Case", "a b")
}

// --container-mounts=SRC:DST[:FLAGS][,...], SRC alone for the same path,
// flags joined by '+'.
func TestParseContainerMounts(t *testing.T) {
	got, err := ParseContainerMounts("/datasets/c4:/data:ro,/scratch:/scratch:rw+rprivate,/opt/tools")
	want := []jobspec.Mount{{Source: "/datasets/c4", Target: "/data", ReadOnly: true}, {Source: "/scratch", Target: "/scratch"},
		{Source: "/opt/tools", Target: "/opt/tools"}}
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Errorf("ParseContainerMounts = %+v, %v; want %+v", got, err, want)
	}
	checkRejects(t, "ParseContainerMounts", ParseContainerMounts, "", "data:/data", "/a:b", "/a:/b:ro:x", "/a:/b:rshared", ",/a", ":/b",
		strings.Repeat("/a:/b,", jobspec.MaxMounts)+"/a:/c")
}

// The options reach the spec's container section; --container-env's
// names are the caller's to resolve; mounts without an image are refused
// naming the options; pyxis options with no Lockstep meaning are refused
// as unsupported.
func TestContainerDirectives(t *testing.T) {
	d, _, err := ParseOptions([]string{"--gpus-per-node=8", "--container-image=nvcr.io#nvidia/pytorch:24.10-py3",
		"--container-mounts=/datasets:/data:ro", "--container-workdir=/workspace", "--container-env=HF_TOKEN,WANDB_API_KEY", "train.sh"})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(d.Container.EnvNames, []string{"HF_TOKEN", "WANDB_API_KEY"}) {
		t.Errorf("env names %q", d.Container.EnvNames)
	}
	s, err := d.JobSpec([]string{"train.sh"})
	want := &jobspec.Container{Image: "nvcr.io/nvidia/pytorch:24.10-py3", Mounts: []jobspec.Mount{{Source: "/datasets", Target: "/data", ReadOnly: true}}, Workdir: "/workspace"}
	if err != nil || !reflect.DeepEqual(s.Container, want) {
		t.Errorf("container %+v, %v; want %+v", s.Container, err, want)
	}
	d, _, _ = ParseOptions([]string{"--gpus-per-node=8", "x"})
	if s, err := d.JobSpec([]string{"x"}); err != nil || s.Container != nil {
		t.Errorf("no container options: container %+v, %v", s.Container, err)
	}
	d, _, _ = ParseOptions([]string{"--gpus-per-node=8", "--container-mounts=/a:/b", "x"})
	_, err = d.JobSpec([]string{"x"})
	checkInvalid(t, "mounts without an image", err, "--container-mounts, --container-workdir and --container-env need --container-image")
	for _, args := range [][]string{{"--container-workdir=rel"}, {"--container-env=1BAD"}, {"--container-image=/x.sqsh"}} {
		if _, _, err := ParseOptions(args); err == nil || !strings.Contains(err.Error(), strings.SplitN(args[0], "=", 2)[0]) {
			t.Errorf("%q: %v, want an error naming the option", args, err)
		}
	}
	if _, _, err := ParseOptions([]string{"--container-remap-root"}); !IsUnsupported(err) {
		t.Errorf("--container-remap-root: %v, want unsupported", err)
	}
}
