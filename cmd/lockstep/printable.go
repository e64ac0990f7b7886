package main

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// clean makes a string safe to print on a terminal: control characters
// (ESC, CR, NUL, newline, tab, DEL, C1), invisible format characters
// (bidirectional overrides, zero-width spaces), line separators and
// invalid UTF-8 are written as Go-style escapes. Everything the CLI prints
// that came from outside (names, reasons, node names, events from the bus,
// errors quoting them) goes through it: a job name holding "\x1b[2J" or
// "\r" must not repaint or forge the user's screen or table.
func clean(s string) string {
	i := strings.IndexFunc(s, unsafe)
	if i < 0 && utf8.ValidString(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 8)
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\t':
			b.WriteString(`\t`)
		case r < 0x80 && unsafe(r):
			fmt.Fprintf(&b, `\x%02x`, r)
		case unsafe(r) && r <= 0xFFFF:
			fmt.Fprintf(&b, `\u%04x`, r)
		case unsafe(r):
			fmt.Fprintf(&b, `\U%08x`, r)
		default:
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String()
}

// cleanLines is clean for text meant to span lines (a rendered tree, an
// error with its details): newlines stay, everything else is escaped.
func cleanLines(s string) string {
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		lines[i] = clean(l)
	}
	return strings.Join(lines, "\n")
}

// unsafe reports a rune a terminal would act on rather than show.
func unsafe(r rune) bool {
	return unicode.IsControl(r) || unicode.In(r, unicode.Cf, unicode.Zl, unicode.Zp)
}

// plural is "1 node", "2 nodes": n and noun, with an s unless n is 1.
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
