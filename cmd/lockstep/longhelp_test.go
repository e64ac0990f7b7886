package main

import "testing"

func TestLongHelpDropsTheSourceIndent(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"one line", "one line"},
		{"\n\t\tfirst\n\t\tsecond.", "first\nsecond."},
		{"\n\t\tpara one\n\n\t\tpara two\n\t", "para one\n\npara two"},
		{"\n\t\tlist:\n\t\t\n\t\t  item  its text\n", "list:\n\n  item  its text"},
		{"\n  spaces\n  too", "spaces\ntoo"},
	} {
		if got := longHelp(tc.in); got != tc.want {
			t.Errorf("longHelp(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}
