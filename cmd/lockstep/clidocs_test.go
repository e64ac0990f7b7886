//go:build !lockstep_client

package main

import (
	"os"
	"strings"
	"testing"
)

// docs/cli.md is the command tree as --help prints it; regenerate it with
// LOCKSTEP_UPDATE_DOCS=1.
func TestDocsCLIIsTheCommandTree(t *testing.T) {
	const path = "../../docs/cli.md"
	want := cliReference(newRoot(newApp(&cliEnv{})))
	for _, cmd := range []string{"## lockstep submit", "## lockstep history", "## lockstep config use-context", "## lockstep web", "## lockstep sbatch"} {
		if !strings.Contains(want, cmd+"\n") {
			t.Errorf("the reference lacks %q", cmd)
		}
	}
	if os.Getenv("LOCKSTEP_UPDATE_DOCS") == "1" {
		if err := os.WriteFile(path, []byte(want), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != want {
		t.Errorf("%s is stale: run LOCKSTEP_UPDATE_DOCS=1 go test -run TestDocsCLIIsTheCommandTree ./cmd/lockstep", path)
	}
}
