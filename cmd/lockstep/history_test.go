package main

import (
	"encoding/csv"
	"strings"
	"testing"
	"time"

	"github.com/lockstep-dev/lockstep/shared/core/accounting"
)

// Text from the bus reaches a spreadsheet as text: a cell that would run
// as a formula is prefixed with a quote, and commas, quotes and newlines
// stay inside their cell.
func TestHistoryCSVCellsAreText(t *testing.T) {
	var b strings.Builder
	err := historyCSV(&b, []accounting.Row{{JobID: "j", Owner: "ann", Queue: "q", Reason: `=HYPERLINK("x"),` + "\nrow", State: "failed",
		SubmittedAt: time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC), Elapsed: 1500 * time.Millisecond}})
	if err != nil {
		t.Fatal(err)
	}
	recs, err := csv.NewReader(strings.NewReader(b.String())).ReadAll()
	if err != nil || len(recs) != 2 {
		t.Fatalf("%v %q", err, b.String())
	}
	row := recs[1]
	if got := row[len(row)-1]; got != `'=HYPERLINK("x"),`+"\nrow" {
		t.Errorf("reason cell = %q", got)
	}
	if row[3] != "2026-12-01T00:00:00Z" || row[4] != "" || row[6] != "1.500" {
		t.Errorf("times and durations = %q", row)
	}
}

func TestParseWhen(t *testing.T) {
	now := time.Date(2026, 12, 4, 12, 0, 0, 0, time.UTC)
	for in, want := range map[string]time.Time{
		"24h": now.Add(-24 * time.Hour), "7d": now.Add(-7 * 24 * time.Hour), "90m": now.Add(-90 * time.Minute),
		"2026-12-01T00:00:00Z": time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC),
	} {
		if got, err := parseWhen("--since", in, now); err != nil || !got.Equal(want) {
			t.Errorf("parseWhen(%q) = %v %v, want %v", in, got, err, want)
		}
	}
	for _, in := range []string{"yesterday", "-1h", "1.5d", "", "2026-12-01"} {
		if _, err := parseWhen("--since", in, now); err == nil {
			t.Errorf("parseWhen(%q) accepted", in)
		}
	}
}
