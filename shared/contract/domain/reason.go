package domain

import "unicode/utf8"

// BoundReason keeps free text within MaxReasonBytes, cut on a rune
// boundary and marked with "…", so that a reason a service builds from
// others (a node's drain reason inside a job's) passes the decoders of
// whoever reads it next.
func BoundReason(s string) string {
	if len(s) <= MaxReasonBytes {
		return s
	}
	cut := MaxReasonBytes - len("…")
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}
