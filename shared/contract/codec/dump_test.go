package codec_test

import (
	"testing"

	"github.com/cockroachdb/errors"

	"github.com/lockstep-dev/lockstep/shared/contract/codec"
)

// Unmarshal reads back what Marshal wrote, refuses what complete refuses,
// and names what it was decoding in every error.
func TestMarshalUnmarshal(t *testing.T) {
	type dump struct {
		Name *string `json:"name"`
		N    int     `json:"n"`
	}
	complete := func(d *dump) error {
		if d.Name == nil {
			return errors.New("no name")
		}
		return nil
	}
	name := "x"
	data, err := codec.Marshal("test dump", dump{Name: &name, N: 3})
	if err != nil || string(data) != `{"name":"x","n":3}` {
		t.Fatalf("Marshal = %s, %v", data, err)
	}
	back, err := codec.Unmarshal("test dump", data, complete)
	if err != nil || *back.Name != "x" || back.N != 3 {
		t.Fatalf("Unmarshal = %+v, %v", back, err)
	}
	for in, want := range map[string]string{
		`{"n":1}`: "decoding test dump: no name",
		`{"n":`:   "decoding test dump: ",
	} {
		_, err := codec.Unmarshal("test dump", []byte(in), complete)
		if err == nil || len(err.Error()) < len(want) || err.Error()[:len(want)] != want {
			t.Errorf("Unmarshal(%s) = %v, want %q…", in, err, want)
		}
	}
}
