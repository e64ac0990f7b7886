package slurm

import (
	"strings"
	"testing"
	"time"
)

// Cases from Slurm's testsuite/slurm_unit/common/parse_time-test.c
// (time_str2secs) and sbatch(1) --time's formats.
func TestParseTime(t *testing.T) {
	const (
		s = time.Second
		m = time.Minute
		h = time.Hour
		d = 24 * time.Hour
	)
	for _, tc := range []struct {
		in        string
		want      time.Duration
		unlimited bool
	}{
		{"-1", 0, true},
		{"INFINITE", 0, true},
		{"infinite", 0, true},
		{"UNLIMITED", 0, true},
		{"unlimited", 0, true},
		{"0", 0, false},
		{"60", 60 * m, false},                 // minutes
		{"60:15", 60*m + 15*s, false},         // minutes:seconds
		{"60:0", 60 * m, false},               // minutes:seconds
		{"1:60:15", h + 60*m + 15*s, false},   // hours:minutes:seconds
		{"2:60:15", 2*h + 60*m + 15*s, false}, // fields may exceed their unit
		{"0:0:15", 15 * s, false},             // hours:minutes:seconds
		{"0:60:0", 60 * m, false},             // hours:minutes:seconds
		{"0:0:0", 0, false},                   // hours:minutes:seconds
		{"0-1:60:15", h + 60*m + 15*s, false}, // days-hours:minutes:seconds
		{"1-1:60:15", d + h + 60*m + 15*s, false},
		{"365-1:60:15", 365*d + h + 60*m + 15*s, false},
		{"365-0:0:0", 365 * d, false},
		{"4-12", 4*d + 12*h, false},           // days-hours
		{"4-12:15", 4*d + 12*h + 15*m, false}, // days-hours:minutes
		{"00:15:00", 15 * m, false},           // the seed's --switches wait
		{"2-02:30:00", 2*d + 2*h + 30*m, false},
	} {
		checkParse(t, "ParseTime", ParseTime, tc.in, Time{Duration: tc.want, Unlimited: tc.unlimited})
	}
}

func TestParseTimeErrors(t *testing.T) {
	checkRejects(t, "ParseTime", ParseTime,
		// parse_time-test.c's NO_VAL cases.
		"", "INVALID TIME", "60:", "60:-10", "-60:10", "-0:-0:-0", " 0:0:0 ",
		"LONG "+strings.Repeat("-", 200)+" INVALID TIME",
		// Stricter than Slurm, which reads these as something.
		"1-", "-5", "1:2:3:4", "1-2-3", "1-2:3:4:5", "1.5", "+5", "0x10",
		"9999999999", // overflows Slurm's int
		"1000000-0",  // more seconds than an int holds
	)
}

func TestParseSwitches(t *testing.T) {
	for _, tc := range []struct {
		in    string
		count int
		wait  string // "" none, "unlimited", or a duration
	}{
		{"1", 1, ""},
		{"1@00:15:00", 1, "15m0s"},
		{"4@30", 4, "30m0s"},
		{"2@1-0", 2, "24h0m0s"},
		{"2@0", 2, "0s"},
		{"2@UNLIMITED", 2, "unlimited"},
	} {
		got, err := ParseSwitches(tc.in)
		if err != nil {
			t.Errorf("ParseSwitches(%q): %v", tc.in, err)
			continue
		}
		wait := ""
		switch {
		case got.Wait == nil:
		case got.Wait.Unlimited:
			wait = "unlimited"
		default:
			wait = got.Wait.Duration.String()
		}
		if got.Count != tc.count || wait != tc.wait {
			t.Errorf("ParseSwitches(%q) = %d@%q, want %d@%q", tc.in, got.Count, wait, tc.count, tc.wait)
		}
	}
	checkRejects(t, "ParseSwitches", ParseSwitches, "", "0", "-1", "x", "1@", "1@x", "1@1:2:3:4")
}

// sbatch(1) --signal: [{R|B}:]<sig_num>[@sig_time], a number or name,
// sig_time 0 to 65535 seconds, 60 by default.
func TestParseSignal(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want Signal
	}{
		{"USR1", Signal{Name: "USR1", Number: 10, Time: 60 * time.Second}},
		{"10", Signal{Name: "USR1", Number: 10, Time: 60 * time.Second}},
		{"SIGUSR2@90", Signal{Name: "USR2", Number: 12, Time: 90 * time.Second}},
		{"sigterm@0", Signal{Name: "TERM", Number: 15}},
		{"B:USR1@300", Signal{Name: "USR1", Number: 10, Time: 300 * time.Second, BatchOnly: true}},
		{"R:INT", Signal{Name: "INT", Number: 2, Time: 60 * time.Second, Reservation: true}},
		{"RB:HUP@65535", Signal{Name: "HUP", Number: 1, Time: 65535 * time.Second, BatchOnly: true, Reservation: true}},
		{"BR:HUP", Signal{Name: "HUP", Number: 1, Time: 60 * time.Second, BatchOnly: true, Reservation: true}},
		{"b:usr1", Signal{Name: "USR1", Number: 10, Time: 60 * time.Second, BatchOnly: true}},
		{"40", Signal{Number: 40, Time: 60 * time.Second}},
	} {
		checkParse(t, "ParseSignal", ParseSignal, tc.in, tc.want)
	}
	checkRejects(t, "ParseSignal", ParseSignal, "", "@60", "USR3", "0", "65536", "USR1@", "USR1@-1", "USR1@65536", "USR1@1m", "B:", "X:USR1")
}
