// Package schemas embeds Lockstep's JSON Schemas: the v1 job spec and the v1
// event envelope. They are the public contract and the one source of
// validation rules; shared/contract/jobspec and shared/contract/events compile them at start.
package schemas

import "embed"

// FS holds every schema file.
//
//go:embed *.json
var FS embed.FS

// File names inside FS.
const (
	JobSpecV1 = "jobspec.v1.json"
	EventV1   = "event.v1.json"
)
