//go:build !lockstep_client

package jobspec

import (
	"github.com/lockstep-dev/lockstep/shared/contract/schemacheck"
	"github.com/lockstep-dev/lockstep/shared/contract/validate"
)

// schemaCheck checks raw against schemas/jobspec.v1.json (except in the
// client build: schema_client.go).
func schemaCheck(raw []byte) ([]validate.FieldError, error) {
	return schemacheck.JobSpecFields(raw)
}
