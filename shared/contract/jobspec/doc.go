// Package jobspec is the v1 job spec: its Go form, parsing with validation
// against schemas/jobspec.v1.json, defaults, and job-ID rules.
//
// Parse is the only way a spec enters the system: the CLI runs it before
// publishing (for an immediate error), admission runs it again on what
// arrived (the bus is untrusted).
package jobspec
