package main

import "testing"

func TestCleanEscapesWhatATerminalWouldAct(t *testing.T) {
	for in, want := range map[string]string{
		"train-llm":              "train-llm",
		"8 nodes × 8 GPUs ≈ 1 h": "8 nodes × 8 GPUs ≈ 1 h",
		"\x1b[2J\x1b[Hpwned":     `\x1b[2J\x1b[Hpwned`,
		"ok\rFAILED":             `ok\rFAILED`,
		"nul\x00byte":            `nul\x00byte`,
		"two\nlines\ttab":        `two\nlines\ttab`,
		"del\x7f c1\u009b":       `del\x7f c1\u009b`,
		"rtl\u202egnp.exe":       `rtl\u202egnp.exe`,
		"zero\u200bwidth":        `zero\u200bwidth`,
		"bad\xffutf8":            `bad\xffutf8`,
		"tag\U000E0041":          `tag\U000e0041`,
	} {
		if got := clean(in); got != want {
			t.Errorf("clean(%q) = %q, want %q", in, got, want)
		}
	}
	if got := cleanLines("a\x1b\nb\n"); got != "a\\x1b\nb\n" {
		t.Errorf("cleanLines kept or lost the wrong thing: %q", got)
	}
}
