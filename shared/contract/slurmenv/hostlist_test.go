package slurmenv

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// Expansion examples from Slurm's documentation and tests: scontrol(1)
// "hostnames", testsuite/expect/test2.20 (scontrol show hostnames),
// testsuite/slurm_unit/common/hostlist/hostlist_nth-test.c.
func TestExpandHostlist(t *testing.T) {
	for _, tc := range []struct {
		expr string
		want string // names joined by spaces
	}{
		{"tux[1-3]", "tux1 tux2 tux3"},                                          // scontrol(1)
		{"lx[10-20]", "lx10 lx11 lx12 lx13 lx14 lx15 lx16 lx17 lx18 lx19 lx20"}, // scontrol(1)
		{"rack[0-3]", "rack0 rack1 rack2 rack3"},                                // test2.20
		{"rack[0-1]_blade[2,3]", "rack0_blade2 rack0_blade3 rack1_blade2 rack1_blade3"},
		{"row[0,1]_rack[2-3]_blade[4,5]", "row0_rack2_blade4 row0_rack2_blade5 row1_rack2_blade4 row1_rack2_blade5 " +
			"row0_rack3_blade4 row0_rack3_blade5 row1_rack3_blade4 row1_rack3_blade5"}, // test2.20, in Slurm's order
		{"host[1-3],host5", "host1 host2 host3 host5"}, // hostlist_nth-test.c
		{"two[1-2]", "two1 two2"},
		// The brief's example: padding kept, a suffix after the bracket.
		{"node-[01-03,07],gpu[1-2]-a", "node-01 node-02 node-03 node-07 gpu1-a gpu2-a"},
		{"n[08-10]", "n08 n09 n10"},
		{"n[8-10]", "n8 n9 n10"},
		{"n[098-101]", "n098 n099 n100 n101"},
		{"n[1-2,01-02]", "n1 n2 n01 n02"},
		{"tux[2,1-2]", "tux2 tux1 tux2"}, // duplicates kept, order kept
		{"login,login", "login login"},
		{"a1 b2\tc3\nd4", "a1 b2 c3 d4"},
		{",,a1,,", "a1"},
		{"", ""},
		{"[1-3]", "1 2 3"},
		{"n[5]", "n5"},
		{"node-[01-02]", "node-01 node-02"}, // SLURM_JOB_NODELIST in issue 18
	} {
		checkParse(t, "ExpandHostlist", expandJoined, tc.expr, tc.want)
	}
}

// expandJoined is ExpandHostlist with the names joined by spaces.
func expandJoined(expr string) (string, error) {
	names, err := ExpandHostlist(expr)
	return strings.Join(names, " "), err
}

func TestExpandHostlistErrors(t *testing.T) {
	for _, tc := range []struct{ expr, want string }{
		{"n[1-3", "'[' without ']'"},
		{"n1-3]", "']' without '['"},
		{"n[[1]]", "nested"},
		{"n[]", "invalid range"},
		{"n[3-1]", "3 is more than 1"},
		{"n[a-b]", "invalid range"},
		{"n[1-]", "invalid range"},
		{"n[-1]", "invalid range"},
		{"n[1--2]", "invalid range"},
		{"n[1x2]", "invalid range"},
		{"n[ 1]", "invalid range"},
		{"n[0-65536]", "more than 65536 hosts"},
		{"n[0-99999999999999999999]", "too large"},
		{"a[0-256]b[0-255]", "more than 65536 hosts"},
		{"n[0-40000],m[0-40000]", "more than 65536 hosts"},
		{"n[0-40000,0-40000]", "more than 65536 hosts"},
		{strings.Repeat("x", 300), "longer than 255"},
		{strings.Repeat("x", 250) + "[1-1000000]", "more than 65536"},
		{strings.Repeat("x", 250) + "[100000-100001]", "longer than 255"},
		{strings.Repeat("x", 250) + "[100000-100001]y", "longer than 255"},
	} {
		_, err := ExpandHostlist(tc.expr)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("ExpandHostlist(%.40q) = %v, want an error with %q", tc.expr, err, tc.want)
		}
	}
}

func TestExpandHostlistAtTheBound(t *testing.T) {
	got, err := ExpandHostlist("n[0-65535]")
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != MaxHostlistHosts || got[65535] != "n65535" {
		t.Fatalf("got %d hosts, last %q", len(got), got[len(got)-1])
	}
}

// Compression examples from Slurm: scontrol(1) "hostlist" (not sorted, not
// made unique), contribs/perlapi t/21-hostlist.t (ranged_string),
// hostlist_iterator-test.c.
func TestCompressHostlist(t *testing.T) {
	for _, tc := range []struct{ names, want string }{
		{"tux2,tux1,tux2", "tux[2,1-2]"}, // scontrol(1)
		{"tux1,tux2,tux3", "tux[1-3]"},
		// 21-hostlist.t: create, then push "node12,node15,linux8", then linux23.
		{"node0,node3,node4,node8,linux,linux2,linux5,node4,node12,node15,linux8,linux23",
			"node[0,3-4,8],linux,linux[2,5],node[4,12,15],linux[8,23]"},
		// hostlist_iterator-test.c, after removals.
		{"b1,b2,b3,c1,d1,d2,d3,d4,d5,e1", "b[1-3],c1,d[1-5],e1"},
		{"b1,b2,b3,d1,d3,d4,e1", "b[1-3],d[1,3-4],e1"},
		{"a1,a2,a3,b1,c1", "a[1-3],b1,c1"},
		// Padding.
		{"node-01,node-02", "node-[01-02]"},
		{"n08,n09,n10", "n[08-10]"},
		{"n9,n10", "n[9-10]"},
		{"n99,n100", "n[99-100]"},
		{"n099,n100", "n[099-100]"},
		{"n1,n02", "n[1,02]"},
		{"n1,n01", "n[1,01]"},
		{"n007", "n007"},
		// Only a trailing number is ranged.
		{"gpu1-a,gpu2-a", "gpu1-a,gpu2-a"},
		{"login,login", "login,login"},
		{"1,2,3", "[1-3]"},
		{"", ""},
	} {
		var names []string
		if tc.names != "" {
			names = strings.Split(tc.names, ",")
		}
		got, err := CompressHostlist(names)
		if err != nil {
			t.Errorf("CompressHostlist(%s): %v", tc.names, err)
			continue
		}
		if got != tc.want {
			t.Errorf("CompressHostlist(%s) = %q, want %q", tc.names, got, tc.want)
		}
	}
}

func TestCompressHostlistErrors(t *testing.T) {
	for _, names := range [][]string{{""}, {"a,b"}, {"a b"}, {"a[1]"}, {"a]"}, {strings.Repeat("x", 256)}} {
		if got, err := CompressHostlist(names); err == nil {
			t.Errorf("CompressHostlist(%q) = %q, want an error", names, got)
		}
	}
}

// Round trip: every list of names compresses to an expression that expands
// back to exactly the list; and an expression's expansion compresses to an
// expression with the same expansion.
func TestHostlistRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(18, 1))
	prefixes := []string{"", "n", "node-", "gpu", "rack1-n", "a0b", "x.y"}
	suffixes := []string{"", "", "", "-ib", "a"}
	for iter := 0; iter < 2000; iter++ {
		names := make([]string, rng.IntN(40))
		for i := range names {
			p := prefixes[rng.IntN(len(prefixes))]
			num := rng.IntN(130)
			if rng.IntN(8) == 0 {
				num = rng.IntN(1 << 20)
			}
			width := rng.IntN(5)
			name := fmt.Sprintf("%s%0*d%s", p, width, num, suffixes[rng.IntN(len(suffixes))])
			if rng.IntN(20) == 0 {
				name = p + "login" // no number
			}
			if name == "" {
				name = "z"
			}
			names[i] = name
		}
		expr, err := CompressHostlist(names)
		if err != nil {
			t.Fatalf("CompressHostlist(%q): %v", names, err)
		}
		back, err := ExpandHostlist(expr)
		if err != nil {
			t.Fatalf("ExpandHostlist(%q) of CompressHostlist(%q): %v", expr, names, err)
		}
		if !slices.Equal(back, names) && !(len(back) == 0 && len(names) == 0) {
			t.Fatalf("round trip of %q via %q gave %q", names, expr, back)
		}
		// Compressing the expansion again is stable.
		again, err := CompressHostlist(back)
		if err != nil || again != expr {
			t.Fatalf("CompressHostlist(ExpandHostlist(%q)) = %q, %v", expr, again, err)
		}
	}
}
