//go:build !lockstep_client

package jobspec

import (
	"sync"

	"github.com/lockstep-dev/lockstep/schemas"
	"github.com/lockstep-dev/lockstep/shared/contract/schemacheck"
	"github.com/lockstep-dev/lockstep/shared/contract/validate"
)

var loadSchema = sync.OnceValues(func() (*schemacheck.Schema, error) {
	return schemacheck.Load(schemas.JobSpecV1)
})

// schemaCheck checks raw against schemas/jobspec.v1.json (except in the
// client build: schema_client.go).
func schemaCheck(raw []byte) ([]validate.FieldError, error) {
	sch, err := loadSchema()
	if err != nil {
		return nil, err
	}
	return sch.Check(raw), nil
}
