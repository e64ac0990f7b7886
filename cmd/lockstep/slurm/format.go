package slurm

import (
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/cockroachdb/errors"
)

// Format is a squeue or sinfo -o format: literal text and %-fields.
type Format []FormatItem

// FormatItem is one piece of a Format: a literal (Field 0) or a field.
type FormatItem struct {
	Literal string
	// Field is the field's letter ('i', 'j', ...).
	Field byte
	// Width pads (and truncates) the field; 0 prints it whole.
	Width int
	// Right right-justifies the field (`%.18i`).
	Right bool
}

// ParseFormat parses a -o format as squeue and sinfo do (_parse_token in
// squeue/opts.c): `%[.]size]type`, with '.' right-justifying; text between
// fields is printed as it is, and "%%" is a '%'. known lists the field
// letters the command has; another is an error naming it. Slurm reads
// `%-10j` as an unknown field '-'; this reads it as left-justified, which
// is what Slurm does without the '-' and what a printf user means.
func ParseFormat(s, known string) (Format, error) {
	var f Format
	var lit strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '%' {
			lit.WriteByte(s[i])
			continue
		}
		if i+1 < len(s) && s[i+1] == '%' {
			lit.WriteByte('%')
			i++
			continue
		}
		if lit.Len() > 0 {
			f = append(f, FormatItem{Literal: lit.String()})
			lit.Reset()
		}
		it, j := FormatItem{}, i+1
		if j < len(s) && (s[j] == '.' || s[j] == '-') {
			it.Right = s[j] == '.'
			j++
		}
		k := j
		for k < len(s) && s[k] >= '0' && s[k] <= '9' {
			k++
		}
		if k > j {
			w, err := strconv.Atoi(s[j:k])
			if err != nil || w > 1024 {
				return nil, errors.Newf("field width %q is too large", s[j:k])
			}
			it.Width = w
		}
		if k >= len(s) {
			return nil, errors.Newf("%q ends without a field letter", s[i:])
		}
		if !strings.ContainsRune(known, rune(s[k])) {
			r, _ := utf8.DecodeRuneInString(s[k:])
			return nil, errors.Newf("unknown field %%%c (this command has %s)", r, fieldList(known))
		}
		it.Field = s[k]
		f = append(f, it)
		i = k
	}
	if lit.Len() > 0 {
		f = append(f, FormatItem{Literal: lit.String()})
	}
	return f, nil
}

func fieldList(known string) string {
	out := make([]string, len(known))
	for i := range known {
		out[i] = "%" + known[i:i+1]
	}
	return strings.Join(out, " ")
}

// Render writes one line of f: value gives each field's text (the
// header's, for the header line).
func (f Format) Render(value func(field byte) string) string {
	var b strings.Builder
	for _, it := range f {
		if it.Field == 0 {
			b.WriteString(it.Literal)
			continue
		}
		b.WriteString(Pad(value(it.Field), it.Width, it.Right))
	}
	return b.String()
}

// Pad fits s to width as squeue's printf("%-*.*s") does: padded with
// spaces on the right (or left, when right), and cut to width. Width 0
// leaves s whole. Widths count runes, not bytes.
func Pad(s string, width int, right bool) string {
	if width <= 0 {
		return s
	}
	n := utf8.RuneCountInString(s)
	if n > width {
		r := []rune(s)
		return string(r[:width])
	}
	fill := strings.Repeat(" ", width-n)
	if right {
		return fill + s
	}
	return s + fill
}
