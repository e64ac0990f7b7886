package client_test

import (
	"strings"
	"testing"

	"github.com/lockstep-dev/lockstep/shared/contract/client"
	"github.com/lockstep-dev/lockstep/shared/contract/jobspec"
)

// A generated ID is a valid job ID whatever the name, keeps what it can of
// the name, and carries 64 random bits: it is the submission's
// de-duplication key, so a sweep of same-named specs must not repeat one.
func TestNewID(t *testing.T) {
	for _, name := range []string{"", "Train ResNet-50!", strings.Repeat("a", 80), strings.Repeat("ab-", 30), "--"} {
		id := client.NewID(name)
		base, suffix, _ := strings.Cut(id[len(id)-17:], "-")
		if !jobspec.ValidID(id) || base != "" || len(suffix) != 16 {
			t.Errorf("NewID(%q) = %q: valid %v, want <name>-<16 hex digits>", name, id, jobspec.ValidID(id))
		}
	}
	if id := client.NewID("Train ResNet-50!"); !strings.HasPrefix(id, "train-resnet-50-") {
		t.Errorf("NewID kept %q of the name", id)
	}
	seen := map[string]bool{}
	for range 100_000 {
		id := client.NewID("sweep")
		if seen[id] {
			t.Fatalf("NewID repeated %s within 100,000 draws", id)
		}
		seen[id] = true
	}
}
