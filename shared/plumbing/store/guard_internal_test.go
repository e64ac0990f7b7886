package store

import (
	"slices"
	"testing"
)

func TestLeaveOut(t *testing.T) {
	all := []string{"e1", "e2", "e3"}
	for _, tc := range []struct {
		name     string
		out      []string
		asked    []string
		answered []string
		want     []string
	}{
		{"all answer", nil, all, all, nil},
		{"one silent", nil, all, []string{"e1", "e3"}, []string{"e2"}},
		{"a second goes silent", []string{"e2"}, []string{"e1", "e3"}, []string{"e3"}, []string{"e1", "e2"}},
		{"the one out answers again", []string{"e2"}, []string{"e2"}, []string{"e2"}, nil},
		{"the one out is still silent", []string{"e2"}, []string{"e2"}, nil, []string{"e2"}},
		{"one of two out answers", []string{"e1", "e2"}, []string{"e1", "e2"}, []string{"e1"}, []string{"e2"}},
		{"none answers: none is left out", nil, all, nil, nil},
		{"the last one in goes silent: all back", []string{"e1", "e2"}, []string{"e3"}, nil, nil},
	} {
		answered := map[string]bool{}
		for _, m := range tc.answered {
			answered[m] = true
		}
		got := leaveOut(all, tc.out, tc.asked, answered)
		if !slices.Equal(got, tc.want) {
			t.Errorf("%s: leaveOut(out %v, asked %v, answered %v) = %v, want %v", tc.name, tc.out, tc.asked, tc.answered, got, tc.want)
		}
		if in := inUse(all, got); len(in) == 0 {
			t.Errorf("%s: no member left in use", tc.name)
		}
	}
}
