package discover

import (
	"slices"
	"testing"
)

func TestParseCPUList(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []int
	}{
		{"", nil},
		{"\n", nil},
		{"0", []int{0}},
		{"0-3\n", []int{0, 1, 2, 3}},
		{"0-1,4,6-7", []int{0, 1, 4, 6, 7}},
		{"4,0-1,1", []int{0, 1, 4}},
		{"0-8:4", []int{0, 4, 8}},
	} {
		got, err := ParseCPUList(tc.in)
		if err != nil || !slices.Equal(got, tc.want) {
			t.Errorf("ParseCPUList(%q) = %v, %v; want %v", tc.in, got, err, tc.want)
		}
	}
	big, err := ParseCPUList("0-55,112-167")
	if err != nil || len(big) != 112 || big[56] != 112 {
		t.Errorf("DGX node 0 list: %d CPUs, %v", len(big), err)
	}
}

func TestParseCPUListRejects(t *testing.T) {
	for _, in := range []string{"a", "1-", "-1", "3-1", "1,,2", "+3", "0-70000", "1:2", "0-4:0", "0-4:x", "1 2", "0x3"} {
		if got, err := ParseCPUList(in); err == nil {
			t.Errorf("ParseCPUList(%q) = %v, want an error", in, got)
		}
	}
}

func TestFormatCPUList(t *testing.T) {
	for _, in := range []string{"", "0", "0-2,5", "0-55,112-167", "1,3,5"} {
		cpus, err := ParseCPUList(in)
		if err != nil {
			t.Fatal(err)
		}
		if got := FormatCPUList(cpus); got != in {
			t.Errorf("FormatCPUList(ParseCPUList(%q)) = %q", in, got)
		}
	}
}

// FuzzParseCPUList: any input either fails or yields sorted, distinct,
// bounded numbers that survive a format/parse round trip.
func FuzzParseCPUList(f *testing.F) {
	for _, s := range []string{"0-55,112-167", "0", "", "0-8:4", "3-1", "1,,2", "0-65535"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		cpus, err := ParseCPUList(s)
		if err != nil {
			return
		}
		for i, c := range cpus {
			if c < 0 || c > MaxCPUID || (i > 0 && cpus[i-1] >= c) {
				t.Fatalf("ParseCPUList(%q) = %v: not sorted, distinct and bounded", s, cpus)
			}
		}
		again, err := ParseCPUList(FormatCPUList(cpus))
		if err != nil || !slices.Equal(again, cpus) {
			t.Fatalf("round trip of %q: %v, %v", s, again, err)
		}
	})
}
