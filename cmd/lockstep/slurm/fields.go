package slurm

import (
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/cockroachdb/errors"
)

// Field is one column of sacct -o: a field name and its width.
type Field struct {
	// Name is the field's canonical name ("JobID").
	Name  string
	Width int
}

// ParseFields parses sacct's --format list as sacct does: names
// separated by commas, in any case, each with an optional %WIDTH
// ("JobID%20"). Columns are right-justified, as sacct prints them; sacct's
// %-N (left-justified) is refused. known maps each accepted name, in
// lower case, to its canonical name and default width.
func ParseFields(s string, known map[string]Field) ([]Field, error) {
	var out []Field
	for _, item := range strings.Split(s, ",") {
		item = strings.TrimSpace(item)
		if item == "" {
			continue
		}
		name, width, hasWidth := strings.Cut(item, "%")
		f, ok := known[strings.ToLower(name)]
		if !ok {
			return nil, errors.Newf("unknown field %q (known: %s)", name, fieldNames(known))
		}
		if hasWidth {
			w, err := strconv.Atoi(width)
			if err != nil || w < 1 || w > 1024 {
				return nil, errors.Newf("field %s: width %q is not a number from 1 to 1024", f.Name, width)
			}
			f.Width = w
		}
		out = append(out, f)
	}
	if len(out) == 0 {
		return nil, errors.New("no fields given")
	}
	return out, nil
}

func fieldNames(known map[string]Field) string {
	names := make([]string, 0, len(known))
	for _, f := range known {
		names = append(names, f.Name)
	}
	slices.Sort(names)
	return strings.Join(names, ",")
}

// Table renders sacct's table: right-justified columns of their widths,
// a value too long for its column cut and ended with '+', as sacct marks
// it, and (with a header) a line of dashes under the header.
func Table(fields []Field, header bool, rows [][]string) string {
	var b strings.Builder
	line := func(cells []string) {
		for i, f := range fields {
			c := cells[i]
			if utf8.RuneCountInString(c) > f.Width {
				c = string([]rune(c)[:f.Width-1]) + "+"
			}
			b.WriteString(Pad(c, f.Width, true))
			b.WriteByte(' ')
		}
		b.WriteByte('\n')
	}
	if header {
		names := make([]string, len(fields))
		dashes := make([]string, len(fields))
		for i, f := range fields {
			names[i], dashes[i] = f.Name, strings.Repeat("-", f.Width)
		}
		line(names)
		line(dashes)
	}
	for _, r := range rows {
		line(r)
	}
	return b.String()
}

// Parsable renders sacct --parsable (trailing '|') or --parsable2.
func Parsable(fields []Field, header, trailing bool, rows [][]string) string {
	var b strings.Builder
	line := func(cells []string) {
		b.WriteString(strings.Join(cells, "|"))
		if trailing {
			b.WriteByte('|')
		}
		b.WriteByte('\n')
	}
	if header {
		names := make([]string, len(fields))
		for i, f := range fields {
			names[i] = f.Name
		}
		line(names)
	}
	for _, r := range rows {
		line(r)
	}
	return b.String()
}
