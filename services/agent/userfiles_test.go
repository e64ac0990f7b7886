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

// A hard link is a regular file too: one planted where the agent writes a
// log, or reads an ack, is refused, and so is a log file someone else
// made there first.
func TestUserFilesRefuseHardLinksAndOthersFiles(t *testing.T) {
	dir := t.TempDir()
	secret := filepath.Join(dir, "passwd")
	if err := os.WriteFile(secret, []byte("root:x:0:0::/root:/bin/sh\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	linked := filepath.Join(dir, "rank-1.log")
	if err := os.Link(secret, linked); err != nil {
		t.Fatal(err)
	}
	if f, err := openUserFile(linked, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644); err == nil || !strings.Contains(err.Error(), "hard link") {
		if f != nil {
			f.Close()
		}
		t.Errorf("a log file planted as a hard link: %v", err)
	}
	if raw, err := readUserFile(linked, 1<<10); err == nil {
		t.Errorf("an ack file planted as a hard link read: %q", raw)
	}
	if raw, err := os.ReadFile(secret); err != nil || string(raw) != "root:x:0:0::/root:/bin/sh\n" {
		t.Errorf("the linked file changed: %q, %v", raw, err)
	}
	if os.Geteuid() == 0 {
		theirs := filepath.Join(dir, "rank-2.log")
		if err := os.WriteFile(theirs, nil, 0o666); err != nil {
			t.Fatal(err)
		}
		if err := os.Chown(theirs, 65534, 65534); err != nil {
			t.Fatal(err)
		}
		if f, err := openUserFile(theirs, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644); err == nil || !strings.Contains(err.Error(), "not this agent") {
			if f != nil {
				f.Close()
			}
			t.Errorf("a log file made by someone else: %v", err)
		}
	}
	fresh := filepath.Join(dir, "rank-3.log")
	f, err := openUserFile(fresh, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		t.Fatalf("a log file of the agent's own: %v", err)
	}
	f.Close()
}
