package slurm

import (
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/cockroachdb/errors"

	"github.com/lockstep-dev/lockstep/shared/contract/slurmenv"
)

// Time is a Slurm time value (--time, the wait of --switches): a
// duration, or no limit at all.
type Time struct {
	Duration  time.Duration
	Unlimited bool
}

// maxTimeSeconds is the largest time Slurm's time_str2secs can return
// (an int of seconds); anything larger overflows there.
const maxTimeSeconds = math.MaxInt32

// ParseTime parses Slurm's time formats, as time_str2secs does: "minutes",
// "minutes:seconds", "hours:minutes:seconds", "days-hours",
// "days-hours:minutes", "days-hours:minutes:seconds", and "UNLIMITED",
// "INFINITE" or "-1" (any case) for no limit. Fields are plain decimal
// numbers and may exceed their unit ("90" minutes, "1:60:15").
//
// "0" is a zero Duration here; --time reads it as no limit, as sbatch does.
func ParseTime(s string) (Time, error) {
	switch strings.ToUpper(s) {
	case "-1", "INFINITE", "UNLIMITED":
		return Time{Unlimited: true}, nil
	case "":
		return Time{}, errors.New("empty time")
	}
	var days, rest string
	var hasDays bool
	if d, r, ok := strings.Cut(s, "-"); ok {
		days, rest, hasDays = d, r, true
	} else {
		rest = s
	}
	fields := strings.Split(rest, ":")
	if len(fields) > 3 {
		return Time{}, errors.Newf("%q has more than three ':'-separated fields", s)
	}
	nums := make([]int64, len(fields))
	for i, f := range fields {
		n, err := timeField(f)
		if err != nil {
			return Time{}, errors.Wrapf(err, "time %q", s)
		}
		nums[i] = n
	}
	var secs int64
	if hasDays {
		d, err := timeField(days)
		if err != nil {
			return Time{}, errors.Wrapf(err, "time %q", s)
		}
		// days-hours[:minutes[:seconds]]
		secs = d * 86400
		units := []int64{3600, 60, 1}
		for i, n := range nums {
			secs += n * units[i]
		}
	} else {
		switch len(nums) {
		case 1: // minutes
			secs = nums[0] * 60
		case 2: // minutes:seconds
			secs = nums[0]*60 + nums[1]
		case 3: // hours:minutes:seconds
			secs = nums[0]*3600 + nums[1]*60 + nums[2]
		}
	}
	if secs > maxTimeSeconds {
		return Time{}, errors.Newf("time %q is too long (more than %d seconds)", s, maxTimeSeconds)
	}
	return Time{Duration: time.Duration(secs) * time.Second}, nil
}

// timeField is one number of a time: 1 to 9 decimal digits, so that no
// product above overflows.
func timeField(f string) (int64, error) {
	if f == "" {
		return 0, errors.New("a field is empty")
	}
	if len(f) > 9 {
		return 0, errors.Newf("field %q is too large", f)
	}
	for _, c := range f {
		if c < '0' || c > '9' {
			return 0, errors.Newf("field %q is not a number", f)
		}
	}
	return strconv.ParseInt(f, 10, 64)
}

// Switches is --switches=count[@max-time]: at most Count leaf switches,
// waited for up to Wait (nil: the cluster's default).
type Switches struct {
	Count int
	Wait  *Time
}

// ParseSwitches parses --switches's value, count[@max-time]; max-time in
// any ParseTime format.
func ParseSwitches(s string) (Switches, error) {
	count, wait, hasWait := strings.Cut(s, "@")
	n, err := positiveInt(count)
	if err != nil {
		return Switches{}, errors.Wrap(err, "switch count")
	}
	sw := Switches{Count: n}
	if hasWait {
		t, err := ParseTime(wait)
		if err != nil {
			return Switches{}, errors.Wrap(err, "max-time")
		}
		sw.Wait = &t
	}
	return sw, nil
}

// Signal is --signal=[{R|B}:]<sig_num>[@sig_time]: send Name (Number)
// Time before the end.
type Signal struct {
	// Name is the signal's name without "SIG" ("USR1"), or "" for a
	// number that has no name in Slurm's table.
	Name   string
	Number int
	// Time is how long before the end the signal is sent (sig_time,
	// seconds; 60 when not given).
	Time time.Duration
	// BatchOnly (B:) signals only the batch shell, not the steps.
	BatchOnly bool
	// Reservation (R:) lets the job overlap a reservation with
	// MaxStartDelay.
	Reservation bool
}

// DefaultSignalTime is sig_time when --signal gives none.
const DefaultSignalTime = 60 * time.Second

// signals is Slurm's table of signal names (proc_args.c), with their
// Linux numbers.
var signals = []struct {
	name string
	num  int
}{
	{"HUP", 1}, {"INT", 2}, {"QUIT", 3}, {"ABRT", 6}, {"KILL", 9},
	{"ALRM", 14}, {"TERM", 15}, {"CHLD", 17}, {"USR1", 10}, {"USR2", 12},
	{"PIPE", 13}, {"URG", 23}, {"CONT", 18}, {"STOP", 19}, {"TSTP", 20},
	{"TTIN", 21}, {"TTOU", 22}, {"XCPU", 24},
}

// ParseSignal parses --signal's value as get_signal_opts does: optional
// R and B flags (either order, then an optional ':'), a signal number or
// name (with or without SIG, any case), and an optional @sig_time of 0 to
// 65535 seconds.
func ParseSignal(s string) (Signal, error) {
	var sig Signal
	rest := s
	if hasFlag(rest, 'R') {
		sig.Reservation, rest = true, rest[1:]
	}
	if hasFlag(rest, 'B') {
		sig.BatchOnly, rest = true, rest[1:]
	}
	if !sig.Reservation && hasFlag(rest, 'R') {
		sig.Reservation, rest = true, rest[1:]
	}
	rest = strings.TrimPrefix(rest, ":")
	name, at, hasTime := strings.Cut(rest, "@")
	num, canon, err := signalNumber(name)
	if err != nil {
		return Signal{}, err
	}
	sig.Number, sig.Name = num, canon
	sig.Time = DefaultSignalTime
	if hasTime {
		t, err := strconv.Atoi(at)
		if err != nil || t < 0 || t > 0xffff || !slurmenv.IsDigits(at) {
			return Signal{}, errors.Newf("sig_time %q is not a number of seconds from 0 to 65535", at)
		}
		sig.Time = time.Duration(t) * time.Second
	}
	return sig, nil
}

func hasFlag(s string, c byte) bool {
	return len(s) > 0 && (s[0] == c || s[0] == c+'a'-'A')
}

func signalNumber(s string) (int, string, error) {
	if s == "" {
		return 0, "", errors.New("no signal given")
	}
	if slurmenv.IsDigits(s) {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 || n > 0xffff {
			return 0, "", errors.Newf("signal number %q is out of range", s)
		}
		for _, e := range signals {
			if e.num == n {
				return n, e.name, nil
			}
		}
		return n, "", nil
	}
	name := strings.ToUpper(s)
	name = strings.TrimPrefix(name, "SIG")
	for _, e := range signals {
		if e.name == name {
			return e.num, e.name, nil
		}
	}
	return 0, "", errors.Newf("unknown signal %q", s)
}
