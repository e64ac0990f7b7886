package agent

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// What a job's owner can plant in its directory where the agent expects a
// file of its own: a link (to a file the agent could write or read as
// root), a FIFO (an open that never returns), a device (an endless read).
func TestUserFilesAreOpenedOnlyAsRegularFiles(t *testing.T) {
	dir := t.TempDir()
	secret := filepath.Join(dir, "secret")
	if err := os.WriteFile(secret, []byte("root's"), 0o600); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "rank-1.log")
	if err := os.Symlink(secret, link); err != nil {
		t.Fatal(err)
	}
	fifo := filepath.Join(dir, "ack.fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	big := filepath.Join(dir, "big")
	if err := os.WriteFile(big, []byte(strings.Repeat("x", 100)), 0o600); err != nil {
		t.Fatal(err)
	}
	if f, err := openUserFile(link, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644); err == nil {
		f.Close()
		t.Error("a log file planted as a link was opened")
	}
	for _, path := range []string{link, fifo, "/dev/zero", big} {
		if raw, err := readUserFile(path, 64); err == nil {
			t.Errorf("%s read as an ack file: %q", path, raw)
		}
	}
	own := filepath.Join(dir, "ack")
	if err := os.WriteFile(own, []byte("1200 /ckpt/1200\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if raw, err := readUserFile(own, 64); err != nil || string(raw) != "1200 /ckpt/1200\n" {
		t.Errorf("a plain ack file: %q, %v", raw, err)
	}
	if raw, err := os.ReadFile(secret); err != nil || string(raw) != "root's" {
		t.Errorf("the link's target changed: %q, %v", raw, err)
	}
}
