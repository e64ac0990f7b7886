// Package report writes the output folder of a load-test or simulation
// run: summary.md (tables, the exact command and the seed), results.json
// and PNG plots made with gonum/plot; and draws a progress bar with an ETA
// on a terminal.
package report

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/cockroachdb/errors"

	"github.com/lockstep-dev/lockstep/loadtest/trace"
)

// Dir creates the run's folder: out when set, else
// loadtest/reports/<timestamp> under the module root (git-ignored), else
// ./lockstep-reports/<timestamp>.
func Dir(out string, now time.Time) (string, error) {
	if out == "" {
		stamp := now.Format("20060102-150405")
		if root := trace.ModuleRoot(); root != "" {
			out = filepath.Join(root, "loadtest", "reports", stamp)
		} else {
			out = filepath.Join("lockstep-reports", stamp)
		}
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return "", errors.Wrap(err, "report folder")
	}
	return out, nil
}

// WriteJSON writes v, indented, to dir/name.
func WriteJSON(dir, name string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return errors.Wrapf(err, "encode %s", name)
	}
	return errors.Wrapf(os.WriteFile(filepath.Join(dir, name), append(b, '\n'), 0o644), "write %s", name)
}

// WriteText writes s to dir/name.
func WriteText(dir, name, s string) error {
	return errors.Wrapf(os.WriteFile(filepath.Join(dir, name), []byte(s), 0o644), "write %s", name)
}

// CommandLine is the process's command line, quoted for a shell.
func CommandLine() string {
	parts := make([]string, len(os.Args))
	for i, a := range os.Args {
		parts[i] = shellQuote(a)
	}
	if len(parts) > 0 {
		parts[0] = filepath.Base(parts[0])
	}
	return strings.Join(parts, " ")
}

func shellQuote(s string) string {
	if s != "" && !strings.ContainsAny(s, " \t\n'\"\\$`*?[]{}()<>|&;#~!") {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// Table renders a Markdown table; numeric-looking cells are right-aligned
// by the header's alignment row.
type Table struct {
	Header []string
	Rows   [][]string
}

// Add appends a row.
func (t *Table) Add(cells ...any) {
	row := make([]string, len(cells))
	for i, c := range cells {
		row[i] = fmt.Sprint(c)
	}
	t.Rows = append(t.Rows, row)
}

func (t Table) String() string {
	var b strings.Builder
	b.WriteString("| " + strings.Join(t.Header, " | ") + " |\n|")
	for i := range t.Header {
		if i == 0 {
			b.WriteString("---|")
		} else {
			b.WriteString("---:|")
		}
	}
	b.WriteString("\n")
	for _, r := range t.Rows {
		b.WriteString("| " + strings.Join(r, " | ") + " |\n")
	}
	return b.String()
}

// Duration renders seconds compactly: 850 ms, 12.3 s, 4.2 min, 3.1 h, 2.4 d.
func Duration(sec float64) string { return DurationIn(sec, UnitFor(sec)) }

// TimeUnit is a unit Duration renders in.
type TimeUnit struct {
	Name    string
	Seconds float64 // seconds per unit
	Prec    int     // decimals shown
	Long    string  // the name spelled out, for an axis label
}

// UnitFor is the unit Duration uses for sec; a table column that shares
// one unit takes UnitFor of its largest value.
func UnitFor(sec float64) TimeUnit {
	switch {
	case sec < 1:
		return TimeUnit{"ms", 0.001, 0, "milliseconds"}
	case sec < 120:
		return TimeUnit{"s", 1, 1, "seconds"}
	case sec < 7200:
		return TimeUnit{"min", 60, 1, "minutes"}
	case sec < 2*86400:
		return TimeUnit{"h", 3600, 1, "hours"}
	}
	return TimeUnit{"d", 86400, 1, "days"}
}

// DurationIn renders seconds in unit u.
func DurationIn(sec float64, u TimeUnit) string {
	return fmt.Sprintf("%.*f %s", u.Prec, sec/u.Seconds, u.Name)
}

// Pct renders a share as a percentage.
func Pct(x float64) string { return fmt.Sprintf("%.1f %%", 100*x) }

// Rate renders a rate with the precision its size needs: 600, 1.3, 0.50
// (a probe's one job every 2 s is not "0").
func Rate(x float64) string {
	switch {
	case x >= 10:
		return fmt.Sprintf("%.0f", x)
	case x >= 1:
		return fmt.Sprintf("%.1f", x)
	}
	return fmt.Sprintf("%.2f", x)
}

// Thousands renders an integer with thin separators: 111,539.
func Thousands(n int) string {
	s := fmt.Sprint(n)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var out []byte
	for i := range len(s) {
		if i > 0 && (len(s)-i)%3 == 0 {
			out = append(out, ',')
		}
		out = append(out, s[i])
	}
	if neg {
		return "-" + string(out)
	}
	return string(out)
}
