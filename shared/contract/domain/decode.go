package domain

import (
	"encoding/json"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/cockroachdb/errors"
	jsonv1 "github.com/go-json-experiment/json/v1"

	"github.com/lockstep-dev/lockstep/shared/contract/codec"
	"github.com/lockstep-dev/lockstep/shared/contract/errs"
	"github.com/lockstep-dev/lockstep/shared/contract/jobspec"
	"github.com/lockstep-dev/lockstep/shared/contract/validate"
)

// The Decode* functions are the one way a work message or a record read
// from etcd becomes a value: every byte that crosses a process boundary is
// hostile until checked. Each decodes with codec (encoding/json semantics;
// unknown fields are ignored so that a newer peer can add one) and then
// checks the shape: required IDs present and well-formed, attempts from 1,
// ranks and GPU indices non-negative and consistent, enum values known,
// lengths bounded. They check shape only: whether the job exists, is on
// that attempt, or owns those GPUs is for the service that holds the
// authoritative record. A failure is a *MessageError naming every field at
// fault, marked errs.ErrPermanent: retrying the same bytes cannot succeed.

// Bounds of decoded messages.
const (
	// MaxMessageBytes bounds one encoded message or record (an assignment
	// carries a whole command and environment, each at most a 256 KiB spec).
	MaxMessageBytes = 2 << 20
	// MaxReasonBytes bounds free text: reasons, errors, notes.
	MaxReasonBytes = 4096
	// MaxNameBytes bounds node names, addresses and topology labels.
	MaxNameBytes = 253
	// MaxNodes bounds a gang's nodes (the spec's gang.nodes maximum).
	MaxNodes = 4096
	// MaxGPUIndex and MaxCPUIndex bound device and core indices.
	MaxGPUIndex = 1023
	MaxCPUIndex = 1<<16 - 1
	// MaxAttempt bounds attempt numbers: far past any restart budget, low
	// enough that arithmetic on it cannot overflow.
	MaxAttempt = 1 << 30
	// maxRanksPerNode bounds one node's ranks (the spec allows 64).
	maxRanksPerNode = 1024
	// maxPathBytes bounds a path (the spec's workdir maximum).
	maxPathBytes = 4096
)

// MessageError is a message or record that failed to decode or validate.
type MessageError struct {
	// Kind is what it should have been: "report", "proposal", ….
	Kind   string
	Fields []validate.FieldError
}

func (e *MessageError) Error() string { return "malformed " + e.Kind + ": " + validate.Join(e.Fields) }

// decode is the shared path of every Decode* function.
func decode[T any](kind string, data []byte, check func(*checker, *T)) (T, error) {
	var v T
	if len(data) > MaxMessageBytes {
		return v, malformed(kind, validate.Errorf("", "%d bytes, more than the %d allowed", len(data), MaxMessageBytes))
	}
	if err := codec.Decode(data, &v); err != nil {
		var zero T
		return zero, malformed(kind, decodeFieldError(err))
	}
	var c checker
	check(&c, &v)
	if c.fes != nil {
		var zero T
		return zero, malformed(kind, c.fes...)
	}
	return v, nil
}

func malformed(kind string, fes ...validate.FieldError) error {
	return errs.MarkPermanent(errors.WithStack(&MessageError{Kind: kind, Fields: fes}))
}

// decodeFieldError names the field a JSON decoding error is about.
func decodeFieldError(err error) validate.FieldError {
	var te *jsonv1.UnmarshalTypeError
	if errors.As(err, &te) {
		return typeError(te.Field, te.Type, te.Value)
	}
	var se *json.UnmarshalTypeError
	if errors.As(err, &se) {
		return typeError(se.Field, se.Type, se.Value)
	}
	return validate.Errorf("", "malformed JSON: %v", err)
}

func typeError(field string, t reflect.Type, value string) validate.FieldError {
	if t == nil {
		return validate.Errorf(field, "cannot hold %s", value)
	}
	return validate.Errorf(field, "must be %s, got %s", t, value)
}

// checker collects the field errors of one message.
type checker struct{ fes []validate.FieldError }

func (c *checker) fail(field, format string, args ...any) {
	// One message cannot flood a log: past a few, the rest are counted.
	const most = 16
	switch n := len(c.fes); {
	case n < most:
		c.fes = append(c.fes, validate.Errorf(field, format, args...))
	case n == most:
		c.fes = append(c.fes, validate.Errorf("", "more errors follow"))
	}
}

func (c *checker) jobID(field, id string) {
	if !jobspec.ValidID(id) {
		c.fail(field, "%s is not a job ID (a DNS label, or <id>_<index> for an array task)", quote(id))
	}
}

// userNamePattern keeps names usable as one NATS subject token and as a
// local account name: no dots, wildcards, spaces or control characters.
// The length is checked apart: a bounded repeat ({0,62}) compiles into
// that many copies, a cost every process linking this package paid at
// start.
var userNamePattern = regexp.MustCompile(`^[a-z0-9][a-z0-9_-]*$`)

const maxUserNameBytes = 63

// ValidUserName reports whether name is one an identity (user, group,
// service, node credential) may have: ^[a-z0-9][a-z0-9_-]{0,62}$.
// Services that take a user name from a subject token check it with this.
func ValidUserName(name string) bool {
	return len(name) <= maxUserNameBytes && userNamePattern.MatchString(name)
}

// ValidNodeName is the node-name rule: what an agent accepts for --name
// (no dots, spaces or wildcards: a node name is a subject token; no '/':
// it is one segment of its etcd keys, running/<node>/<job>), at most
// MaxNameBytes of UTF-8, without control characters, which have no place
// in a name printed on a terminal.
func ValidNodeName(name string) bool {
	return name != "" && len(name) <= MaxNameBytes && utf8.ValidString(name) &&
		!strings.ContainsAny(name, ".*> /") && !hasControl(name)
}

func (c *checker) node(field, name string) {
	switch {
	case name == "":
		c.fail(field, "required")
	case !ValidNodeName(name):
		c.fail(field, "%s is not a node name (at most %d bytes; no dots, spaces, wildcards or control characters)", quote(name), MaxNameBytes)
	}
}

// label is an optional short name: a topology label, an address.
func (c *checker) label(field, s string) {
	if !validLabel(s) {
		c.fail(field, "%s is not a valid name (at most %d bytes, no spaces or control characters)", quote(s), MaxNameBytes)
	}
}

func validLabel(s string) bool {
	return len(s) <= MaxNameBytes && !strings.ContainsAny(s, " ") && !hasControl(s) && utf8.ValidString(s)
}

func (c *checker) required(field, s string) {
	if s == "" {
		c.fail(field, "required")
	}
}

func (c *checker) attempt(field string, n int) { c.between(field, n, 1, MaxAttempt) }

func (c *checker) between(field string, n, lo, hi int) {
	if n < lo || n > hi {
		c.fail(field, "%d is not between %d and %d", n, lo, hi)
	}
}

// upTo checks a size or a count kept in an int64 (bytes, milliseconds,
// MiB): not negative and at most most.
func (c *checker) upTo(field string, n, most int64) {
	if n < 0 || n > most {
		c.fail(field, "%d is not between 0 and %d", n, most)
	}
}

func (c *checker) text(field, s string, most int) {
	if len(s) > most {
		c.fail(field, "%d bytes, more than the %d allowed", len(s), most)
	}
}

func (c *checker) oneOf(field, s string, allowed ...string) {
	for _, a := range allowed {
		if s == a {
			return
		}
	}
	c.fail(field, "%s is not one of %s", quote(s), strings.Join(allowed, ", "))
}

// path is an optional clean absolute path (the spec's rule).
func (c *checker) path(field, p string) {
	if fe, ok := jobspec.CheckPath(field, p); !ok {
		c.fail(fe.Field, "%s", fe.Message)
	}
}

func hasControl(s string) bool {
	return strings.IndexFunc(s, func(r rune) bool { return r < 0x20 || (r >= 0x7f && r < 0xa0) }) >= 0
}

// quote shows a hostile string safely in an error: escaped, and cut.
func quote(s string) string {
	const most = 64
	if len(s) > most {
		cut := most
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		return strings.TrimSuffix(strconv.Quote(s[:cut]), `"`) + `…"`
	}
	return strconv.Quote(s)
}

// Malformed is the error of a message of the given kind that failed
// validation, for decoders outside this package (events): a *MessageError
// marked errs.ErrPermanent.
func Malformed(kind string, fes ...validate.FieldError) error { return malformed(kind, fes...) }

// DecodeFieldError names the field a JSON decoding error is about.
func DecodeFieldError(err error) validate.FieldError { return decodeFieldError(err) }
