package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/cockroachdb/errors"
	"go.yaml.in/yaml/v3"

	"github.com/lockstep-dev/lockstep/shared/contract/client"
	"github.com/lockstep-dev/lockstep/shared/contract/domain"
	"github.com/lockstep-dev/lockstep/shared/contract/jobspec"
)

// specSource is one spec to submit and where it came from, for errors.
type specSource struct {
	name string
	raw  []byte // JSON
}

// maxSpecStream bounds what submit reads from stdin when it holds many
// specs (a spec file is at most maxSpecFile).
const maxSpecStream = 64 << 20

// readSpecs reads every spec the arguments name: a file is one spec, a
// directory every *.json, *.yaml and *.yml file in it (sorted by name),
// and - the specs on stdin, one or many (JSON values one after another,
// or YAML documents separated by ---).
func readSpecs(env *cliEnv, args []string) ([]specSource, error) {
	var out []specSource
	for _, arg := range args {
		switch st, err := os.Stat(arg); {
		case arg == "-":
			docs, err := specStream(env.stdin)
			if err != nil {
				return nil, err
			}
			for i, d := range docs {
				out = append(out, specSource{name: fmt.Sprintf("stdin spec %d", i+1), raw: d})
			}
		case err == nil && st.IsDir():
			ents, err := os.ReadDir(arg)
			if err != nil {
				return nil, errors.Wrap(err, "read job specs")
			}
			n := 0
			for _, e := range ents {
				ext := strings.ToLower(filepath.Ext(e.Name()))
				if e.IsDir() || (ext != ".json" && ext != ".yaml" && ext != ".yml") {
					continue
				}
				path := filepath.Join(arg, e.Name())
				raw, err := readSpec(path)
				if err != nil {
					return nil, err
				}
				out = append(out, specSource{name: path, raw: raw})
				n++
			}
			if n == 0 {
				return nil, usagef("%s holds no job spec (*.json, *.yaml, *.yml)", arg)
			}
		default:
			raw, err := readSpec(arg)
			if err != nil {
				return nil, err
			}
			out = append(out, specSource{name: arg, raw: raw})
		}
	}
	return out, nil
}

// specStream splits stdin into specs, each as JSON.
func specStream(r io.Reader) ([][]byte, error) {
	data, err := io.ReadAll(io.LimitReader(r, maxSpecStream+1))
	if err != nil {
		return nil, errors.Wrap(err, "read job specs from stdin")
	}
	if len(data) > maxSpecStream {
		return nil, errors.Newf("more than %d MiB of job specs on stdin", maxSpecStream>>20)
	}
	var out [][]byte
	if !isYAML("-", data) {
		dec := json.NewDecoder(bytes.NewReader(data))
		for {
			var v json.RawMessage
			if err := dec.Decode(&v); err == io.EOF {
				break
			} else if err != nil {
				return nil, errors.Wrapf(err, "stdin is not valid JSON (spec %d)", len(out)+1)
			}
			out = append(out, v)
		}
	} else {
		dec := yaml.NewDecoder(bytes.NewReader(data))
		for {
			var doc any
			if err := dec.Decode(&doc); err == io.EOF {
				break
			} else if err != nil {
				return nil, errors.Wrapf(err, "stdin is not valid YAML (spec %d)", len(out)+1)
			}
			if doc == nil {
				continue // an empty document (a trailing ---)
			}
			raw, err := json.Marshal(doc)
			if err != nil {
				return nil, errors.Wrapf(err, "stdin spec %d cannot be expressed as JSON", len(out)+1)
			}
			out = append(out, raw)
		}
	}
	if len(out) == 0 {
		return nil, usagef("no job spec on stdin")
	}
	return out, nil
}

// submitMany submits a sweep: every spec is checked before any is sent
// (one bad spec sends none), then all are published at once and their
// IDs printed in order, then admission's verdicts are awaited together.
// It exits 1 if any was not accepted or was rejected.
func submitMany(ctx context.Context, env *cliEnv, c *client.Client, specs []specSource, o client.SubmitOptions) error {
	var bad []string
	ids := map[string]string{}
	parsed := make([]jobspec.Spec, len(specs))
	for i, s := range specs {
		spec, err := jobspec.Parse(s.raw)
		if err != nil {
			bad = append(bad, fmt.Sprintf("%s: %v", s.name, err))
			continue
		}
		parsed[i] = spec
		if spec.ID == "" {
			continue
		}
		if other, ok := ids[spec.ID]; ok {
			bad = append(bad, fmt.Sprintf("%s: id %s is also %s's", s.name, spec.ID, other))
		}
		ids[spec.ID] = s.name
		if err := refuseExisting(ctx, c, spec); err != nil {
			bad = append(bad, fmt.Sprintf("%s: %v", s.name, err))
		}
	}
	if len(bad) > 0 {
		return &exitError{code: 1, msg: fmt.Sprintf("%d of %d specs cannot be submitted; none was:\n  %s",
			len(bad), len(specs), strings.Join(bad, "\n  "))}
	}
	// Watching before publishing: no verdict can be written unseen.
	vctx, cancel := context.WithTimeout(ctx, verdictWait+time.Duration(len(specs))*10*time.Millisecond)
	defer cancel()
	records, werr := c.NewRecords(vctx)
	raws := make([][]byte, len(specs))
	for i, s := range specs {
		raws[i] = s.raw
	}
	start := time.Now()
	results := c.SubmitMany(ctx, raws, o)
	took := time.Since(start)
	failed := 0
	waiting := map[string]int{}
	for i, r := range results {
		if r.Err != nil {
			fmt.Fprintf(env.stderr, "%s: not submitted: %s\n", specs[i].name, clean(r.Err.Error()))
			failed++
			continue
		}
		fmt.Fprintln(env.stdout, clean(r.ID))
		waiting[r.ID] = expectedRecords(parsed[i])
	}
	rejected, pending := 0, 0
	if werr != nil {
		fmt.Fprintf(env.stderr, "admission's verdicts not awaited: %s\n", clean(werr.Error()))
	} else {
		why, unseen := awaitVerdicts(vctx, records, waiting)
		for _, r := range results {
			if reason, ok := why[r.ID]; ok && r.Err == nil {
				fmt.Fprintf(env.stderr, "job %s rejected: %s\n", clean(r.ID), clean(reason))
			}
		}
		rejected, pending = len(why), unseen
	}
	fmt.Fprintf(env.stderr, "submitted %d of %d jobs in %s (%.2f ms each)", len(specs)-failed, len(specs),
		took.Round(time.Millisecond), float64(took.Microseconds())/1000/float64(len(specs)))
	if rejected > 0 {
		fmt.Fprintf(env.stderr, "; %d rejected", rejected)
	}
	if pending > 0 {
		fmt.Fprintf(env.stderr, "; %d not yet seen by admission (lockstep queue shows them)", pending)
	}
	fmt.Fprintln(env.stderr)
	if failed+rejected > 0 {
		return &exitError{code: 1, msg: fmt.Sprintf("%d not submitted, %d rejected", failed, rejected)}
	}
	return nil
}

// awaitVerdicts reads records until each waiting job has its verdict or
// ctx ends: its record, or for an admitted array every task's (waiting
// holds how many records each ID awaits: expectedRecords), so that a
// cancel or a dependency on the array right after submit finds all its
// tasks. It returns the rejected jobs' reasons by ID, and how many jobs
// admission had not recorded by then.
func awaitVerdicts(ctx context.Context, records <-chan domain.Job, waiting map[string]int) (rejected map[string]string, pending int) {
	rejected = map[string]string{}
	seen := map[string]bool{}
	for len(waiting) > 0 {
		var j domain.Job
		var ok bool
		select {
		case j, ok = <-records:
		case <-ctx.Done():
		}
		if !ok {
			break // ctx ended (the channel closes with it) or the watch did
		}
		id := j.ID
		if j.Array != nil {
			id = j.Array.JobID // one of an admitted array's tasks
		}
		if waiting[id] == 0 || seen[j.ID] {
			continue
		}
		seen[j.ID] = true
		waiting[id]--
		if j.State == domain.StateRejected {
			rejected[id] = j.Reason
			waiting[id] = 0
		}
		if waiting[id] == 0 {
			delete(waiting, id)
		}
	}
	return rejected, len(waiting)
}

// expectedRecords is how many records admission writes for a spec: one,
// or one per task of an array.
func expectedRecords(spec jobspec.Spec) int {
	if spec.Array == nil {
		return 1
	}
	tasks, err := spec.Array.Tasks()
	if err != nil || len(tasks) == 0 {
		return 1 // rejected: one record says why
	}
	return len(tasks)
}
