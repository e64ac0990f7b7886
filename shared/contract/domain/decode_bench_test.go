package domain_test

import (
	"encoding/json"
	"testing"

	"github.com/lockstep-dev/lockstep/shared/contract/codec"
	"github.com/lockstep-dev/lockstep/shared/contract/domain"
)

// What the checks cost over plain decoding, for the records the etcd
// caches decode on every change (run both in one go and compare).
func BenchmarkDecodeRecords(b *testing.B) {
	for _, name := range []string{"Allocation", "Node", "Claim"} {
		data, err := json.Marshal(valid()[name])
		if err != nil {
			b.Fatal(err)
		}
		b.Run(name+"/shape-only", func(b *testing.B) {
			for b.Loop() {
				switch name {
				case "Allocation":
					var a domain.Allocation
					err = codec.Decode(data, &a)
				case "Node":
					var n domain.Node
					err = codec.Decode(data, &n)
				default:
					var c domain.Claim
					err = codec.Decode(data, &c)
				}
				if err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(name+"/checked", func(b *testing.B) {
			for b.Loop() {
				if _, err := decoders[name](data); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
