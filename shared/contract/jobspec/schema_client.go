//go:build lockstep_client

package jobspec

import (
	"bytes"
	"encoding/json"

	"github.com/lockstep-dev/lockstep/shared/contract/validate"
)

// schemaCheck, in the client build of the CLI (-tags lockstep_client,
// docs/cli.md), does not check specs against schemas/jobspec.v1.json: the
// JSON Schema library costs every command milliseconds of start-up, and
// admission checks every spec against the schema anyway, its rejection
// naming the field as Parse would. Parse still decodes strictly and
// applies every rule of its own; this refuses only what is not one JSON
// object, which the strict decode would report less plainly.
func schemaCheck(raw []byte) ([]validate.FieldError, error) {
	var doc any
	if err := json.Unmarshal(raw, &doc); err != nil {
		return []validate.FieldError{{Message: "malformed JSON: " + err.Error()}}, nil
	}
	if t := bytes.TrimLeft(raw, " \t\r\n"); len(t) == 0 || t[0] != '{' {
		return []validate.FieldError{{Message: "a job spec is a JSON object"}}, nil
	}
	return nil, nil
}
