package fuzzseed

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// recorder is a testing.TB that keeps the errors Sync and RoundTrip
// report.
type recorder struct {
	testing.TB
	errs []string
}

func (r *recorder) Errorf(format string, args ...any) {
	r.errs = append(r.errs, fmt.Sprintf(format, args...))
}

// Fatalf records like Errorf and ends the calling goroutine, as testing's
// own does.
func (r *recorder) Fatalf(format string, args ...any) {
	r.Errorf(format, args...)
	runtime.Goexit()
}
func (r *recorder) Helper() {}

func TestSyncWritesChecksAndPrunes(t *testing.T) {
	t.Chdir(t.TempDir())
	seeds := map[string][]byte{"good-a": []byte(`{"a":1}`), "bad-b": []byte("\x00")}
	t.Setenv(UpdateEnv, "1")
	Sync(t, "FuzzX", seeds)

	t.Setenv(UpdateEnv, "")
	r := &recorder{TB: t}
	Sync(r, "FuzzX", seeds)
	if len(r.errs) != 0 {
		t.Fatalf("a corpus just written is reported: %v", r.errs)
	}

	dir := filepath.Join("testdata", "fuzz", "FuzzX")
	for name, body := range map[string]string{"bad-gone": "x", "0123456789abcdef": "crasher", "found-kept": "kept"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "good-a"), []byte("stale"), 0o644); err != nil {
		t.Fatal(err)
	}
	r = &recorder{TB: t}
	Sync(r, "FuzzX", seeds)
	got := strings.Join(r.errs, "\n")
	if len(r.errs) != 2 || !strings.Contains(got, "good-a is missing or stale") || !strings.Contains(got, "bad-gone is in no test table") {
		t.Fatalf("errors = %q, want good-a stale and bad-gone unlisted", r.errs)
	}

	t.Setenv(UpdateEnv, "1")
	Sync(t, "FuzzX", seeds)
	for name, want := range map[string]bool{"bad-gone": false, "0123456789abcdef": true, "found-kept": true, "good-a": true} {
		if _, err := os.Stat(filepath.Join(dir, name)); (err == nil) != want {
			t.Errorf("after an update, %s exists = %v, want %v", name, err == nil, want)
		}
	}
}

// RoundTrip passes a decoder that gives back what it was given, and fails
// one that refuses its own output or changes the value on each pass.
func TestRoundTrip(t *testing.T) {
	type value struct{ N int }
	decodeJSON := func(b []byte) (value, error) {
		var v value
		err := json.Unmarshal(b, &v)
		return v, err
	}
	for _, tc := range []struct {
		name   string
		decode func([]byte) (value, error)
		want   string // "": no error
	}{
		{"stable", decodeJSON, ""},
		{"refuses its encoding", func([]byte) (value, error) { return value{}, errors.New("no") }, "but not its re-encoding"},
		{"drifts", func(b []byte) (value, error) {
			v, err := decodeJSON(b)
			v.N++
			return v, err
		}, "re-encoding is unstable"},
	} {
		r := &recorder{TB: t}
		done := make(chan struct{})
		go func() { // Fatalf ends this goroutine, not the test's
			defer close(done)
			RoundTrip(r, []byte(`{"N":1}`), value{N: 1}, tc.decode)
		}()
		<-done
		got := strings.Join(r.errs, "\n")
		if tc.want == "" && got != "" || !strings.Contains(got, tc.want) {
			t.Errorf("%s: errors %q, want %q", tc.name, got, tc.want)
		}
	}
}
