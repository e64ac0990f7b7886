//go:build !lockstep_client

package events

import (
	"github.com/lockstep-dev/lockstep/shared/contract/schemacheck"
	"github.com/lockstep-dev/lockstep/shared/contract/validate"
)

// schemaCheck checks an encoded event against schemas/event.v1.json.
func schemaCheck(data []byte) ([]validate.FieldError, error) {
	return schemacheck.EventFields(data)
}
