package slurm

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/cockroachdb/errors"
)

// TimeString is a duration as squeue prints TIME and TIME_LIMIT
// (_print_secs in squeue/print.c): [days-][hours:]minutes:seconds, "0:00"
// for none.
func TimeString(d time.Duration) string {
	s := int64(d / time.Second)
	if s < 0 {
		s = 0
	}
	days, h, m, sec := s/86400, s/3600%24, s/60%60, s%60
	switch {
	case days > 0:
		return fmt.Sprintf("%d-%02d:%02d:%02d", days, h, m, sec)
	case h > 0:
		return fmt.Sprintf("%d:%02d:%02d", h, m, sec)
	}
	return fmt.Sprintf("%d:%02d", m, sec)
}

// Elapsed is a duration as sacct prints Elapsed and scontrol RunTime and
// TimeLimit (secs2time_str): [days-]HH:MM:SS.
func Elapsed(d time.Duration) string {
	s := int64(d / time.Second)
	if s < 0 {
		s = 0
	}
	days, h, m, sec := s/86400, s/3600%24, s/60%60, s%60
	if days > 0 {
		return fmt.Sprintf("%d-%02d:%02d:%02d", days, h, m, sec)
	}
	return fmt.Sprintf("%02d:%02d:%02d", h, m, sec)
}

// ParseDateTime parses sacct's -S/--starttime (sacct(1)), in now's time
// zone:
//
//	YYYY-MM-DD[THH:MM[:SS]]
//	MM/DD[/YY][-HH:MM[:SS]]
//	MMDD[YY][-HH:MM[:SS]]
//	HH:MM[:SS]                   today
//	today, midnight, noon, now[{+|-}N[seconds|minutes|hours|days|weeks]]
func ParseDateTime(s string, now time.Time) (time.Time, error) {
	loc := now.Location()
	y, mo, d := now.Date()
	today := time.Date(y, mo, d, 0, 0, 0, 0, loc)
	low := strings.ToLower(strings.TrimSpace(s))
	switch {
	case low == "today" || low == "midnight":
		return today, nil
	case low == "noon":
		return today.Add(12 * time.Hour), nil
	case strings.HasPrefix(low, "now"):
		return relative(low[3:], now, s)
	}
	date, clock, hasClock := strings.Cut(s, "T")
	if !hasClock {
		date, clock, hasClock = cutDateClock(s)
	}
	if !hasClock && strings.Contains(s, ":") {
		date, clock, hasClock = "", s, true
	}
	day := today
	if date != "" {
		var err error
		if day, err = parseDate(date, now); err != nil {
			return time.Time{}, errors.Wrapf(err, "%q", s)
		}
	}
	if !hasClock {
		return day, nil
	}
	hms := strings.Split(clock, ":")
	if len(hms) < 2 || len(hms) > 3 {
		return time.Time{}, errors.Newf("%q: time of day %q is not HH:MM[:SS]", s, clock)
	}
	var parts [3]int
	limits := [3]int{23, 59, 59}
	for i, p := range hms {
		n, err := strconv.Atoi(p)
		if err != nil || n < 0 || n > limits[i] || len(p) > 2 {
			return time.Time{}, errors.Newf("%q: time of day %q is not HH:MM[:SS]", s, clock)
		}
		parts[i] = n
	}
	return day.Add(time.Duration(parts[0])*time.Hour + time.Duration(parts[1])*time.Minute + time.Duration(parts[2])*time.Second), nil
}

// cutDateClock splits "MM/DD-HH:MM" and "MMDD-HH:MM" (not
// "YYYY-MM-DD", whose dashes are the date's).
func cutDateClock(s string) (date, clock string, ok bool) {
	i := strings.LastIndexByte(s, '-')
	if i < 0 || !strings.Contains(s[i:], ":") {
		return s, "", false
	}
	return s[:i], s[i+1:], true
}

func parseDate(s string, now time.Time) (time.Time, error) {
	loc := now.Location()
	for _, layout := range []string{"2006-01-02", "01/02/06", "010206"} {
		if t, err := time.ParseInLocation(layout, s, loc); err == nil {
			return t, nil
		}
	}
	for _, layout := range []string{"01/02", "0102"} {
		if t, err := time.ParseInLocation(layout, s, loc); err == nil {
			return time.Date(now.Year(), t.Month(), t.Day(), 0, 0, 0, 0, loc), nil
		}
	}
	return time.Time{}, errors.Newf("date %q is not YYYY-MM-DD, MM/DD[/YY] or MMDD[YY]", s)
}

var units = map[string]time.Duration{
	"": time.Second, "s": time.Second, "sec": time.Second, "secs": time.Second, "second": time.Second, "seconds": time.Second,
	"min": time.Minute, "mins": time.Minute, "minute": time.Minute, "minutes": time.Minute,
	"h": time.Hour, "hour": time.Hour, "hours": time.Hour,
	"d": 24 * time.Hour, "day": 24 * time.Hour, "days": 24 * time.Hour,
	"w": 7 * 24 * time.Hour, "week": 7 * 24 * time.Hour, "weeks": 7 * 24 * time.Hour,
}

// maxRelative bounds now±N.
const maxRelative = 100000 * 24 * time.Hour

// relative parses now's tail: "", "-3days", "+30minutes".
func relative(rest string, now time.Time, orig string) (time.Time, error) {
	if rest == "" {
		return now, nil
	}
	sign, op := time.Duration(1), rest[0]
	switch op {
	case '-':
		sign = -1
	case '+':
	default:
		return time.Time{}, errors.Newf("%q: want now, now-N[units] or now+N[units]", orig)
	}
	rest = rest[1:]
	i := 0
	for i < len(rest) && rest[i] >= '0' && rest[i] <= '9' {
		i++
	}
	n, err := strconv.Atoi(rest[:i])
	unit, ok := units[rest[i:]]
	if err != nil || !ok {
		return time.Time{}, errors.Newf("%q: want now%cN with units seconds, minutes, hours, days or weeks", orig, op)
	}
	// At most 100,000 days in any unit: more weeks than that would
	// overflow a Duration and wrap to a time on the other side of now.
	if time.Duration(n) > maxRelative/unit {
		return time.Time{}, errors.Newf("%q: at most 100000 days from now", orig)
	}
	return now.Add(sign * time.Duration(n) * unit), nil
}
