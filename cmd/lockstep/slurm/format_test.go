package slurm

import (
	"strings"
	"testing"
	"time"

	"github.com/lockstep-dev/lockstep/shared/contract/domain"
)

const squeueFields = "ijuPtTMlDRCbNr"

// Formats from squeue(1): the default, the -l example and the man page's
// "%.18i %.9P %.8j %.8u %.2t %.10M %.6D %R".
func TestParseFormatRendersSlurmsDefault(t *testing.T) {
	f, err := ParseFormat("%.18i %.9P %.8j %.8u %.2t %.10M %.6D %R", squeueFields)
	if err != nil {
		t.Fatal(err)
	}
	header := map[byte]string{'i': "JOBID", 'P': "PARTITION", 'j': "NAME", 'u': "USER", 't': "ST", 'M': "TIME", 'D': "NODES", 'R': "NODELIST(REASON)"}
	got := f.Render(func(b byte) string { return header[b] })
	// squeue's own header line for the default format.
	want := "             JOBID PARTITION     NAME     USER ST       TIME  NODES NODELIST(REASON)"
	if got != want {
		t.Errorf("header\n got %q\nwant %q", got, want)
	}
	row := map[byte]string{'i': "65646", 'P': "batch", 'j': "chem_long_name", 'u': "mike", 't': "R", 'M': "24:19", 'D': "2", 'R': "adev[7-8]"}
	got = f.Render(func(b byte) string { return row[b] })
	want = "             65646     batch chem_lon     mike  R      24:19      2 adev[7-8]"
	if got != want {
		t.Errorf("row\n got %q\nwant %q", got, want)
	}
}

func TestParseFormat(t *testing.T) {
	vals := map[byte]string{'i': "42", 'j': "train", 't': "PD", 'u': "alice"}
	for _, tc := range []struct{ format, want string }{
		{"%i", "42"},
		{"%i %t", "42 PD"},
		{"%.5i|", "   42|"},
		{"%5i|", "42   |"},
		{"%-10j|", "train     |"},
		{"%.3j", "tra"},       // cut to the width, as printf's %.*s
		{"id=%i%%", "id=42%"}, // literal text and %%
		{"%u:%j", "alice:train"},
		{"", ""},
	} {
		f, err := ParseFormat(tc.format, squeueFields)
		if err != nil {
			t.Errorf("%q: %v", tc.format, err)
			continue
		}
		if got := f.Render(func(b byte) string { return vals[b] }); got != tc.want {
			t.Errorf("%q = %q, want %q", tc.format, got, tc.want)
		}
	}
}

func TestParseFormatErrors(t *testing.T) {
	for _, tc := range []struct{ format, want string }{
		{"%y", "unknown field %y"},
		{"%.18", "ends without a field letter"},
		{"%", "ends without a field letter"},
		{"%99999i", "too large"},
	} {
		_, err := ParseFormat(tc.format, squeueFields)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: err %v, want %q", tc.format, err, tc.want)
		}
	}
}

// Output shapes from sacct(1): right-justified columns, dashes under the
// header, '+' ending a value cut to its width; --parsable and --parsable2.
func TestFieldsTableAndParsable(t *testing.T) {
	known := map[string]Field{"jobid": {"JobID", 12}, "jobname": {"JobName", 10}, "state": {"State", 10}}
	f, err := ParseFields("jobid,JobName%5,STATE", known)
	if err != nil {
		t.Fatal(err)
	}
	got := Table(f, true, [][]string{{"17", "averylongname", "COMPLETED"}})
	// The header is cut as a value is (sacct prints both through one
	// function).
	want := "       JobID JobN+      State \n" +
		"------------ ----- ---------- \n" +
		"          17 aver+  COMPLETED \n"
	if got != want {
		t.Errorf("table\n%s\nwant\n%s", got, want)
	}
	if got := Parsable(f, true, false, [][]string{{"17", "x", "FAILED"}}); got != "JobID|JobName|State\n17|x|FAILED\n" {
		t.Errorf("parsable2 = %q", got)
	}
	if got := Parsable(f, false, true, [][]string{{"17", "x", "FAILED"}}); got != "17|x|FAILED|\n" {
		t.Errorf("parsable = %q", got)
	}
	for _, bad := range []string{"JobID,Bogus", "JobID%0", "JobID%x", ","} {
		if _, err := ParseFields(bad, known); err == nil {
			t.Errorf("ParseFields(%q) accepted", bad)
		}
	}
}

func TestStateOf(t *testing.T) {
	for _, tc := range []struct {
		state domain.State
		drain *domain.Drain
		want  JobState
	}{
		{domain.StatePending, nil, JobState{"PD", "PENDING"}},
		{domain.StateReserved, nil, JobState{"CF", "CONFIGURING"}},
		{domain.StateRunning, nil, JobState{"R", "RUNNING"}},
		{domain.StateRunning, &domain.Drain{Then: domain.ThenRequeue}, JobState{"SI", "SIGNALING"}},
		{domain.StateRunning, &domain.Drain{Then: domain.ThenCancel}, JobState{"CG", "COMPLETING"}},
		{domain.StateSucceeded, nil, JobState{"CD", "COMPLETED"}},
		{domain.StateFailed, nil, JobState{"F", "FAILED"}},
		{domain.StateRejected, nil, JobState{"F", "FAILED"}},
		{domain.StateCancelled, nil, JobState{"CA", "CANCELLED"}},
		{domain.StateTimeout, nil, JobState{"TO", "TIMEOUT"}},
	} {
		if got := StateOf(tc.state, tc.drain); got != tc.want {
			t.Errorf("StateOf(%s, %v) = %v, want %v", tc.state, tc.drain, got, tc.want)
		}
	}
}

// squeue(1): "-t ... may be a comma separated list ... case
// insensitive ... 'all'".
func TestParseStates(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"PD", "PENDING"},
		{"pd,r", "PENDING,RUNNING"},
		{"running,CG", "RUNNING,COMPLETING"},
		{"NF,PR,OOM", "NODE_FAIL,PREEMPTED,OUT_OF_MEMORY"},
		{"all", ""},
		{"R,all", ""},
	} {
		got, err := ParseStates(tc.in)
		if err != nil || strings.Join(got, ",") != tc.want {
			t.Errorf("ParseStates(%q) = %v, %v; want %s", tc.in, got, err, tc.want)
		}
	}
	for _, bad := range []string{"XX", "", ","} {
		if _, err := ParseStates(bad); err == nil {
			t.Errorf("ParseStates(%q) accepted", bad)
		}
	}
}

func TestReason(t *testing.T) {
	for in, want := range map[string]string{
		"":                                   "None",
		"Resources: 8 GPUs free, 16 needed":  "Resources",
		"Priority":                           "Priority",
		"Reserved (starts ≈ 12:00)":          "Resources",
		"QuotaExceeded (16/16 GPUs)":         "QOSGrpGRES",
		"UserGPULimit: alice runs 32 GPUs":   "AssocGrpGRES",
		"NoNodes: no node has 16 GPUs":       "BadConstraints",
		"WaitingForSwitches: 1 switch, 5m0s": "WaitingForSwitches",
		"Dependency":                         "Dependency",
	} {
		if got := Reason(in); got != want {
			t.Errorf("Reason(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestNodeState(t *testing.T) {
	for _, tc := range []struct {
		up, drained bool
		used, gpus  int
		want        string
	}{
		{true, false, 0, 8, "idle"}, {true, false, 3, 8, "mix"}, {true, false, 8, 8, "alloc"},
		{true, true, 0, 8, "drain"}, {true, true, 8, 8, "drng"}, {false, false, 0, 8, "down"},
	} {
		if got := NodeState(tc.up, tc.drained, tc.used, tc.gpus); got != tc.want {
			t.Errorf("NodeState(%v) = %s, want %s", tc, got, tc.want)
		}
	}
}

// squeue(1) TIME: "days-hours:minutes:seconds"; sacct(1) Elapsed:
// "[DD-[HH:]]MM:SS", printed as HH:MM:SS.
func TestTimeStrings(t *testing.T) {
	for _, tc := range []struct {
		d             time.Duration
		squeue, sacct string
	}{
		{0, "0:00", "00:00:00"},
		{5 * time.Second, "0:05", "00:00:05"},
		{24*time.Minute + 19*time.Second, "24:19", "00:24:19"},
		{time.Hour, "1:00:00", "01:00:00"},
		{49*time.Hour + 2*time.Minute + 3*time.Second, "2-01:02:03", "2-01:02:03"},
		{-time.Second, "0:00", "00:00:00"},
	} {
		if got := TimeString(tc.d); got != tc.squeue {
			t.Errorf("TimeString(%s) = %s, want %s", tc.d, got, tc.squeue)
		}
		if got := Elapsed(tc.d); got != tc.sacct {
			t.Errorf("Elapsed(%s) = %s, want %s", tc.d, got, tc.sacct)
		}
	}
}

// The forms sacct(1) lists for -S.
func TestParseDateTime(t *testing.T) {
	now := time.Date(2026, 12, 3, 15, 4, 5, 0, time.UTC)
	for _, tc := range []struct{ in, want string }{
		{"2026-11-30", "2026-11-30T00:00:00Z"},
		{"2026-11-30T08:30", "2026-11-30T08:30:00Z"},
		{"2026-11-30T08:30:15", "2026-11-30T08:30:15Z"},
		{"11/30", "2026-11-30T00:00:00Z"},
		{"11/30/25", "2025-11-30T00:00:00Z"},
		{"11/30-08:30", "2026-11-30T08:30:00Z"},
		{"1130", "2026-11-30T00:00:00Z"},
		{"113025", "2025-11-30T00:00:00Z"},
		{"08:30", "2026-12-03T08:30:00Z"},
		{"08:30:15", "2026-12-03T08:30:15Z"},
		{"today", "2026-12-03T00:00:00Z"},
		{"midnight", "2026-12-03T00:00:00Z"},
		{"noon", "2026-12-03T12:00:00Z"},
		{"now", "2026-12-03T15:04:05Z"},
		{"now-1hour", "2026-12-03T14:04:05Z"},
		{"now-3days", "2026-11-30T15:04:05Z"},
		{"now-30", "2026-12-03T15:03:35Z"},
		{"now-14285weeks", "1753-02-22T15:04:05Z"},
	} {
		got, err := ParseDateTime(tc.in, now)
		if err != nil || got.Format(time.RFC3339) != tc.want {
			t.Errorf("ParseDateTime(%q) = %s, %v; want %s", tc.in, got.Format(time.RFC3339), err, tc.want)
		}
	}
	// now-20000weeks would overflow a Duration and wrap past now.
	for _, bad := range []string{"yesterday", "2026-13-01", "25:00", "now-3fortnights", "now*2", "11/30-8", "now-20000weeks", "now+100001days"} {
		if _, err := ParseDateTime(bad, now); err == nil {
			t.Errorf("ParseDateTime(%q) accepted", bad)
		}
	}
}
