package main

import (
	"fmt"
	"io"

	"github.com/cockroachdb/errors"

	"github.com/lockstep-dev/lockstep/shared/contract/errs"
)

// exitError carries a specific exit code (e.g. submit --wait of a failed job).
type exitError struct {
	code int
	msg  string
}

func (e *exitError) Error() string { return e.msg }

// report prints an error with its hints, once, at the CLI edge.
func report(w io.Writer, err error) int {
	var ee *exitError
	if errors.As(err, &ee) {
		if ee.msg != "" {
			fmt.Fprintln(w, "lockstep:", cleanLines(ee.msg))
		}
		return ee.code
	}
	// Errors quote what they refused (an ID, a server's answer): escaped.
	fmt.Fprintln(w, "lockstep:", cleanLines(err.Error()))
	for _, h := range errors.GetAllHints(err) {
		fmt.Fprintln(w, "hint:", cleanLines(h))
	}
	if isUsage(err) {
		return 2
	}
	return 1
}

// isUsage reports whether err is the command line's fault: a usage error,
// or a setting a service refused (errs.ErrBadSetting).
func isUsage(err error) bool {
	return errors.As(err, new(*usageError)) || errs.IsBadSetting(err)
}

// usageError is a bad command line.
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

func usagef(format string, args ...any) error {
	return &usageError{msg: fmt.Sprintf(format, args...)}
}
