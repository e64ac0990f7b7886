package config

import (
	"bytes"
	"encoding/json"

	"github.com/cockroachdb/errors"
	"go.yaml.in/yaml/v3"

	"github.com/lockstep-dev/lockstep/shared/core/queue"
	"github.com/lockstep-dev/lockstep/shared/plumbing/connection"
)

// LoadQueues reads the queue policy file (YAML or JSON):
//
//	default: {gpuQuota: 0, weight: 1}      # queues not listed
//	queues:
//	  research:   {gpuQuota: 64, weight: 2}
//	  production: {weight: 4}
//	sizeHandicap: 24h       # queue order: a job yields this much per GPU beyond its first (-1s: off)
//	maxSizeHandicap: 168h   # ... at most this much (the starvation bound)
//	sizeHandicapBacklog: 16 # ... and at most this many times the small-job backlog (-1: no such cap)
//	stretch: {leaf: 0.05, spine: 0.2}  # expected slowdown per extra leaf / spine (-1: none)
//	stretch: {weight: 100}  # a spread placement counts this many times its slowdown against waiting for a compact one
//
// and access and per-user limits (queue.Admit, queue.Config.Limits):
//
//	queues:
//	  prod: {allowUsers: [alice], allowGroups: [ml], maxPriority: 10, allowRoot: false}
//	defaultUser: {maxPendingJobs: 100, maxRunningGPUs: 32}   # everyone, and jobs without an owner
//	users:
//	  alice: {maxRunningGPUs: 64, queues: {prod: {maxPriority: 100, maxRunningGPUs: 16}}}
//
// and who is who (queue.Config.GroupsOf, Privileged):
//
//	groups: {ml: [alice, carol]}   # for allowGroups: services look up no local accounts
//	admins: [admin]                # may cancel, drain and checkpoint anyone's job
//	operators: [olga]              # likewise
//
// An empty path means no quotas, equal weights and the defaults above
// (queue.DefaultSizeHandicap, DefaultMaxSizeHandicap,
// DefaultSizeHandicapBacklog, DefaultLeafStretch, DefaultSpineStretch).
// Unknown fields and out-of-range values are errors naming the field.
func LoadQueues(path string) (queue.Config, error) {
	var cfg queue.Config
	if path == "" {
		return cfg, nil
	}
	raw, err := connection.ReadFileUpTo(path, connection.MaxConfigFile)
	if err != nil {
		return cfg, errors.Wrap(err, "--queues")
	}
	var doc any
	if err := yaml.Unmarshal(raw, &doc); err != nil {
		return cfg, errors.Wrapf(err, "--queues: %s is not valid YAML", path)
	}
	js, err := json.Marshal(doc)
	if err != nil {
		return cfg, errors.Wrapf(err, "--queues: %s", path)
	}
	dec := json.NewDecoder(bytes.NewReader(js))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&cfg); err != nil {
		return cfg, errors.Wrapf(err, "--queues: %s", path)
	}
	check := func(name string, q queue.QueueConfig) error {
		if q.GPUQuota < 0 {
			return errors.Newf("--queues: %s: gpuQuota %d is negative", name, q.GPUQuota)
		}
		if q.Weight < 0 {
			return errors.Newf("--queues: %s: weight %v is negative", name, q.Weight)
		}
		return nil
	}
	if err := cfg.Validate(); err != nil {
		return cfg, errors.Wrapf(err, "--queues: %s", path)
	}
	if err := check("default", cfg.Default); err != nil {
		return cfg, err
	}
	for name, q := range cfg.Queues {
		if err := check("queues."+name, q); err != nil {
			return cfg, err
		}
	}
	if err := checkAccess(cfg); err != nil {
		return cfg, err
	}
	return cfg, nil
}
