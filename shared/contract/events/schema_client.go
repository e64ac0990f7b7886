//go:build lockstep_client

package events

import "github.com/lockstep-dev/lockstep/shared/contract/validate"

// schemaCheck is left to the strict decode and the checks of Decode in the
// client build of the CLI (-tags lockstep_client), which does not link the
// JSON Schema library (see jobspec.SchemaChecked). The CLI only shows
// events, cleaned for the terminal, and takes a job's end from its record,
// never from an event.
func schemaCheck([]byte) ([]validate.FieldError, error) { return nil, nil }
