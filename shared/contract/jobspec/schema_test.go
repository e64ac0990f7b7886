package jobspec

import (
	"strings"
	"testing"
)

// The rules Go applies after the schema hold on their own: the client
// build (schema_client.go) runs them on specs the schema never saw, so
// they must neither panic nor blame the wrong field, and must refuse an
// ID admission would not file the verdict under.
func TestSemanticChecksStandWithoutTheSchema(t *testing.T) {
	for _, c := range []struct {
		name  string
		spec  Spec
		field string // "" when no error is expected
	}{
		{"no gang: nothing divided by tasksPerNode 0", Spec{Command: []string{"x"}}.WithDefaults(), ""},
		{"negative tasksPerNode", Spec{Gang: Gang{Nodes: 1, GPUsPerNode: 8, TasksPerNode: -2}}.WithDefaults(), ""},
		{"negative nodes not blamed on maxSwitches", Spec{Gang: Gang{Nodes: -3, GPUsPerNode: 8}}.WithDefaults(), ""},
		{"an ID that is not a DNS label", Spec{ID: "MyJob", Gang: Gang{Nodes: 1, GPUsPerNode: 8}}.WithDefaults(), "id"},
		{"an ID with '_'", Spec{ID: "x_1", Gang: Gang{Nodes: 1, GPUsPerNode: 8}}.WithDefaults(), "id"},
		{"uneven ranks still refused", Spec{Gang: Gang{Nodes: 1, GPUsPerNode: 8, TasksPerNode: 3}}.WithDefaults(), "gang.tasksPerNode"},
	} {
		fes := c.spec.semanticChecks()
		var fields []string
		for _, fe := range fes {
			fields = append(fields, fe.Field)
		}
		got := strings.Join(fields, ",")
		if got != c.field {
			t.Errorf("%s: fields %q, want %q (%v)", c.name, got, c.field, fes)
		}
	}
}
