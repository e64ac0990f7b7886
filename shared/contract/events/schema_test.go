package events

import (
	"encoding/json"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"slices"
	"strconv"
	"testing"

	"github.com/lockstep-dev/lockstep/shared/contract/schemacheck"
)

// declaredTypes reads every `X Type = "..."` constant of this package from
// its source, so that a type added here without the schema fails below.
func declaredTypes(t *testing.T) []string {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), "events.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	ast.Inspect(f, func(n ast.Node) bool {
		spec, ok := n.(*ast.ValueSpec)
		if !ok {
			return true
		}
		if id, ok := spec.Type.(*ast.Ident); !ok || id.Name != "Type" {
			return true
		}
		for _, v := range spec.Values {
			if lit, ok := v.(*ast.BasicLit); ok && lit.Kind == token.STRING {
				s, err := strconv.Unquote(lit.Value)
				if err != nil {
					t.Fatal(err)
				}
				out = append(out, s)
			}
		}
		return true
	})
	return out
}

// The event types the code declares are exactly the schema's, and every
// kind of event the services build passes the schema (through DecodeFrom,
// which checks it).
func TestEventsMatchSchema(t *testing.T) {
	raw, err := os.ReadFile("../../../schemas/event.v1.json")
	if err != nil {
		t.Fatal(err)
	}
	var schema struct {
		Properties struct {
			Type struct {
				Enum []string `json:"enum"`
			} `json:"type"`
		} `json:"properties"`
	}
	if err := json.Unmarshal(raw, &schema); err != nil {
		t.Fatal(err)
	}
	declared, enum := declaredTypes(t), schema.Properties.Type.Enum
	if len(declared) == 0 {
		t.Fatal("found no Type constants in events.go")
	}
	slices.Sort(declared)
	slices.Sort(enum)
	if !slices.Equal(declared, enum) {
		t.Errorf("event types in events.go %v, in schemas/event.v1.json %v", declared, enum)
	}
	for name, ev := range goodEvents() {
		data, _ := json.Marshal(ev)
		if err := schemacheck.Event(data); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
}
