// Package errs holds Lockstep's error classes. Callers branch on a class with
// the Is helpers, never on message text.
package errs

import "github.com/cockroachdb/errors"

// Error classes.
var (
	// ErrInvalidSpec: a job spec or request failed validation. Permanent.
	ErrInvalidSpec = errors.New("invalid spec")
	// ErrConflict: an optimistic write lost a race (etcd compare failed).
	ErrConflict = errors.New("conflict")
	// ErrNotFound: the named job, node or key does not exist.
	ErrNotFound = errors.New("not found")
	// ErrPermanent: retrying the same input can never succeed.
	ErrPermanent = errors.New("permanent")
	// ErrBadSetting: a process's own setting (a flag, the environment, the
	// config file) failed validation: the command line is at fault, as
	// with a usage error.
	ErrBadSetting = errors.New("bad setting")
)

// MarkInvalid marks err as an invalid-spec error (also permanent).
func MarkInvalid(err error) error { return errors.Mark(errors.Mark(err, ErrInvalidSpec), ErrPermanent) }

// IsInvalid reports whether err is an invalid-spec error.
func IsInvalid(err error) bool { return errors.Is(err, ErrInvalidSpec) }

// MarkConflict marks err as a lost optimistic race.
func MarkConflict(err error) error { return errors.Mark(err, ErrConflict) }

// IsConflict reports whether err is a lost optimistic race.
func IsConflict(err error) bool { return errors.Is(err, ErrConflict) }

// MarkPermanent marks err as not worth retrying.
func MarkPermanent(err error) error { return errors.Mark(err, ErrPermanent) }

// IsPermanent reports whether err is not worth retrying.
func IsPermanent(err error) bool { return errors.Is(err, ErrPermanent) }

// IsNotFound reports whether err is a not-found error.
func IsNotFound(err error) bool { return errors.Is(err, ErrNotFound) }

// MarkBadSetting marks err as a setting that failed validation (nil stays
// nil).
func MarkBadSetting(err error) error {
	if err == nil {
		return nil
	}
	return errors.Mark(err, ErrBadSetting)
}

// IsBadSetting reports whether err is a setting that failed validation.
func IsBadSetting(err error) bool { return errors.Is(err, ErrBadSetting) }
