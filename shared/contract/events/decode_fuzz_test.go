package events

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/cockroachdb/errors"

	"github.com/lockstep-dev/lockstep/shared/contract/domain"
	"github.com/lockstep-dev/lockstep/shared/contract/errs"
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
		once, err := json.Marshal(ev)
		if err != nil {
			t.Fatalf("accepted event does not encode: %v", err)
		}
		ev2, err := DecodeFrom(ev.Subject(), once)
		if err != nil {
			t.Fatalf("accepted %q, but not its re-encoding %s: %v", data, once, err)
		}
		if twice, _ := json.Marshal(ev2); !bytes.Equal(once, twice) {
			t.Fatalf("re-encoding is unstable:\n %s\n %s", once, twice)
		}
	})
}
