package health

import (
	"context"
	"slices"
	"strconv"
	"strings"
	"testing"
)

func TestParseXIDs(t *testing.T) {
	got := ParseXIDs(readFixture(t, "kern.log"))
	var codes []string
	for _, x := range got {
		codes = append(codes, x.Device+"/"+strconv.Itoa(x.Code))
	}
	want := []string{"0000:18:00/13", "0000:2a:00/43", "0000:5d:00/79", "0000:5d:00/79", "0000:9a:00/63", "0000:07:00/48", "0000:07:00/64", "0000:db:00/79", "0000:db:00/3"}
	if !slices.Equal(codes, want) {
		t.Errorf("Xids %q, want %q", codes, want)
	}
	if r := got[0].Reason(); r != "" {
		t.Errorf("Xid 13 (an application's fault) withdraws a GPU: %q", r)
	}
	if r := got[2].Reason(); r != "Xid 79 in the kernel log: GPU has fallen off the bus" {
		t.Errorf("Xid 79: %q", r)
	}
}

// A kernel line that only quotes driver text a job chose (a segfault line
// names the crashing file, and a file may be named like an Xid) is no
// Xid: the driver's lines start with NVRM after the log's own prefixes.
func TestParseXIDsIgnoresQuotedDriverText(t *testing.T) {
	log := "python[4242]: segfault at 0 ip 00007f0000000000 sp 00007ffc00000000 error 4 in NVRM: Xid (PCI:0000:18:00): 79, x[7f0000000000+1000]\n" +
		"Dec  2 11:38:47 worker4 kernel: [  219.470994] a.out[7]: segfault at 0 ip 0 sp 0 error 4 in NVRM: GPU at 0000:18:00.0 has fallen off the bus[400000+1000]\n" +
		"[Fri Aug 30 11:43:09 2024] bash[9]: trap in NVRM: Xid (PCI:0000:2a:00): 48, x\n"
	if got := ParseXIDs([]byte(log)); len(got) != 0 {
		t.Errorf("quoted driver text taken for Xids: %+v", got)
	}
}

// Xids withdraw the GPU at their PCI address and keep it withdrawn, though
// the log line is seen once, until Resume.
func TestCheckerXIDsAreSticky(t *testing.T) {
	log := readFixture(t, "kern.log")
	kernel := func(context.Context) ([]byte, error) {
		out := log
		log = nil
		return out, nil
	}
	gpus := dgxGPUs(t)
	c := newChecker(t, gpus, fixedSMI(readFixture(t, "dgx-h100-healthy.csv"), nil, nil), WithKernelLog(kernel))
	first := check(t, c)
	got := unhealthy(first)
	if len(got) != 3 || !strings.HasSuffix(got[3], "): Xid 79 in the kernel log: GPU has fallen off the bus") ||
		!strings.Contains(got[4], "Xid 63") || !strings.Contains(got[7], "Xid 79") {
		t.Errorf("unhealthy %v", got)
	}
	if notes := strings.Join(first.Notes, "\n"); !strings.Contains(notes, "Xid 48 for PCI 0000:07:00, which is no GPU of this node") {
		t.Errorf("notes %q", notes)
	}
	second := check(t, c)
	if ch := Diff(first, second); !ch.Empty() {
		t.Errorf("Xids forgotten on the next poll: %+v", ch)
	}
	c.Resume(gpus[3].UUID)
	third := check(t, c)
	ch := Diff(second, third)
	if len(ch.BecameHealthy) != 1 || ch.BecameHealthy[0].Index != 3 || len(unhealthy(third)) != 2 {
		t.Errorf("after Resume: %+v", ch)
	}
}
