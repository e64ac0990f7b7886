package slurmenv

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// FuzzExpandHostlist checks that ExpandHostlist never panics and, when it
// accepts an expression, returns as many hosts as an independent count of
// its ranges predicts, each a plain name that expands to itself.
func FuzzExpandHostlist(f *testing.F) {
	for _, seed := range []string{
		"n[01-04,07]", "rack[1-2]-node[1-3]", "a,b,c", "n[1-4", "n[]", "x[9-10]y[1,3-4]",
		"[1-3]", "a,,b", "n[4-1]", "n[0-999999]", "p[000-002],q", "a1 b2\tc3\nd4",
		"row[0,1]_rack[2-3]_blade[4,5]", "node-[01-03,07],gpu[1-2]-a",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, expr string) {
		hosts, err := ExpandHostlist(expr)
		if err != nil {
			return
		}
		if want := countByRanges(t, expr); len(hosts) != want {
			t.Fatalf("ExpandHostlist(%q) gave %d hosts, ranges predict %d", expr, len(hosts), want)
		}
		for _, h := range hosts {
			if h == "" || strings.ContainsAny(h, "[], \t\n") {
				t.Fatalf("ExpandHostlist(%q) produced host %q", expr, h)
			}
		}
		if len(hosts) == 0 {
			return
		}
		if again, err := ExpandHostlist(hosts[0]); err != nil || !slices.Equal(again, hosts[:1]) {
			t.Fatalf("ExpandHostlist(%q) = %q, %v; a plain host must expand to itself", hosts[0], again, err)
		}
	})
}

var (
	topLevelHost = regexp.MustCompile(`(?:[^, \t\n\[]|\[[^\]]*\])+`)
	bracketGroup = regexp.MustCompile(`\[([^\]]*)\]`)
)

// countByRanges predicts how many hosts an accepted expression expands to:
// summed over its top-level hosts, the product over bracket groups of the
// summed range sizes. It parses differently from ExpandHostlist on purpose.
func countByRanges(t *testing.T, expr string) int {
	total := 0
	for _, host := range topLevelHost.FindAllString(expr, -1) {
		product := 1
		for _, g := range bracketGroup.FindAllStringSubmatch(host, -1) {
			size := 0
			for _, r := range strings.Split(g[1], ",") {
				lo, hi, isRange := strings.Cut(r, "-")
				if !isRange {
					hi = lo
				}
				l, err1 := strconv.ParseUint(lo, 10, 64)
				h, err2 := strconv.ParseUint(hi, 10, 64)
				if err1 != nil || err2 != nil {
					t.Fatalf("ExpandHostlist accepted %q but range %q does not parse", expr, r)
				}
				size += int(h-l) + 1
			}
			product *= size
		}
		total += product
	}
	return total
}

func ExampleExpandHostlist() {
	hosts, _ := ExpandHostlist("rack[1-2]-n[08-09],login")
	fmt.Println(hosts)
	// Output: [rack1-n08 rack1-n09 rack2-n08 rack2-n09 login]
}
