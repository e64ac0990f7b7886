package atomicfile_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/lockstep-dev/lockstep/shared/plumbing/atomicfile"
)

// A secret is written 0600 even where a world-readable file, or a link to
// another file, waits at the old fixed temporary path; the link's target
// is left alone.
func TestWriteMakesTheModeAskedFor(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "keys", "ca.key")
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	victim := filepath.Join(dir, "victim")
	if err := os.WriteFile(victim, []byte("keep"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(victim, path+".tmp"); err != nil {
		t.Fatal(err)
	}
	for range 2 { // a new file, then a replacement
		if err := atomicfile.Write(path, []byte("secret"), 0o700, 0o600); err != nil {
			t.Fatal(err)
		}
		info, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		if info.Mode().Perm() != 0o600 {
			t.Errorf("mode %v, want 0600", info.Mode().Perm())
		}
	}
	if raw, err := os.ReadFile(path); err != nil || string(raw) != "secret" {
		t.Errorf("read back %q, %v", raw, err)
	}
	if raw, _ := os.ReadFile(victim); string(raw) != "keep" {
		t.Errorf("the link's target was written: %q", raw)
	}
	ents, _ := os.ReadDir(filepath.Dir(path))
	if len(ents) != 2 { // ca.key and the planted link
		t.Errorf("left behind: %v", ents)
	}
}
