package health

import (
	"context"
	"path/filepath"
	"testing"
)

func TestKmsgText(t *testing.T) {
	rec := "4,1234,5678901,-;NVRM: Xid (PCI:0000:2b:00): 79, pid=1, GPU has fallen off the bus.\n SUBSYSTEM=pci\n DEVICE=+pci:0000:2b:00.0\n"
	got := string(kmsgText([]byte(rec)))
	if got != "NVRM: Xid (PCI:0000:2b:00): 79, pid=1, GPU has fallen off the bus." {
		t.Fatalf("%q", got)
	}
	if xs := ParseXIDs([]byte(got + "\n")); len(xs) != 1 || xs[0].Code != 79 {
		t.Errorf("Xids %+v", xs)
	}
}

// Kmsg on this machine's /dev/kmsg, where it may be read: a call returns at
// once (the device is read without blocking).
func TestKmsgDoesNotBlock(t *testing.T) {
	if _, err := Kmsg(filepath.Join(t.TempDir(), "none")); err == nil {
		t.Error("a missing device opened")
	}
	log, err := Kmsg("/dev/kmsg")
	if err != nil {
		t.Skipf("no readable /dev/kmsg here: %v", err)
	}
	if _, err := log(context.Background()); err != nil {
		t.Fatal(err)
	}
}
