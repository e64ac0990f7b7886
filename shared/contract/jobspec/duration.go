package jobspec

import (
	"encoding/json"
	"reflect"
	"strings"
	"time"
)

// Duration is a duration field of the spec (timeLimit, waitForSwitches,
// preferredWait, gracePeriod). On the wire it is the Go duration string
// the submitter wrote, kept as written so that a spec re-encodes to what
// came in; decoding parses it once, and Duration() is the parsed value.
// The zero Duration is an absent field.
type Duration struct {
	d    time.Duration
	text string
}

// DurationOf is d as a spec field, written the way time.Duration prints
// it ("1h30m0s"), with "us" for "µs" as the schema's pattern wants. Zero
// is an absent field.
func DurationOf(d time.Duration) Duration {
	if d == 0 {
		return Duration{}
	}
	return Duration{d: d, text: strings.Replace(d.String(), "µs", "us", 1)}
}

// Duration is the parsed value; 0 when the field is absent.
func (d Duration) Duration() time.Duration { return d.d }

// IsZero reports whether the field is absent (omitzero leaves it out).
func (d Duration) IsZero() bool { return d.text == "" }

// String is the field as written.
func (d Duration) String() string { return d.text }

// MarshalJSON writes the field as written.
func (d Duration) MarshalJSON() ([]byte, error) { return json.Marshal(d.text) }

// UnmarshalJSON parses a Go duration string. A string time.ParseDuration
// refuses is a *json.UnmarshalTypeError, to which encoding/json adds the
// field's path: Parse's error names the field.
func (d *Duration) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return err
	}
	if s == "" {
		// Absent, as a record may have it; Parse's schema check refuses it.
		*d = Duration{}
		return nil
	}
	v, err := time.ParseDuration(s)
	if err != nil {
		return &json.UnmarshalTypeError{Value: string(b), Type: durationType}
	}
	*d = Duration{d: v, text: s}
	return nil
}

var durationType = reflect.TypeFor[Duration]()
