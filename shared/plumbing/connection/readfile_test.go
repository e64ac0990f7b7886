package connection

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// A file is read whole up to its bound; past it, or a device that never
// ends, is an error naming it rather than all the memory.
func TestReadFileUpTo(t *testing.T) {
	path := filepath.Join(t.TempDir(), "spec.json")
	if err := os.WriteFile(path, []byte("0123456789"), 0o600); err != nil {
		t.Fatal(err)
	}
	if raw, err := ReadFileUpTo(path, 10); err != nil || string(raw) != "0123456789" {
		t.Errorf("a file at the bound: %q, %v", raw, err)
	}
	if _, err := ReadFileUpTo(path, 9); err == nil || !strings.Contains(err.Error(), "larger than 9 bytes") {
		t.Errorf("a file past the bound: %v", err)
	}
	if _, err := ReadFileUpTo("/dev/zero", 1<<20); err == nil || !strings.Contains(err.Error(), "larger than") {
		t.Errorf("/dev/zero: %v", err)
	}
	// A pipe, as a shell's <(gen-spec) gives, is read whole.
	fifo := filepath.Join(t.TempDir(), "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	go func() {
		if f, err := os.OpenFile(fifo, os.O_WRONLY, 0); err == nil {
			_, _ = f.WriteString(`{"x":1}`)
			_ = f.Close()
		}
	}()
	if raw, err := ReadFileUpTo(fifo, 1<<20); err != nil || string(raw) != `{"x":1}` {
		t.Errorf("a pipe: %q, %v", raw, err)
	}
}
