package subjects_test

import (
	"testing"

	"github.com/lockstep-dev/lockstep/shared/contract/subjects"
)

func TestUserOf(t *testing.T) {
	for _, tc := range []struct {
		base, subject, user string
		ok                  bool
	}{
		{subjects.Submit, subjects.Submit, "", true},
		{subjects.Submit, subjects.SubmitAs("alice"), "alice", true},
		{subjects.Cancel, subjects.CancelAs("bob"), "bob", true},
		{subjects.Drain, subjects.DrainAs("bob") + ".x", "bob.x", true},
		{subjects.Cancel, subjects.DrainAs("bob"), "", false},
		{subjects.Submit, subjects.Submit + "ted", "", false},
	} {
		user, ok := subjects.UserOf(tc.base, tc.subject)
		if user != tc.user || ok != tc.ok {
			t.Errorf("UserOf(%q, %q) = %q, %v; want %q, %v", tc.base, tc.subject, user, ok, tc.user, tc.ok)
		}
	}
}
