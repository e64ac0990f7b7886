package trace

import (
	"os"
	"strings"
	"testing"
	"time"
)

func TestReadPhilly(t *testing.T) {
	in := `job_id,submit_s,duration_s,gpus,nodes,gpus_per_node,status,queue
a,10,100,16,2,8,unknown,
b,5,0,1,1,1,unknown,
c,7,60,1,1,1,unknown,vc1
`
	jobs, err := ReadPhilly(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	if len(jobs) != 2 {
		t.Fatalf("got %d jobs, want 2 (zero duration dropped)", len(jobs))
	}
	if jobs[0].ID != "c" || jobs[0].Queue != "vc1" || jobs[0].Submit != 7*time.Second {
		t.Errorf("first job %+v, want c submitted at 7s in vc1", jobs[0])
	}
	if j := jobs[1]; j.Nodes != 2 || j.GPUsPerNode != 8 || j.Duration != 100*time.Second {
		t.Errorf("second job %+v", j)
	}
}

func TestReadPhillyRejects(t *testing.T) {
	for _, in := range []string{
		"id,submit\n",
		"job_id,submit_s,duration_s,gpus,nodes,gpus_per_node,status,queue\na,x,1,1,1,1,u,\n",
	} {
		if _, err := ReadPhilly(strings.NewReader(in)); err == nil {
			t.Errorf("%q: no error", in)
		}
	}
}

func TestPhillyFile(t *testing.T) {
	path := DefaultPhilly()
	if path == "" {
		t.Skip("../shared/traces not present")
	}
	if _, err := os.Stat(path); err != nil {
		t.Skip(err)
	}
	jobs, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(jobs) != 111539 {
		t.Errorf("%d jobs, want 111,539 (the README's count)", len(jobs))
	}
}

func TestSyntheticIsDeterministic(t *testing.T) {
	sizes, err := ParseSizes("1x8:50,2x8:30,4x8")
	if err != nil {
		t.Fatal(err)
	}
	durs, err := ParseDurations("1s:1,3s:1")
	if err != nil {
		t.Fatal(err)
	}
	s := Synthetic{Rate: 10, Count: 50, Sizes: sizes, Durations: durs, ConstrainedShare: 0.5, SwitchWait: time.Minute, Seed: 3, Poisson: true}
	a, err := s.Generate()
	if err != nil {
		t.Fatal(err)
	}
	b, _ := s.Generate()
	if len(a) != 50 {
		t.Fatalf("%d jobs, want 50", len(a))
	}
	for i := range a {
		if a[i] != b[i] {
			t.Fatalf("job %d differs: %+v vs %+v", i, a[i], b[i])
		}
		if i > 0 && a[i].Submit < a[i-1].Submit {
			t.Fatalf("job %d submitted before job %d", i, i-1)
		}
	}
	fixed := Synthetic{Rate: 4, Span: time.Second, Sizes: sizes, Durations: durs}
	got, _ := fixed.Generate()
	if len(got) != 5 || got[4].Submit != time.Second {
		t.Errorf("fixed rate 4/s over 1s: %d jobs, last at %v; want 5, last at 1s", len(got), got[len(got)-1].Submit)
	}
}

func TestParseMixRejects(t *testing.T) {
	for _, s := range []string{"", "2:1", "1x0", "1x8:-1", "0x8"} {
		if _, err := ParseSizes(s); err == nil {
			t.Errorf("ParseSizes(%q): no error", s)
		}
	}
	if _, err := ParseDurations("0s"); err == nil {
		t.Error("ParseDurations(0s): no error")
	}
}
