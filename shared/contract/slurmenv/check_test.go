package slurmenv

import (
	"reflect"
	"testing"
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
