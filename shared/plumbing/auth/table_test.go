package auth_test

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/lockstep-dev/lockstep/shared/plumbing/auth"
)

// permissionTable renders the permission table as docs/operations.md
// prints it, with <name> for the identity's name.
func permissionTable() string {
	var b strings.Builder
	b.WriteString("| role | may publish | may subscribe |\n|---|---|---|\n")
	for _, r := range auth.Roles() {
		name := "<name>"
		if r.IsService() {
			name = string(r)
		}
		rules := auth.Permissions(auth.Identity{Name: name, Role: r})
		pub := strings.Join(rules.Pub, " ")
		if rules.Replies {
			pub += " (and one reply to each request received)"
		}
		fmt.Fprintf(&b, "| %s | `%s` | `%s` |\n", r, pub, strings.Join(rules.Sub, " "))
	}
	return b.String()
}

// The table in the docs is the table the server enforces.
func TestDocsPrintThePermissionTable(t *testing.T) {
	doc, err := os.ReadFile("../../../docs/operations.md")
	if err != nil {
		t.Fatal(err)
	}
	if want := permissionTable(); !strings.Contains(string(doc), want) {
		t.Errorf("docs/operations.md does not hold the permission table; paste:\n%s", want)
	}
}
