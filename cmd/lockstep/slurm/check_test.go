package slurm

import (
	"reflect"
	"strings"
	"testing"

	"github.com/lockstep-dev/lockstep/shared/contract/errs"
)

// checkParse fails the test unless parse accepts in and returns want.
func checkParse[T any](t *testing.T, name string, parse func(string) (T, error), in string, want T) {
	t.Helper()
	got, err := parse(in)
	if err != nil {
		t.Errorf("%s(%q): %v", name, in, err)
		return
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("%s(%q) = %+v, want %+v", name, in, got, want)
	}
}

// checkRejects fails the test for each input that parse accepts.
func checkRejects[T any](t *testing.T, name string, parse func(string) (T, error), inputs ...string) {
	t.Helper()
	for _, in := range inputs {
		if got, err := parse(in); err == nil {
			t.Errorf("%s(%q) = %+v, want an error", name, in, got)
		}
	}
}

// checkInvalid fails the test unless err, what returned, contains want
// and is marked invalid. It reports whether err contains want.
func checkInvalid(t *testing.T, what string, err error, want string) bool {
	t.Helper()
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("%s = %v, want an error with %q", what, err, want)
		return false
	}
	if !errs.IsInvalid(err) {
		t.Errorf("%s: %v is not marked invalid", what, err)
	}
	return true
}
