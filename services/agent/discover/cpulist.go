package discover

import (
	"slices"
	"strconv"
	"strings"

	"github.com/cockroachdb/errors"
)

// MaxCPUID bounds CPU numbers in a cpulist. Linux's NR_CPUS tops out at 8192;
// the margin keeps real machines working while a hostile "0-4294967295"
// cannot make us allocate gigabytes.
const MaxCPUID = 1<<16 - 1

// ParseCPUList parses the Linux cpulist format ("0-55,112-167", "3",
// "0-7:2" for strided ranges, "" for none) into sorted, distinct CPU numbers.
func ParseCPUList(s string) ([]int, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return nil, nil
	}
	var cpus []int
	for part := range strings.SplitSeq(s, ",") {
		lo, hi, stride, err := parseCPURange(part)
		if err != nil {
			return nil, errors.Wrapf(err, "cpulist %q", truncate(s))
		}
		for c := lo; c <= hi; c += stride {
			cpus = append(cpus, c)
		}
	}
	slices.Sort(cpus)
	return slices.Compact(cpus), nil
}

// parseCPURange parses one comma-separated element: "N", "A-B" or "A-B:S"
// (the strided form the kernel accepts, e.g. in isolcpus).
func parseCPURange(part string) (lo, hi, stride int, err error) {
	stride = 1
	rng, step, strided := strings.Cut(part, ":")
	if strided {
		if stride, err = cpuNumber(step); err != nil || stride == 0 {
			return 0, 0, 0, errors.Newf("bad stride in %q", part)
		}
	}
	a, b, isRange := strings.Cut(rng, "-")
	if lo, err = cpuNumber(a); err != nil {
		return 0, 0, 0, errors.Wrapf(err, "element %q", part)
	}
	hi = lo
	if isRange {
		if hi, err = cpuNumber(b); err != nil {
			return 0, 0, 0, errors.Wrapf(err, "element %q", part)
		}
	} else if strided {
		return 0, 0, 0, errors.Newf("stride without a range in %q", part)
	}
	if hi < lo {
		return 0, 0, 0, errors.Newf("range %q runs backwards", part)
	}
	return lo, hi, stride, nil
}

func cpuNumber(s string) (int, error) {
	// Atoi alone would accept "+3" and "-0"; the kernel never writes them.
	if s == "" || strings.TrimLeft(s, "0123456789") != "" {
		return 0, errors.Newf("%q is not a CPU number", s)
	}
	n, err := strconv.Atoi(s)
	if err != nil || n > MaxCPUID {
		return 0, errors.Newf("CPU number %q is above %d", s, MaxCPUID)
	}
	return n, nil
}

// FormatCPUList writes sorted, distinct CPU numbers back in cpulist form,
// collapsing runs: [0 1 2 5] → "0-2,5".
func FormatCPUList(cpus []int) string {
	var b strings.Builder
	for i := 0; i < len(cpus); {
		j := i
		for j+1 < len(cpus) && cpus[j+1] == cpus[j]+1 {
			j++
		}
		if b.Len() > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.Itoa(cpus[i]))
		if j > i {
			b.WriteByte('-')
			b.WriteString(strconv.Itoa(cpus[j]))
		}
		i = j + 1
	}
	return b.String()
}

// intersect returns the elements of sorted a that are also in sorted b.
func intersect(a, b []int) []int {
	out := []int{}
	for i, j := 0, 0; i < len(a) && j < len(b); {
		switch {
		case a[i] < b[j]:
			i++
		case a[i] > b[j]:
			j++
		default:
			out = append(out, a[i])
			i++
			j++
		}
	}
	return out
}

// truncate keeps error messages about hostile input short.
func truncate(s string) string {
	if len(s) > 64 {
		return s[:64] + "…"
	}
	return s
}
