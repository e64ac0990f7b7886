package web

import (
	"bytes"
	"fmt"
	"io"
	"testing"
)

func TestSharedRendersOncePerGeneration(t *testing.T) {
	var r sharedRenders
	calls := 0
	render := func(w io.Writer) error { calls++; _, err := fmt.Fprintf(w, "render %d", calls); return err }
	var out []string
	for _, step := range []struct {
		page string
		gen  uint64
	}{{"fabric", 1}, {"fabric", 1}, {"queue", 1}, {"fabric", 2}, {"fabric", 2}} {
		var buf bytes.Buffer
		if err := r.render(&buf, step.page, step.gen, render); err != nil {
			t.Fatal(err)
		}
		out = append(out, buf.String())
	}
	want := []string{"render 1", "render 1", "render 2", "render 3", "render 3"}
	if fmt.Sprint(out) != fmt.Sprint(want) || calls != 3 {
		t.Errorf("got %v (%d renders), want %v", out, calls, want)
	}
	failing := func(io.Writer) error { return fmt.Errorf("boom") }
	if err := r.render(io.Discard, "cluster", 1, failing); err == nil {
		t.Error("a failed render was not reported")
	}
}
