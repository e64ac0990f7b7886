package topology

import (
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

func TestExpand(t *testing.T) {
	for _, tc := range []struct {
		expr string
		want []string
	}{
		{"node1", []string{"node1"}},
		{"n[01-04,07]", []string{"n01", "n02", "n03", "n04", "n07"}},
		{"n[8-11]", []string{"n8", "n9", "n10", "n11"}},
		{"n[08-10]", []string{"n08", "n09", "n10"}},
		{"n[098-100]", []string{"n098", "n099", "n100"}},
		{"n[5]", []string{"n5"}},
		{"rack[1-2]-node[1-3]", []string{
			"rack1-node1", "rack1-node2", "rack1-node3",
			"rack2-node1", "rack2-node2", "rack2-node3",
		}},
		{"a,b,c", []string{"a", "b", "c"}},
		{"a, b[1-2] ,c", []string{"a", "b1", "b2", "c"}},
		{"x[1,3],y", []string{"x1", "x3", "y"}},
		{"dgx[01-02]-ib", []string{"dgx01-ib", "dgx02-ib"}},
		{"n[1-2],n[1-2]", []string{"n1", "n2", "n1", "n2"}}, // duplicates kept; Spec rejects them
		{strings.Repeat("x", 253) + "[9-10]", []string{strings.Repeat("x", 253) + "9", strings.Repeat("x", 253) + "10"}},
	} {
		got, err := Expand(tc.expr)
		if err != nil {
			t.Errorf("Expand(%q): %v", tc.expr, err)
			continue
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("Expand(%q) = %q, want %q", tc.expr, got, tc.want)
		}
	}
}

func TestExpandRejects(t *testing.T) {
	for _, tc := range []struct{ expr, want string }{
		{"", "empty host name"},
		{"a,,b", "empty host name"},
		{"a,", "empty host name"},
		{"n[1-4", "unclosed"},
		{"n1-4]", "without '['"},
		{"n[1-[2]]", "nested"},
		{"n[]", "empty []"},
		{"n[4-1]", "backwards"},
		{"n[a-b]", "not a number"},
		{"n[1-]", "not a number"},
		{"n[-1]", "not a number"},
		{"n[1,,2]", "not a number"},
		{"n[1-2-3]", "not a number"},
		{"n[+1]", "not a number"},
		{"n[99999999999999999999]", "out of range"},
		{"n[0-18446744073709551615]", "more than"},
		{"a b", "whitespace"},
		{"n[0-999999]", "more than"},
		{"a[0-999]b[0-999]", "more than"},
		{strings.Repeat("x", 250) + "[1-100000]", "longer than 255 bytes"},
		{strings.Repeat("x", 254) + "[1,10]", "longer than 255 bytes"},
	} {
		_, err := Expand(tc.expr)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Expand(%q) error = %v, want one containing %q", tc.expr, err, tc.want)
		}
	}
}

func TestExpandLimitIsInclusive(t *testing.T) {
	hosts, err := Expand("n[1-" + strconv.Itoa(maxHosts) + "]")
	if err != nil || len(hosts) != maxHosts {
		t.Fatalf("got %d hosts, err %v; want exactly %d", len(hosts), err, maxHosts)
	}
	if _, err := Expand("n[1-" + strconv.Itoa(maxHosts) + "],extra"); err == nil {
		t.Fatalf("one host past the limit was accepted")
	}
}

// FuzzExpand checks that Expand never panics and, when it accepts an
// expression, returns as many hosts as an independent count of its ranges
// predicts, each of them a plain name that expands to itself.
func FuzzExpand(f *testing.F) {
	for _, seed := range []string{
		"n[01-04,07]", "rack[1-2]-node[1-3]", "a,b,c", "n[1-4", "n[]", "x[9-10]y[1,3-4]",
		"[1-3]", "a,,b", "n[4-1]", "n[0-999999]", "p[000-002],q",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, expr string) {
		hosts, err := Expand(expr)
		if err != nil {
			return
		}
		if want := countByRanges(t, expr); len(hosts) != want {
			t.Fatalf("Expand(%q) gave %d hosts, ranges predict %d", expr, len(hosts), want)
		}
		for _, h := range hosts {
			if h == "" || strings.ContainsAny(h, "[], \t") {
				t.Fatalf("Expand(%q) produced host %q", expr, h)
			}
		}
		if again, err := Expand(hosts[0]); err != nil || !slices.Equal(again, hosts[:1]) {
			t.Fatalf("Expand(%q) = %q, %v; a plain host must expand to itself", hosts[0], again, err)
		}
	})
}

var (
	topLevelHost = regexp.MustCompile(`(?:[^,\[]|\[[^\]]*\])+`)
	bracketGroup = regexp.MustCompile(`\[([^\]]*)\]`)
)

// countByRanges predicts how many hosts an accepted expression expands to:
// summed over its top-level hosts, the product over bracket groups of the
// summed range sizes. It parses differently from Expand on purpose.
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
					t.Fatalf("Expand accepted %q but range %q does not parse", expr, r)
				}
				size += int(h-l) + 1
			}
			product *= size
		}
		total += product
	}
	return total
}
