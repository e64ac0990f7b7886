package slurmenv

import (
	"strconv"
	"strings"

	"github.com/cockroachdb/errors"
)

// MaxHostlistHosts bounds ExpandHostlist: an expression naming more hosts
// is refused rather than expanded (Slurm's own bound is its 64K
// MAX_SLURM_NODES).
const MaxHostlistHosts = 65536

// maxHostnameLen bounds one expanded name (DNS names are at most 253), so
// that MaxHostlistHosts names cannot take unbounded memory.
const maxHostnameLen = 255

// maxSuffixDigits is the longest numeric suffix read as a number; a longer
// one could overflow, so such a name is kept whole, like a name without
// digits.
const maxSuffixDigits = 18

// hostRange is Slurm's hostrange_t: prefix followed by the numbers lo..hi
// zero-padded to width, or (single) one name with no numeric part.
type hostRange struct {
	prefix string
	lo, hi uint64
	width  int
	single bool
}

func (r hostRange) count() int {
	if r.single {
		return 1
	}
	return int(r.hi-r.lo) + 1
}

// hostList is Slurm's hostlist_t: ranges in order, adjacent ones merged
// as they are pushed.
type hostList struct {
	ranges []hostRange
	n      int
}

// push appends r, extending the last range instead when r continues it:
// same prefix, next number, compatible padding (hostlist_push_range).
func (l *hostList) push(r hostRange) {
	if k := len(l.ranges); k > 0 {
		t := &l.ranges[k-1]
		if !t.single && !r.single && r.lo > 0 && t.hi == r.lo-1 && t.prefix == r.prefix &&
			widthEquiv(t.lo, &t.width, r.lo, &r.width) {
			t.hi = r.hi
			l.n += r.count()
			return
		}
	}
	l.ranges = append(l.ranges, r)
	l.n += r.count()
}

// zeroPad is how many zeros printing num in width adds.
func zeroPad(num uint64, width int) int {
	return max(width-len(strconv.FormatUint(num, 10)), 0)
}

// widthEquiv reports whether numbers n (printed in width *wn) and m (in
// *wm) can share one width without changing how either prints, and if so
// sets both to it (Slurm's _width_equiv). n9 and n10 share width 1; n1 and
// n02 cannot.
func widthEquiv(n uint64, wn *int, m uint64, wm *int) bool {
	if *wn == *wm {
		return true
	}
	npad, nmpad := zeroPad(n, *wn), zeroPad(n, *wm)
	mpad, mnpad := zeroPad(m, *wm), zeroPad(m, *wn)
	switch {
	case npad != nmpad && mpad != mnpad:
		return false
	case npad != nmpad:
		*wm = *wn
	default:
		*wn = *wm
	}
	return true
}

func formatNum(n uint64, width int) string {
	s := strconv.FormatUint(n, 10)
	if len(s) < width {
		s = strings.Repeat("0", width-len(s)) + s
	}
	return s
}

// ExpandHostlist expands a Slurm hostlist expression into host names in
// the order `scontrol show hostnames` prints them, duplicates kept:
// "node-[01-03,07],gpu[1-2]-a" is node-01 node-02 node-03 node-07 gpu1-a
// gpu2-a. Names are separated by commas or white space outside brackets; a
// range keeps the zero padding of its first number ("[08-10]" is 08 09
// 10); a name may hold several bracket groups ("rack[0-1]_blade[2,3]"),
// expanded in Slurm's order, and text after the last group.
//
// It is stricter than Slurm where Slurm silently guesses: a range must be
// digits, lo-hi with lo <= hi; brackets must balance. An expression of
// more than MaxHostlistHosts hosts is an error.
func ExpandHostlist(expr string) ([]string, error) {
	l, err := parseHostlist(expr)
	if err != nil {
		return nil, err
	}
	out := make([]string, 0, l.n)
	for _, r := range l.ranges {
		if r.single {
			out = append(out, r.prefix)
			continue
		}
		for i := r.lo; ; i++ {
			out = append(out, r.prefix+formatNum(i, r.width))
			if i == r.hi {
				break
			}
		}
	}
	return out, nil
}

// CompressHostlist writes names as a Slurm hostlist expression, as
// `scontrol show hostlist` does: in the given order, neither sorted nor
// made unique ("tux2,tux1,tux2" is "tux[2,1-2]"), consecutive numbers
// with one prefix and compatible padding joined into ranges, padding kept
// ("n08,n09,n10" is "n[08-10]"). Only a trailing number is ranged, so
// "gpu1-a,gpu2-a" stays as it is. ExpandHostlist of the result gives
// names back.
//
// A name that is empty or holds a character the syntax reserves (comma,
// white space, a bracket) is an error.
func CompressHostlist(names []string) (string, error) {
	var l hostList
	for _, name := range names {
		if err := checkHostname(name); err != nil {
			return "", err
		}
		l.push(hostRangeOf(name))
	}
	return l.String(), nil
}

// String is the ranged form (hostlist_ranged_string): ranges with one
// prefix that follow each other share a bracket.
func (l *hostList) String() string {
	var b strings.Builder
	rs := l.ranges
	for i := 0; i < len(rs); {
		if i > 0 {
			b.WriteByte(',')
		}
		bracket := rs[i].count() > 1 || (i+1 < len(rs) && sameBracket(rs[i], rs[i+1]))
		b.WriteString(rs[i].prefix)
		if bracket {
			b.WriteByte('[')
		}
		start := i
		for {
			if i > start {
				b.WriteByte(',')
			}
			r := rs[i]
			if !r.single {
				b.WriteString(formatNum(r.lo, r.width))
				if r.hi > r.lo {
					b.WriteByte('-')
					b.WriteString(formatNum(r.hi, r.width))
				}
			}
			i++
			if i >= len(rs) || !sameBracket(rs[i], rs[i-1]) {
				break
			}
		}
		if bracket {
			b.WriteByte(']')
		}
	}
	return b.String()
}

// sameBracket is hostrange_within_range: two numbered ranges of one prefix.
func sameBracket(a, b hostRange) bool {
	return a.prefix == b.prefix && !a.single && !b.single
}

// hostRangeOf splits a name into prefix and trailing number
// (hostname_create): "node-07" is node- 7 width 2; "login" has no number.
func hostRangeOf(name string) hostRange {
	i := len(name)
	for i > 0 && name[i-1] >= '0' && name[i-1] <= '9' {
		i--
	}
	digits := name[i:]
	if digits == "" || len(digits) > maxSuffixDigits {
		return hostRange{prefix: name, single: true}
	}
	n, _ := strconv.ParseUint(digits, 10, 64) // at most 18 digits: cannot fail
	return hostRange{prefix: name[:i], lo: n, hi: n, width: len(digits)}
}

func checkHostname(name string) error {
	if name == "" {
		return errors.New("empty host name")
	}
	if i := strings.IndexAny(name, "[], \t\n"); i >= 0 {
		return errors.Newf("host name %q contains %q, which hostlist syntax reserves", name, name[i])
	}
	if len(name) > maxHostnameLen {
		return errors.Newf("host name %.20q... is longer than %d bytes", name, maxHostnameLen)
	}
	return nil
}

func parseHostlist(expr string) (*hostList, error) {
	l := &hostList{}
	toks, err := hostlistTokens(expr)
	if err != nil {
		return nil, err
	}
	for _, tok := range toks {
		if err := l.pushToken(tok); err != nil {
			return nil, errors.Wrapf(err, "hostlist %q", tok)
		}
	}
	return l, nil
}

// hostlistTokens splits at commas and white space outside brackets
// (_next_tok).
func hostlistTokens(expr string) ([]string, error) {
	var toks []string
	depth, start := 0, 0
	for i := 0; i <= len(expr); i++ {
		if i == len(expr) || (depth == 0 && isHostlistSep(expr[i])) {
			if i > start {
				toks = append(toks, expr[start:i])
			}
			start = i + 1
			continue
		}
		switch expr[i] {
		case '[':
			depth++
			if depth > 1 {
				return nil, errors.Newf("hostlist %q: nested '['", expr)
			}
		case ']':
			if depth == 0 {
				return nil, errors.Newf("hostlist %q: ']' without '['", expr)
			}
			depth--
		}
	}
	if depth != 0 {
		return nil, errors.Newf("hostlist %q: '[' without ']'", expr)
	}
	return toks, nil
}

func isHostlistSep(c byte) bool { return c == ',' || c == ' ' || c == '\t' || c == '\n' }

// pushToken adds one name or bracketed expression: the last bracket group
// gives the numbers, text after it is a suffix, earlier groups multiply
// the prefix (_hostlist_create_bracketed, _push_range_list).
func (l *hostList) pushToken(tok string) error {
	open := strings.LastIndexByte(tok, '[')
	if open < 0 {
		if err := checkHostname(tok); err != nil {
			return err
		}
		return l.pushChecked(hostRangeOf(tok))
	}
	end := strings.IndexByte(tok[open:], ']') + open // balanced: found
	ranges, err := parseRangeList(tok[open+1 : end])
	if err != nil {
		return err
	}
	return l.pushRangeList(tok[:open], tok[end+1:], ranges)
}

// pushRangeList pushes prefix+range+suffix for every range, expanding the
// last bracket group of prefix first (for each of its numbers, recursing
// into the groups before it), as Slurm orders them.
func (l *hostList) pushRangeList(prefix, suffix string, ranges []hostRange) error {
	open := strings.LastIndexByte(prefix, '[')
	if open < 0 {
		for _, r := range ranges {
			if err := l.pushWithSuffix(prefix, suffix, r); err != nil {
				return err
			}
		}
		return nil
	}
	end := strings.IndexByte(prefix[open:], ']') + open
	groups, err := parseRangeList(prefix[open+1 : end])
	if err != nil {
		return err
	}
	base, rest := prefix[:open], prefix[end+1:]
	for _, g := range groups {
		for j := g.lo; ; j++ {
			if err := l.pushRangeList(base+formatNum(j, g.width)+rest, suffix, ranges); err != nil {
				return err
			}
			if j == g.hi {
				break
			}
		}
	}
	return nil
}

// pushWithSuffix is hostlist_push_hr: with a suffix each name is pushed
// whole (Slurm ranges only a trailing number); without one the range is
// pushed as a range.
func (l *hostList) pushWithSuffix(prefix, suffix string, r hostRange) error {
	if suffix == "" {
		r.prefix = prefix
		if len(prefix)+max(r.width, len(strconv.FormatUint(r.hi, 10))) > maxHostnameLen {
			return errors.Newf("host names would be longer than %d bytes", maxHostnameLen)
		}
		return l.pushChecked(r)
	}
	for i := r.lo; ; i++ {
		name := prefix + formatNum(i, r.width) + suffix
		if len(name) > maxHostnameLen {
			return errors.Newf("host name %.20q... is longer than %d bytes", name, maxHostnameLen)
		}
		if err := l.pushChecked(hostRange{prefix: name, single: true}); err != nil {
			return err
		}
		if i == r.hi {
			break
		}
	}
	return nil
}

func (l *hostList) pushChecked(r hostRange) error {
	if l.n+r.count() > MaxHostlistHosts {
		return errors.Newf("more than %d hosts", MaxHostlistHosts)
	}
	l.push(r)
	return nil
}

// parseRangeList parses the inside of a bracket: comma-separated numbers
// and lo-hi ranges; the width of each is the length of its first number.
func parseRangeList(s string) ([]hostRange, error) {
	var out []hostRange
	total := 0
	for _, item := range strings.Split(s, ",") {
		lo, hi, isRange := strings.Cut(item, "-")
		if !IsDigits(lo) || (isRange && !IsDigits(hi)) {
			return nil, errors.Newf("invalid range %q: want N or N-M, decimal digits", item)
		}
		if len(lo) > maxSuffixDigits || len(hi) > maxSuffixDigits {
			return nil, errors.Newf("invalid range %q: number too large", item)
		}
		r := hostRange{width: len(lo)}
		r.lo, _ = strconv.ParseUint(lo, 10, 64)
		r.hi = r.lo
		if isRange {
			r.hi, _ = strconv.ParseUint(hi, 10, 64)
		}
		if r.lo > r.hi {
			return nil, errors.Newf("invalid range %q: %s is more than %s", item, lo, hi)
		}
		if r.hi-r.lo >= MaxHostlistHosts {
			return nil, errors.Newf("range %q has more than %d hosts", item, MaxHostlistHosts)
		}
		total += r.count()
		if total > MaxHostlistHosts {
			return nil, errors.Newf("more than %d hosts", MaxHostlistHosts)
		}
		out = append(out, r)
	}
	return out, nil
}
