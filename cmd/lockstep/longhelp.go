package main

import "strings"

// longHelp is a command's long help written in the source as it prints: a
// raw string that starts on the line after its backtick, every line
// indented like the first (kubectl's templates.LongDesc, without the
// Markdown). The text then reads, and is rewrapped, as one paragraph
// rather than a "line\n" + per line. It drops the first line break, the
// first line's indent from every line (an indent beyond it is kept: the
// help's own), white space on blank lines and at the end.
func longHelp(s string) string {
	s = strings.TrimPrefix(s, "\n")
	indent := s[:len(s)-len(strings.TrimLeft(s, " \t"))]
	lines := strings.Split(s, "\n")
	for i, line := range lines {
		if strings.TrimSpace(line) == "" {
			lines[i] = ""
			continue
		}
		lines[i] = strings.TrimPrefix(line, indent)
	}
	return strings.TrimRight(strings.Join(lines, "\n"), " \t\n")
}
