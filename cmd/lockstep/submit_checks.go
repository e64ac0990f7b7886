package main

import (
	"bytes"
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/lockstep-dev/lockstep/shared/contract/client"
	"github.com/lockstep-dev/lockstep/shared/contract/domain"
	"github.com/lockstep-dev/lockstep/shared/contract/errs"
	"github.com/lockstep-dev/lockstep/shared/contract/jobspec"
	"github.com/lockstep-dev/lockstep/shared/core/place"
)

// refuseExisting refuses a spec whose id names a job (or an array) that
// exists already: the stream would drop the submission as a duplicate,
// or admission would refuse it, and `submit --wait` used to follow the
// old job's events as if they were this submission's.
func refuseExisting(ctx context.Context, c *client.Client, spec jobspec.Spec) error {
	if spec.ID == "" {
		return nil
	}
	j, err := c.Job(ctx, spec.ID)
	switch {
	case err == nil:
		if c.User != "" && j.Owner != c.User {
			return &exitError{code: 1, msg: fmt.Sprintf("job %s: id already used by another user", clean(spec.ID))}
		}
		return &exitError{code: 1, msg: fmt.Sprintf("job %s already exists (%s): submit under another id "+
			"(lockstep describe %s shows it)", clean(spec.ID), clean(string(j.State)), clean(spec.ID))}
	case !errs.IsNotFound(err):
		return err
	}
	tasks, err := c.ArrayTasks(ctx, spec.ID)
	if err != nil {
		return err
	}
	if len(tasks) > 0 {
		return &exitError{code: 1, msg: fmt.Sprintf("array %s already exists (%s): submit under another id",
			clean(spec.ID), plural(len(tasks), "task"))}
	}
	return nil
}

// verdictWait bounds how long submit without --wait waits for admission's
// verdict on the job it just submitted (awaitVerdicts): a rejected job
// (a gang no cluster of this inventory can ever hold, a quota, an invalid
// dependency) exits 1 with admission's reason instead of leaving the user
// to find out from a queue that hides it. A job still unrecorded after
// the wait is left to the queue (admission is behind).
const verdictWait = 3 * time.Second

// wouldBeRejected is `submit --test-only`'s answer for a gang admission
// would reject because no amount of waiting can place it: the same check
// (place.Feasible) on the same inventory (etcd's, as the drain service
// lists it). Placement's plan alone only says such a job would wait.
// Without an inventory (no node yet, no drain service answering) it cannot
// judge, as admission cannot, and leaves the answer to placement.
func wouldBeRejected(ctx context.Context, c *client.Client, spec jobspec.Spec) error {
	infos, err := c.Nodes(ctx)
	if err != nil || len(infos) == 0 {
		return nil
	}
	nodes := make(map[string]domain.Node, len(infos))
	for _, n := range infos {
		nodes[n.Node.Name] = n.Node
	}
	id := spec.ID
	if id == "" {
		id = "test-only"
	}
	if detail, ok := place.Feasible(place.EmptyCluster(nodes), id, spec.WithDefaults()); !ok {
		return &exitError{code: 1, msg: "would be rejected: gang: " + clean(detail)}
	}
	return nil
}

// isYAML reports a spec to read as YAML: a .yaml/.yml file, or stdin (-)
// whose first character does not open a JSON object. YAML is a superset of
// JSON, but JSON is parsed as JSON to keep its numbers and errors exact.
func isYAML(path string, raw []byte) bool {
	if path == "-" {
		trimmed := bytes.TrimLeft(raw, " \t\r\n\ufeff")
		return len(trimmed) > 0 && trimmed[0] != '{'
	}
	ext := strings.ToLower(filepath.Ext(path))
	return ext == ".yaml" || ext == ".yml"
}

// specName is how an error names where a spec came from.
func specName(path string) string {
	if path == "-" {
		return "stdin"
	}
	return path
}
