package topology

import (
	"strconv"
	"strings"

	"github.com/cockroachdb/errors"
)

// maxHosts bounds what one hostlist expression may expand to. A typo such as
// n[1-1000000000] would otherwise allocate until the process dies; no real
// cluster comes close to this many nodes under one expression.
const maxHosts = 1 << 17

// maxHostName bounds one expanded name (the DNS limit). Together with
// maxHosts it caps an expansion at about 32 MiB: without it a long literal in
// front of a large range multiplies into gigabytes.
const maxHostName = 255

// Expand expands a Slurm hostlist expression into host names, in order.
//
//	n[01-04,07]          n01 n02 n03 n04 n07 (zero padding follows the lower bound)
//	rack[1-2]-node[1-2]  rack1-node1 rack1-node2 rack2-node1 rack2-node2
//	a,b,c                a b c (commas inside brackets do not separate hosts)
//
// Several bracket groups in one host expand to their cartesian product, the
// leftmost group varying slowest, as Slurm does. Duplicates are kept: callers
// that need unique names (Spec validation) report them with context.
func Expand(expr string) ([]string, error) {
	elems, err := splitHostlist(expr)
	if err != nil {
		return nil, errors.Wrapf(err, "hostlist %q", expr)
	}
	var out []string
	for _, e := range elems {
		hosts, err := expandHost(e, maxHosts-len(out))
		if err != nil {
			return nil, errors.Wrapf(err, "hostlist %q", expr)
		}
		out = append(out, hosts...)
	}
	return out, nil
}

// splitHostlist splits expr at the commas outside brackets and checks that
// brackets balance and do not nest, so expandHost sees one host pattern.
func splitHostlist(expr string) ([]string, error) {
	var elems []string
	start, open := 0, false
	for i := 0; i <= len(expr); i++ {
		var c byte = ',' // the end of expr closes the last host like a comma
		if i < len(expr) {
			c = expr[i]
		}
		switch {
		case c == '[' && open:
			return nil, errors.Newf("nested '[' at offset %d", i)
		case c == '[':
			open = true
		case c == ']' && !open:
			return nil, errors.Newf("']' without '[' at offset %d", i)
		case c == ']':
			open = false
		case c == ',' && i == len(expr) && open:
			return nil, errors.New("unclosed '['")
		case c == ',' && !open:
			e := strings.TrimSpace(expr[start:i])
			if e == "" {
				return nil, errors.Newf("empty host name at offset %d", start)
			}
			if strings.ContainsFunc(e, isSpace) {
				return nil, errors.Newf("host %q contains whitespace", e)
			}
			elems = append(elems, e)
			start = i + 1
		}
	}
	return elems, nil
}

func isSpace(r rune) bool { return r == ' ' || r == '\t' || r == '\n' || r == '\r' }

// expandHost expands one host pattern (no top-level commas, balanced
// brackets) into at most budget names.
func expandHost(pattern string, budget int) ([]string, error) {
	if budget < 1 {
		return nil, errors.Newf("expands to more than %d hosts", maxHosts)
	}
	// Parse into alternating literal text and bracket groups first, so the
	// size is known (and bounded) before anything is allocated.
	var segments [][]string
	count, nameLen := 1, 0
	rest := pattern
	for rest != "" {
		i := strings.IndexByte(rest, '[')
		if i < 0 {
			segments = append(segments, []string{rest})
			nameLen += len(rest)
			break
		}
		if i > 0 {
			segments = append(segments, []string{rest[:i]})
			nameLen += i
		}
		j := strings.IndexByte(rest, ']') // splitHostlist guarantees j > i
		values, err := expandGroup(rest[i+1:j], budget/count)
		if err != nil {
			return nil, errors.Wrapf(err, "host %q", pattern)
		}
		count *= len(values)
		longest := 0
		for _, v := range values {
			longest = max(longest, len(v))
		}
		nameLen += longest
		segments = append(segments, values)
		rest = rest[j+1:]
	}
	if nameLen > maxHostName {
		return nil, errors.Newf("host %q expands to names longer than %d bytes", pattern, maxHostName)
	}
	out := []string{""}
	for _, seg := range segments {
		next := make([]string, 0, len(out)*len(seg))
		for _, prefix := range out {
			for _, v := range seg {
				next = append(next, prefix+v)
			}
		}
		out = next
	}
	return out, nil
}

// expandGroup expands the inside of one bracket group, "01-04,07", into at
// most budget values.
func expandGroup(group string, budget int) ([]string, error) {
	if group == "" {
		return nil, errors.New("empty []")
	}
	var out []string
	for _, r := range strings.Split(group, ",") {
		loText, hiText, isRange := strings.Cut(r, "-")
		if !isRange {
			hiText = loText
		}
		lo, err := parseBound(loText, r)
		if err != nil {
			return nil, err
		}
		hi, err := parseBound(hiText, r)
		if err != nil {
			return nil, err
		}
		if hi < lo {
			return nil, errors.Newf("range %q runs backwards", r)
		}
		if hi-lo >= uint64(budget-len(out)) {
			return nil, errors.Newf("expands to more than %d hosts", maxHosts)
		}
		// Slurm pads every value to the width of the lower bound as written:
		// [08-10] gives 08 09 10, [8-10] gives 8 9 10.
		width := len(loText)
		for v := lo; ; v++ {
			s := strconv.FormatUint(v, 10)
			if pad := width - len(s); pad > 0 {
				s = strings.Repeat("0", pad) + s
			}
			out = append(out, s)
			if v == hi {
				break
			}
		}
	}
	return out, nil
}

func parseBound(s, item string) (uint64, error) {
	if s == "" || strings.TrimLeft(s, "0123456789") != "" {
		return 0, errors.Newf("%q is not a number or number range", item)
	}
	v, err := strconv.ParseUint(s, 10, 64)
	if err != nil {
		return 0, errors.Newf("%q: number out of range", item)
	}
	return v, nil
}
