package agent

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lockstep-dev/lockstep/shared/contract/jobspec"
)

// A container job mounts only from under the trees the node allows, and
// never through a symbolic link: the engine resolves the source as root.
func TestCheckMountSources(t *testing.T) {
	root := t.TempDir()
	data := filepath.Join(root, "data")
	other := filepath.Join(root, "data2")
	for _, d := range []string{filepath.Join(data, "c4"), other, filepath.Join(root, "elsewhere")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(filepath.Join(root, "elsewhere"), filepath.Join(data, "link")); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(root, "elsewhere", "deep"), 0o755); err != nil {
		t.Fatal(err)
	}
	mount := func(src string) []jobspec.Mount { return []jobspec.Mount{{Source: src, Target: "/mnt"}} }
	for _, tc := range []struct {
		name  string
		src   string
		under []string
		want  string // "" allowed, else part of the error
	}{
		{"under the tree", filepath.Join(data, "c4"), []string{data}, ""},
		{"the tree itself", data, []string{data}, ""},
		{"nothing allowed", filepath.Join(data, "c4"), nil, "allows no host mounts"},
		{"a sibling sharing the prefix", other, []string{data}, "not under a tree"},
		{"outside", "/etc", []string{data}, "not under a tree"},
		{"a link in the tree", filepath.Join(data, "link"), []string{data}, "symbolic link"},
		{"through a link in the tree", filepath.Join(data, "link", "deep"), []string{data}, "symbolic link"},
		{"missing", filepath.Join(data, "gone"), []string{data}, "no such file"},
	} {
		err := checkMountSources(mount(tc.src), tc.under, os.Lstat)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s: refused: %v", tc.name, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%s: %v, want an error saying %q", tc.name, err, tc.want)
		case err != nil && !strings.Contains(err.Error(), "container.mounts.0.source"):
			t.Errorf("%s: %v does not name the field", tc.name, err)
		}
	}
}
