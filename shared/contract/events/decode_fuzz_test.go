package events

import (
	"testing"

	"github.com/cockroachdb/errors"

	"github.com/lockstep-dev/lockstep/shared/contract/domain"
	"github.com/lockstep-dev/lockstep/shared/contract/errs"
	"github.com/lockstep-dev/lockstep/shared/contract/internal/fuzzseed"
)

// FuzzDecode: no input panics; a refusal is a permanent *MessageError; an
// accepted event re-encodes to one that is accepted again, identically.
// The seed corpus is in testdata/fuzz/FuzzDecode.
func FuzzDecode(f *testing.F) {
	f.Fuzz(func(t *testing.T, data []byte) {
		ev, err := Decode(data)
		if err != nil {
			var me *domain.MessageError
			if !errors.As(err, &me) || !errs.IsPermanent(err) {
				t.Fatalf("refusal is not a permanent *MessageError: %v", err)
			}
			return
		}
		fuzzseed.RoundTrip(t, data, ev, func(b []byte) (Event, error) { return DecodeFrom(ev.Subject(), b) })
	})
}
