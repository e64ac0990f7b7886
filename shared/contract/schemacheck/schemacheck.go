// Package schemacheck checks JSON documents against the schemas in
// schemas/ and turns violations into validate.FieldErrors that name the
// offending field.
//
// It is apart from validate because the JSON Schema library compiles every
// draft's meta-schema when the process starts (about 3 to 5 ms here), a
// cost the client build of the CLI leaves out: admission checks every spec
// against the schema whatever the client checked.
package schemacheck

import (
	"bytes"
	"sort"
	"strings"
	"sync"

	"github.com/cockroachdb/errors"
	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"
	"golang.org/x/text/language"
	"golang.org/x/text/message"

	"github.com/lockstep-dev/lockstep/schemas"
	"github.com/lockstep-dev/lockstep/shared/contract/validate"
)

// Schema is a compiled schema from schemas/.
type Schema struct {
	sch *jsonschema.Schema
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
	return &Schema{sch: sch}, nil
}

// Check parses raw as JSON and validates it. A syntax error yields one
// FieldError with the byte offset; violations yield one FieldError each,
// sorted by field. A nil slice means valid.
func (s *Schema) Check(raw []byte) []validate.FieldError {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return []validate.FieldError{{Message: "malformed JSON: " + err.Error()}}
	}
	err = s.sch.Validate(doc)
	if err == nil {
		return nil
	}
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		return []validate.FieldError{{Message: err.Error()}}
	}
	p := message.NewPrinter(language.English)
	var out []validate.FieldError
	collect(ve, p, "", &out)
	sort.SliceStable(out, func(i, j int) bool { return out[i].Field < out[j].Field })
	return dedupe(out)
}

// collect gathers the leaves of the cause tree: the specific violations,
// not the "doesn't validate against schema" wrappers above them.
// Some keywords (propertyNames) validate a detached value whose location is
// empty; such a leaf inherits the nearest located ancestor's field.
func collect(e *jsonschema.ValidationError, p *message.Printer, parent string, out *[]validate.FieldError) {
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
		*out = append(*out, validate.FieldError{Field: field, Message: e.ErrorKind.LocalizedString(p)})
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

func dedupe(in []validate.FieldError) []validate.FieldError {
	out := in[:0]
	seen := map[validate.FieldError]bool{}
	for _, fe := range in {
		if !seen[fe] {
			seen[fe] = true
			out = append(out, fe)
		}
	}
	return out
}

// Event validates an encoded event against schemas/event.v1.json.
func Event(raw []byte) error {
	fes, err := EventFields(raw)
	if err != nil {
		return err
	}
	if fes != nil {
		return errors.Newf("event violates schema: %s", validate.Join(fes))
	}
	return nil
}

// EventFields is Event's violations, one per field (nil: valid).
func EventFields(raw []byte) ([]validate.FieldError, error) {
	return check(loadEvent, raw)
}

// JobSpecFields checks a job spec against schemas/jobspec.v1.json: its
// violations, one per field (nil: valid). jobspec.Parse calls it.
func JobSpecFields(raw []byte) ([]validate.FieldError, error) {
	return check(loadJobSpec, raw)
}

// Each schema is compiled once per process, when first used.
var (
	loadEvent   = sync.OnceValues(func() (*Schema, error) { return Load(schemas.EventV1) })
	loadJobSpec = sync.OnceValues(func() (*Schema, error) { return Load(schemas.JobSpecV1) })
)

func check(load func() (*Schema, error), raw []byte) ([]validate.FieldError, error) {
	sch, err := load()
	if err != nil {
		return nil, err
	}
	return sch.Check(raw), nil
}
