//go:build lockstep_client

package events

import "github.com/lockstep-dev/lockstep/shared/contract/validate"

// schemaCheck is left to the strict decode and the checks of Decode in the
// client build of the CLI (-tags lockstep_client), which does not link the
// JSON Schema library (see jobspec/schema_client.go). With auth on, only the
// services publish job events (and a node its own node events), and every
// reader refuses a direct-get answer stored on an event subject
// (bus.Replayed), so the schema is a second check here, not the only one.
// The CLI cleans what it prints, and takes a job's end from its record,
// never from an event.
func schemaCheck([]byte) ([]validate.FieldError, error) { return nil, nil }
