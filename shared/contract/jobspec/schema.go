//go:build !lockstep_client

package jobspec

import (
	"sync"

	"github.com/lockstep-dev/lockstep/schemas"
	"github.com/lockstep-dev/lockstep/shared/contract/schemacheck"
	"github.com/lockstep-dev/lockstep/shared/contract/validate"
)

// SchemaChecked says whether Parse checks specs against
// schemas/jobspec.v1.json: it does, except in the client build.
const SchemaChecked = true

var loadSchema = sync.OnceValues(func() (*schemacheck.Schema, error) {
	return schemacheck.Load(schemas.JobSpecV1)
})

// schemaCheck checks raw against schemas/jobspec.v1.json.
func schemaCheck(raw []byte) ([]validate.FieldError, error) {
	sch, err := loadSchema()
	if err != nil {
		return nil, err
	}
	return sch.Check(raw), nil
}
