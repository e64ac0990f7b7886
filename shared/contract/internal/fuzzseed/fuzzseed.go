// Package fuzzseed keeps a fuzz target's checked-in seed corpus
// (testdata/fuzz/<Target>) in step with the test tables it is drawn from,
// so `go test -fuzz` starts from every case the unit tests know, and
// checks the round-trip property the contract's decoders all promise.
package fuzzseed

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"
)

// UpdateEnv set to 1 makes Sync rewrite the corpus instead of checking it.
const UpdateEnv = "LOCKSTEP_UPDATE_CORPUS"

// kept are regression seeds, never removed here: the names `go test
// -fuzz` gives inputs it found failing, and "found-…" for such an input
// kept under a readable name.
var kept = regexp.MustCompile(`^([0-9a-f]{16,}|found-.+)$`)

// Sync checks that testdata/fuzz/<target> holds exactly seeds (name →
// input, in the corpus file format of []byte inputs), or, with
// LOCKSTEP_UPDATE_CORPUS=1, writes them and removes seeds no longer in
// the table.
func Sync(t testing.TB, target string, seeds map[string][]byte) {
	t.Helper()
	dir := filepath.Join("testdata", "fuzz", target)
	update := os.Getenv(UpdateEnv) == "1"
	if update {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for name, data := range seeds {
		path := filepath.Join(dir, name)
		want := "go test fuzz v1\n[]byte(" + strconv.Quote(string(data)) + ")\n"
		if update {
			if err := os.WriteFile(path, []byte(want), 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if got, err := os.ReadFile(path); err != nil || string(got) != want {
			t.Errorf("seed %s is missing or stale; run %s=1 go test -run %s in this package", path, UpdateEnv, t.Name())
		}
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if _, ok := seeds[e.Name()]; ok || kept.MatchString(e.Name()) {
			continue
		}
		path := filepath.Join(dir, e.Name())
		if !update {
			t.Errorf("seed %s is in no test table; run %s=1 go test -run %s in this package", path, UpdateEnv, t.Name())
			continue
		}
		if err := os.Remove(path); err != nil {
			t.Fatal(err)
		}
	}
}

// RoundTrip checks what a decoder accepted: v, decoded from data, encodes;
// decode accepts that encoding; and its value re-encodes to the same bytes,
// so checking and defaulting are stable (applied once, not drifting on
// each pass through a peer).
func RoundTrip[T any](t testing.TB, data []byte, v T, decode func([]byte) (T, error)) {
	t.Helper()
	once, err := json.Marshal(v)
	if err != nil {
		t.Fatalf("accepted value does not encode: %v", err)
	}
	v2, err := decode(once)
	if err != nil {
		t.Fatalf("accepted %q, but not its re-encoding %s: %v", data, once, err)
	}
	if twice, _ := json.Marshal(v2); !bytes.Equal(once, twice) {
		t.Fatalf("re-encoding is unstable:\n %s\n %s", once, twice)
	}
}
