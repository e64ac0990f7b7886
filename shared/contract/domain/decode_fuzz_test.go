package domain_test

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/cockroachdb/errors"

	"github.com/lockstep-dev/lockstep/shared/contract/domain"
	"github.com/lockstep-dev/lockstep/shared/contract/errs"
	"github.com/lockstep-dev/lockstep/shared/contract/internal/fuzzseed"
)

// Fuzz targets of every decoder. Properties: no input panics; a refusal
// is a permanent *MessageError; what is accepted re-encodes to bytes that
// are accepted again and re-encode identically (validation is stable).
// The seed corpus is in testdata/fuzz/<target>/ (plain `go test` runs it);
// .ci/fuzz runs each target for a bounded time.

func FuzzDecodeProposal(f *testing.F)      { fuzzDecoder(f, domain.DecodeProposal) }
func FuzzDecodeReport(f *testing.F)        { fuzzDecoder(f, domain.DecodeReport) }
func FuzzDecodeCancelRequest(f *testing.F) { fuzzDecoder(f, domain.DecodeCancelRequest) }
func FuzzDecodeDrainRequest(f *testing.F)  { fuzzDecoder(f, domain.DecodeDrainRequest) }
func FuzzDecodeCheckpointAck(f *testing.F) { fuzzDecoder(f, domain.DecodeCheckpointAck) }
func FuzzDecodeAckReply(f *testing.F)      { fuzzDecoder(f, domain.DecodeAckReply) }
func FuzzDecodeNodeRequest(f *testing.F)   { fuzzDecoder(f, domain.DecodeNodeRequest) }
func FuzzDecodeAssignment(f *testing.F)    { fuzzDecoder(f, domain.DecodeAssignment) }
func FuzzDecodeAllocation(f *testing.F)    { fuzzDecoder(f, domain.DecodeAllocation) }
func FuzzDecodeNode(f *testing.F)          { fuzzDecoder(f, domain.DecodeNode) }
func FuzzDecodeClaim(f *testing.F)         { fuzzDecoder(f, domain.DecodeClaim) }
func FuzzDecodeStepLaunch(f *testing.F)    { fuzzDecoder(f, domain.DecodeStepLaunch) }
func FuzzDecodeStepOutput(f *testing.F)    { fuzzDecoder(f, domain.DecodeStepOutput) }
func FuzzDecodeStepKill(f *testing.F)      { fuzzDecoder(f, domain.DecodeStepKill) }
func FuzzDecodeDrainRecord(f *testing.F)   { fuzzDecoder(f, domain.DecodeDrainRecord) }

func fuzzDecoder[T any](f *testing.F, decode func([]byte) (T, error)) {
	f.Fuzz(func(t *testing.T, data []byte) {
		v, err := decode(data)
		if err != nil {
			var me *domain.MessageError
			if !errors.As(err, &me) || !errs.IsPermanent(err) {
				t.Fatalf("refusal is not a permanent *MessageError: %v", err)
			}
			return
		}
		fuzzseed.RoundTrip(t, data, v, decode)
	})
}

// TestSeedCorpus keeps testdata/fuzz in step with valid() and badCases():
// LOCKSTEP_UPDATE_CORPUS=1 rewrites it; otherwise every seed must be there.
func TestSeedCorpus(t *testing.T) {
	seeds := map[string]map[string][]byte{}
	add := func(decoder, name string, data []byte) {
		if seeds[decoder] == nil {
			seeds[decoder] = map[string][]byte{}
		}
		seeds[decoder][name] = data
	}
	for name, v := range valid() {
		data, _ := json.Marshal(v)
		add(name, "valid", data)
		add(name, "truncated", data[:len(data)/2])
		add(name, "empty-object", []byte(`{}`))
		add(name, "null", []byte(`null`))
	}
	for i, bc := range badCases(t) {
		if len(bc.data) > 64<<10 {
			continue // the size check needs no seed
		}
		add(bc.decoder, fmt.Sprintf("bad-%02d", i), bc.data)
	}
	for decoder, files := range seeds {
		fuzzseed.Sync(t, "FuzzDecode"+decoder, files)
	}
}
