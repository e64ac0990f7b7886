// Package validate is how Lockstep names what is wrong with an input: a
// FieldError per offending field. The JSON Schema checks that produce most
// of them are in package schemacheck, which the CLI does not link.
package validate

import (
	"fmt"
	"strings"
)

// FieldError is one violation: a JSON pointer-like path ("gang.nodes", or
// "" for the whole document) and what is wrong with it.
type FieldError struct {
	Field   string `json:"field"`
	Message string `json:"message"`
}

func (e FieldError) String() string {
	if e.Field == "" {
		return e.Message
	}
	return e.Field + ": " + e.Message
}

// Join renders violations as one line: "gang.nodes: minimum: got 0, want 1; command: ...".
func Join(errs []FieldError) string {
	parts := make([]string, len(errs))
	for i, e := range errs {
		parts[i] = e.String()
	}
	return strings.Join(parts, "; ")
}

// Errorf is a convenience for a single field error.
func Errorf(field, format string, args ...any) FieldError {
	return FieldError{Field: field, Message: fmt.Sprintf(format, args...)}
}
