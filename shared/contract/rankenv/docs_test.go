package rankenv

import (
	"os"
	"strings"
	"testing"
)

// docsFile shows Vars as a table between these two markers.
const (
	docsFile  = "../../../docs/interface.md"
	docsBegin = "<!-- begin rankenv.Vars"
	docsEnd   = "<!-- end rankenv.Vars -->"
)

// docsTable is Vars as docs/interface.md shows it.
func docsTable() string {
	var b strings.Builder
	b.WriteString("| variable | meaning |\n|---|---|\n")
	for _, v := range Vars {
		b.WriteString("| `" + v.Name + "` | " + v.Meaning + " |\n")
	}
	return b.String()
}

// TestDocsTableIsVars keeps the rank environment table of
// docs/interface.md in step with Vars: LOCKSTEP_UPDATE_DOCS=1 rewrites
// it; otherwise a difference fails, naming the first row that differs.
func TestDocsTableIsVars(t *testing.T) {
	raw, err := os.ReadFile(docsFile)
	if err != nil {
		t.Fatal(err)
	}
	doc := string(raw)
	b := strings.Index(doc, docsBegin)
	e := strings.Index(doc, docsEnd)
	if b < 0 || e < b {
		t.Fatalf("%s has no %q … %q block", docsFile, docsBegin, docsEnd)
	}
	b += strings.Index(doc[b:], "\n") + 1 // the table starts after the marker's line
	got, want := doc[b:e], docsTable()
	if got == want {
		return
	}
	if os.Getenv("LOCKSTEP_UPDATE_DOCS") == "1" {
		if err := os.WriteFile(docsFile, []byte(doc[:b]+want+doc[e:]), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	gl, wl := strings.Split(got, "\n"), strings.Split(want, "\n")
	for i := range max(len(gl), len(wl)) {
		var g, w string
		if i < len(gl) {
			g = gl[i]
		}
		if i < len(wl) {
			w = wl[i]
		}
		if g != w {
			t.Errorf("%s disagrees with rankenv.Vars at table line %d:\n docs: %s\n Vars: %s\nrun LOCKSTEP_UPDATE_DOCS=1 go test ./shared/contract/rankenv", docsFile, i+1, g, w)
			return
		}
	}
}

// Every name is declared once in Vars.
func TestVarsAreDistinct(t *testing.T) {
	seen := map[string]bool{}
	for _, v := range Vars {
		if seen[v.Name] || v.Name == "" || v.Meaning == "" || strings.Contains(v.Meaning, "|") {
			t.Errorf("Vars: %q is repeated, unnamed or has no one-cell meaning", v.Name)
		}
		seen[v.Name] = true
	}
}
