package containers

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestMemoryShare(t *testing.T) {
	const gib = int64(1) << 30
	for _, c := range []struct {
		host       int64
		rank, node int
		want       int64
	}{
		{2048 * gib, 1, 8, 256 * gib},
		{2048 * gib, 8, 8, 2048 * gib},
		{2048 * gib, 3, 8, 768 * gib},
		{24*gib + 12345, 1, 8, 3 * gib}, // whole MiB only
		{2048 * gib, 0, 8, 0},           // a rank without GPUs: no limit
		{0, 1, 8, 0},                    // host memory unknown
		{2048 * gib, 1, 0, 0},           // a node without GPUs
		{2048 * gib, 9, 8, 0},           // more GPUs than the node: not a share
	} {
		if got := MemoryShare(c.host, c.rank, c.node); got != c.want {
			t.Errorf("MemoryShare(%d, %d, %d) = %d, want %d", c.host, c.rank, c.node, got, c.want)
		}
	}
}

func TestHostMemory(t *testing.T) {
	dir := t.TempDir()
	write := func(s string) string {
		p := filepath.Join(dir, "meminfo")
		if err := os.WriteFile(p, []byte(s), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	// The head of a DGX H100's /proc/meminfo (2 TiB).
	got, err := HostMemory(write("MemTotal:       2113309392 kB\nMemFree:        2061051004 kB\nMemAvailable:   2074164380 kB\n"))
	if err != nil || got != 2113309392<<10 {
		t.Fatalf("HostMemory = %d, %v", got, err)
	}
	for _, bad := range []struct{ text, want string }{
		{"MemFree: 1 kB\n", "no MemTotal"},
		{"MemTotal: lots kB\n", "not a size"},
		{"MemTotal: 12 MB\n", "not \"N kB\""},
		{"MemTotal: -5 kB\n", "not a size"},
	} {
		if _, err := HostMemory(write(bad.text)); err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("%q: err %v, want %q", bad.text, err, bad.want)
		}
	}
	if _, err := HostMemory(filepath.Join(dir, "absent")); err == nil {
		t.Error("a missing meminfo read as a size")
	}
}
