package jobspec

import (
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestParseContainer(t *testing.T) {
	s, err := Parse([]byte(`{"gang":{"nodes":2,"gpusPerNode":4},"command":["python","train.py"],
		"container":{"image":"nvcr.io/nvidia/pytorch:24.10-py3","mounts":[{"source":"/datasets","target":"/data","readOnly":true}],
		"workdir":"/workspace","env":{"NCCL_DEBUG":"INFO"},"shmSize":8589934592}}`))
	if err != nil {
		t.Fatal(err)
	}
	c := s.Container
	if c == nil || c.Image != "nvcr.io/nvidia/pytorch:24.10-py3" || c.PullPolicy != PullIfNotPresent || !c.Mounts[0].ReadOnly ||
		c.Workdir != "/workspace" || c.Env["NCCL_DEBUG"] != "INFO" || c.ShmSize != 8<<30 || c.PullTimeout.Duration() != DefaultPullTimeout {
		t.Fatalf("container parsed as %+v", c)
	}
	if again := s.WithDefaults(); !reflect.DeepEqual(again.Container, c) {
		t.Errorf("WithDefaults not idempotent: %+v", again.Container)
	}
}

// pullTimeout is parsed once, kept as written, and defaults to 10m.
func TestParseContainerPullTimeout(t *testing.T) {
	s, err := Parse([]byte(`{"gang":{"nodes":1,"gpusPerNode":1},"command":["x"],"container":{"image":"p","pullTimeout":"90s"}}`))
	if err != nil {
		t.Fatal(err)
	}
	if got := s.Container.PullTimeout; got.Duration() != 90*time.Second || got.String() != "90s" {
		t.Errorf("pullTimeout = %v (%q), want 90s as written", got.Duration(), got.String())
	}
}

func TestValidImage(t *testing.T) {
	for ref, want := range map[string]bool{
		"probe":                            true,
		"probe:latest":                     true,
		"library/ubuntu:24.04":             true,
		"localhost:5000/team/train:v1.2":   true,
		"nvcr.io/nvidia/pytorch:24.10-py3": true,
		"ghcr.io/x/y@sha256:" + strings.Repeat("ab", 32): true,
		"[::1]:5000/probe":                 true,
		"":                                 false,
		"Probe":                            false,
		"probe:":                           false,
		"-probe":                           false,
		"probe:-tag":                       false,
		"probe latest":                     false,
		"probe;rm -rf /":                   false,
		"../probe":                         false,
		"probe@sha256:short":               false,
		strings.Repeat("a", MaxImageRef+1): false,
	} {
		if got := ValidImage(ref); got != want {
			t.Errorf("ValidImage(%q) = %v, want %v", ref, got, want)
		}
	}
}

func TestParseRejectsBadContainer(t *testing.T) {
	base := `{"gang":{"nodes":1,"gpusPerNode":1},"command":["x"],"container":%s}`
	for _, c := range []struct{ container, want string }{
		{`{}`, "container: missing property 'image'"},
		{`{"image":"Bad Image"}`, `container.image: "Bad Image" is not an image reference`},
		{`{"image":"p","pullPolicy":"Sometimes"}`, "container.pullPolicy"},
		{`{"image":"p","pullTimeout":"soon"}`, "container.pullTimeout"},
		{`{"image":"p","pullTimeout":"0s"}`, "container.pullTimeout: must be positive"},
		{`{"image":"p","pullTimeout":"25h"}`, "container.pullTimeout: 25h0m0s is more than the 24h0m0s allowed"},
		{`{"image":"p","mounts":[{"source":"data","target":"/data"}]}`, "container.mounts.0.source"},
		{`{"image":"p","mounts":[{"source":"/d","target":"/x/../etc"}]}`, `container.mounts.0.target: "/x/../etc" has a ".." element`},
		{`{"image":"p","mounts":[{"source":"/d","target":"/"}]}`, "container.mounts.0.target: cannot be the container's root"},
		{`{"image":"p","mounts":[{"source":"/d","target":"/a"},{"source":"/e","target":"/a"}]}`, `container.mounts.1.target: "/a" is mounted twice`},
		{`{"image":"p","mounts":[{"source":"/opt/bin","target":"/.lockstep/bin"}]}`, `container.mounts.0.target: /.lockstep is Lockstep's own`},
		{`{"image":"p","workdir":"work"}`, "container.workdir"},
		{`{"image":"p","shmSize":-1}`, "container.shmSize"},
		{`{"image":"p","shmSize":2199023255552}`, "container.shmSize"},
		{`{"image":"p","user":"root;id"}`, "container.user"},
		{`{"image":"p","env":{"1X":"y"}}`, "container.env"},
	} {
		_, err := Parse([]byte(strings.Replace(base, "%s", c.container, 1)))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("container %s: got %v, want an error containing %q", c.container, err, c.want)
		}
	}
}

// A container section's own Check holds the rules the schema also states:
// the agent checks an assignment, which no schema saw.
func TestContainerCheckWithoutSchema(t *testing.T) {
	c := Container{Image: "p", ShmSize: MaxShmSize + 1, Mounts: []Mount{{Source: "", Target: "/a"}}, User: strings.Repeat("a", 65)}
	got := c.Check("container")
	var fields []string
	for _, fe := range got {
		fields = append(fields, fe.Field)
	}
	if strings.Join(fields, " ") != "container.mounts.0.source container.shmSize container.user" {
		t.Errorf("fields %v", fields)
	}
}

// A batch job may run in a container (its script and steps do).
func TestParseBatchContainer(t *testing.T) {
	s, err := Parse([]byte(`{"gang":{"nodes":1,"gpusPerNode":1},"command":["job.sh"],"batch":{"script":"#!/bin/sh\nsrun x\n"},"container":{"image":"p"}}`))
	if err != nil || s.Container == nil || s.Batch == nil {
		t.Fatalf("got %+v, %v", s, err)
	}
}
