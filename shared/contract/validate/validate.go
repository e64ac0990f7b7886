// Package validate checks JSON documents against the schemas in schemas/
// and turns schema violations into errors that name the offending field.
package validate

import (
	"bytes"
	"fmt"
	"sort"
	"strings"

	"github.com/cockroachdb/errors"
	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"
	"golang.org/x/text/language"
	"golang.org/x/text/message"

	"github.com/lockstep-dev/lockstep/schemas"
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

// Schema is a compiled schema from schemas/.
type Schema struct {
	name string
	sch  *jsonschema.Schema
}

// Load compiles one schema file of schemas.FS.
func Load(file string) (*Schema, error) {
	raw, err := schemas.FS.ReadFile(file)
	if err != nil {
		return nil, errors.Wrapf(err, "read schema %s", file)
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return nil, errors.Wrapf(err, "parse schema %s", file)
	}
	c := jsonschema.NewCompiler()
	c.AssertFormat()
	if err := c.AddResource(file, doc); err != nil {
		return nil, errors.Wrapf(err, "add schema %s", file)
	}
	sch, err := c.Compile(file)
	if err != nil {
		return nil, errors.Wrapf(err, "compile schema %s", file)
	}
	return &Schema{name: file, sch: sch}, nil
}

// Check parses raw as JSON and validates it. A syntax error yields one
// FieldError with the byte offset; violations yield one FieldError each,
// sorted by field. A nil slice means valid.
func (s *Schema) Check(raw []byte) []FieldError {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return []FieldError{{Message: "malformed JSON: " + err.Error()}}
	}
	err = s.sch.Validate(doc)
	if err == nil {
		return nil
	}
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		return []FieldError{{Message: err.Error()}}
	}
	p := message.NewPrinter(language.English)
	var out []FieldError
	collect(ve, p, "", &out)
	sort.SliceStable(out, func(i, j int) bool { return out[i].Field < out[j].Field })
	return dedupe(out)
}

// collect gathers the leaves of the cause tree: the specific violations,
// not the "doesn't validate against schema" wrappers above them.
// Some keywords (propertyNames) validate a detached value whose location is
// empty; such a leaf inherits the nearest located ancestor's field.
func collect(e *jsonschema.ValidationError, p *message.Printer, parent string, out *[]FieldError) {
	field := strings.Join(e.InstanceLocation, ".")
	if _, ok := e.ErrorKind.(*kind.PropertyNames); ok {
		// The library shares (and later overwrites) the instance location
		// slice of propertyNames errors; the schema location is reliable.
		field = fieldFromSchemaURL(e.SchemaURL)
	}
	if field == "" {
		field = parent
	}
	if len(e.Causes) == 0 {
		*out = append(*out, FieldError{Field: field, Message: e.ErrorKind.LocalizedString(p)})
		return
	}
	for _, c := range e.Causes {
		collect(c, p, field, out)
	}
}

// fieldFromSchemaURL turns ".../schema.json#/properties/env/propertyNames"
// into "env".
func fieldFromSchemaURL(u string) string {
	_, frag, _ := strings.Cut(u, "#")
	parts := strings.Split(frag, "/")
	var names []string
	for i := 0; i+1 < len(parts); i++ {
		if parts[i] == "properties" {
			names = append(names, parts[i+1])
			i++
		}
	}
	return strings.Join(names, ".")
}

func dedupe(in []FieldError) []FieldError {
	out := in[:0]
	seen := map[FieldError]bool{}
	for _, fe := range in {
		if !seen[fe] {
			seen[fe] = true
			out = append(out, fe)
		}
	}
	return out
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
