package discover

import (
	"context"
	"strings"
	"testing"
)

// nvidia-smi's output is read up to a bound: more is an error naming it,
// not all of it in memory, nor a cut CSV that would parse into too few
// GPUs.
func TestCommandSMIBoundsItsOutput(t *testing.T) {
	smi := CommandSMI("/bin/sh")
	if _, err := smi(context.Background(), "-c", "head -c 5000000 /dev/zero"); err == nil || !strings.Contains(err.Error(), "more than 4194304 bytes") {
		t.Errorf("5 MB of output: %v", err)
	}
	if out, err := smi(context.Background(), "-c", "echo 0, GPU-x"); err != nil || string(out) != "0, GPU-x\n" {
		t.Errorf("a short answer: %q, %v", out, err)
	}
}
