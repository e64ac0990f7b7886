package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/cockroachdb/errors"
	"github.com/spf13/cobra"
	"go.yaml.in/yaml/v3"

	"github.com/lockstep-dev/lockstep/shared/contract/client"
	"github.com/lockstep-dev/lockstep/shared/contract/domain"
	"github.com/lockstep-dev/lockstep/shared/contract/events"
	"github.com/lockstep-dev/lockstep/shared/contract/jobspec"
	"github.com/lockstep-dev/lockstep/shared/plumbing/connection"
)

func (a *app) submit(cmd *cobra.Command) runE {
	cmd.Long = longHelp(`
		Submit a job spec (JSON, or YAML for .yaml/.yml files; FILE - reads either from stdin).
		Prints the job ID, and exits 1 if admission rejects the job (within a few
		seconds). With --wait, follows the job's events and exits 0 if it succeeds,
		1 if it fails, is cancelled or rejected; for an array, waits for every task
		and exits 0 only if all of them succeeded.

		Many specs at once (a sweep): several FILEs, a directory (its *.json, *.yaml
		and *.yml files), or - with many specs on stdin (JSON values one after another,
		or YAML documents separated by ---). All are checked before any is sent, then
		published together; their IDs are printed in order, and it exits 1 if any was
		rejected (each rejection on stderr).

		The client build (-tags lockstep_client) checks a spec against all but the JSON
		Schema, which admission applies: a spec only the schema refuses is sent, and
		its rejection, naming the field, is printed as admission's.`)
	fs := cmd.Flags()
	wait := fs.Bool("wait", false, "follow the job's events until it ends")
	testOnly := fs.Bool("test-only", false, "print where and when the job would start, without submitting it (like sbatch --test-only)")
	here, _ := os.Getwd()
	workdir := fs.String("workdir", here, "ranks' working directory when the spec sets none (\"\" for a fresh one per attempt)")
	image := fs.String("image", "", "run every rank in a container of this OCI image (sets container.image; see docs/containers.md)")
	return func(cmd *cobra.Command, args []string) error {
		ctx, env := cmd.Context(), a.env
		specs, err := readSpecs(env, args)
		if err != nil {
			return err
		}
		if *image != "" {
			for i := range specs {
				if specs[i].raw, err = withImage(specs[i].raw, *image); err != nil {
					return errors.Wrap(err, specs[i].name)
				}
			}
		}
		if len(specs) > 1 {
			if *wait || *testOnly {
				return usagef("--wait and --test-only take one job spec; %d given", len(specs))
			}
			c, err := a.dial(ctx)
			if err != nil {
				return err
			}
			return submitMany(ctx, env, c, specs, client.SubmitOptions{Workdir: *workdir})
		}
		raw := specs[0].raw
		// Validate before connecting: a bad spec is the user's to fix first.
		// (The client build leaves the JSON Schema to admission, whose
		// rejection submitOne prints.)
		spec, err := jobspec.Parse(raw)
		if err != nil {
			return err
		}
		c, err := a.dial(ctx)
		if err != nil {
			return err
		}
		if *testOnly {
			return printTestOnly(ctx, env, c, raw)
		}
		if err := refuseExisting(ctx, c, spec); err != nil {
			return err
		}
		if !*wait {
			return submitOne(ctx, env, c, raw, spec, *workdir)
		}
		id, err := c.Submit(ctx, raw, client.SubmitOptions{Workdir: *workdir})
		if err != nil {
			return err
		}
		fmt.Fprintln(env.stdout, clean(id))
		if spec.Array != nil {
			// The array's own ID has no record once admitted: its tasks do.
			return waitForTasks(ctx, env, c, id, *spec.Array)
		}
		// A record that is someone else's is not this submission's outcome:
		// admission refused it, and the wait would follow their job.
		if j, err := waitJob(ctx, c, id); err == nil && c.User != "" && j.Owner != c.User {
			return &exitError{code: 1, msg: fmt.Sprintf("job %s: id already used by another user", clean(id))}
		}
		return waitForEnd(ctx, env, c, id)
	}
}

// submitOne submits one spec, prints its ID, and waits briefly for
// admission's verdict (client.Submission.Verdict; an array's, one record
// per task, from a watch of the records opened before publishing).
func submitOne(ctx context.Context, env *cliEnv, c *client.Client, raw []byte, spec jobspec.Spec, workdir string) error {
	if spec.Array == nil {
		s, err := c.SubmitOne(ctx, raw, client.SubmitOptions{Workdir: workdir})
		if err != nil {
			return err
		}
		fmt.Fprintln(env.stdout, clean(s.ID))
		v, err := s.Verdict(ctx, verdictWait)
		switch {
		case errors.Is(err, client.ErrIDTaken):
			// Submitted in vain: the ID printed is someone else's job's.
			return &exitError{code: 1, msg: fmt.Sprintf("job %s: id already used by another user; this submission made no job", clean(s.ID))}
		case err != nil:
			fmt.Fprintf(env.stderr, "admission's verdict not awaited: %s\n", clean(err.Error()))
		case v.Rejected:
			return &exitError{code: 1, msg: fmt.Sprintf("job %s rejected: %s", clean(v.ID), clean(v.Reason))}
		}
		return nil
	}
	vctx, cancel := context.WithTimeout(ctx, verdictWait)
	defer cancel()
	records, werr := c.NewRecords(vctx)
	id, err := c.Submit(ctx, raw, client.SubmitOptions{Workdir: workdir})
	if err != nil {
		return err
	}
	fmt.Fprintln(env.stdout, clean(id))
	if werr != nil {
		fmt.Fprintf(env.stderr, "admission's verdict not awaited: %s\n", clean(werr.Error()))
		return nil
	}
	why, _ := awaitVerdicts(vctx, records, map[string]int{id: expectedRecords(spec)})
	if reason, ok := why[id]; ok {
		return &exitError{code: 1, msg: fmt.Sprintf("job %s rejected: %s", clean(id), clean(reason))}
	}
	return nil
}

// withImage sets container.image in a spec, keeping the rest of a
// container section the spec has. Parse checks the result.
func withImage(raw []byte, image string) ([]byte, error) {
	var spec map[string]json.RawMessage
	if err := json.Unmarshal(raw, &spec); err != nil {
		return nil, errors.Wrap(err, "read the spec to set --image")
	}
	ctr := map[string]json.RawMessage{}
	if old, ok := spec["container"]; ok && string(old) != "null" {
		if err := json.Unmarshal(old, &ctr); err != nil {
			return nil, errors.Wrap(err, "spec's container")
		}
	}
	ctr["image"], _ = json.Marshal(image)
	spec["container"], _ = json.Marshal(ctr)
	return json.Marshal(spec)
}

// waitForEnd prints each event of a job until its record in the jobs KV
// is final, and exits as the record says. An event alone never ends the
// wait: anyone allowed on the bus can publish one (a forged "succeeded"
// once ended a wait with exit 0), while the record is written by the
// services only. A final event the record does not confirm is printed
// with a note. The services publish a job's final event after writing its
// record, so once the record is final the event is waited for (briefly)
// to show it too.
//
// The record also shows what the events do not: each change of a pending
// job's reason, with the numbers placement gave (pendingLine), and on a
// terminal a status line with how long the gang has been running.
func waitForEnd(ctx context.Context, env *cliEnv, c *client.Client, id string) error {
	fctx, stop := context.WithCancel(ctx)
	defer stop()
	out := newWaitOutput(env.stderr)
	defer out.clear()
	finals := make(chan events.Type, 64)
	followed := make(chan error, 1)
	go func() {
		followed <- c.Follow(fctx, id, func(ev events.Event) bool {
			note := ""
			if finalEvent(ev.Type) {
				if j, err := c.Job(fctx, id); err != nil || !j.State.Terminal() {
					note = "  (not confirmed by the job record: ignored)"
				}
				select {
				case finals <- ev.Type:
				default:
				}
			}
			out.line(fmt.Sprintf("%s  %-10s %s%s", ev.Time.Local().Format("15:04:05.000"), clean(string(ev.Type)), eventDetail(ev), note))
			return true
		})
	}()
	ended := make(chan domain.Job, 1)
	watchErr := make(chan error, 1)
	go func() {
		j, err := c.WatchUntilEnded(fctx, id, out.record)
		if err != nil {
			watchErr <- err
			return
		}
		ended <- j
	}()

	var job domain.Job
	select {
	case job = <-ended:
	case err := <-watchErr:
		stop()
		<-followed
		return err
	case err := <-followed:
		return err
	}
	grace := time.NewTimer(3 * time.Second)
	defer grace.Stop()
	for shown := false; !shown; {
		select {
		case t := <-finals:
			shown = string(t) == string(job.State)
		case <-grace.C:
			shown = true
		case <-followed:
			followed = nil // the follower ended: nothing more to show
			shown = true
		}
	}
	stop()
	if followed != nil {
		<-followed
	}
	out.clear()
	if d := elapsed(job.RunningAt, job.EndedAt, job.EndedAt); d > 0 {
		out.line(fmt.Sprintf("%s  %-10s ran %s (%s after submit)", job.EndedAt.Local().Format("15:04:05.000"), "elapsed",
			d.Round(time.Millisecond), job.EndedAt.Sub(job.SubmittedAt).Round(time.Millisecond)))
	}
	if job.State == domain.StateSucceeded {
		return nil
	}
	return &exitError{code: 1, msg: fmt.Sprintf("job %s %s: %s", id, job.State, job.Reason)}
}

// waitForTasks waits for every task of array id, printing each one's end
// as it comes, and exits 0 only if all of them succeeded.
func waitForTasks(ctx context.Context, env *cliEnv, c *client.Client, id string, array jobspec.Array) error {
	failed := 0
	tasks, err := awaitArray(ctx, c, id, array, "submit", func(j domain.Job) {
		line := fmt.Sprintf("%s  %-10s %s", j.EndedAt.Local().Format("15:04:05.000"), j.State, clean(j.ID))
		if j.State != domain.StateSucceeded {
			failed++
			line += ": " + clean(j.Reason)
		}
		fmt.Fprintln(env.stderr, line)
	})
	if err != nil {
		return err
	}
	if failed > 0 {
		return &exitError{code: 1, msg: fmt.Sprintf("array %s: %d of %d tasks did not succeed", clean(id), failed, len(tasks))}
	}
	return nil
}

// finalEvent reports an event type that claims the job ended.
func finalEvent(t events.Type) bool {
	switch t {
	case events.Succeeded, events.Failed, events.Cancelled, events.Rejected, events.Timeout:
		return true
	}
	return false
}

// eventDetail is an event's detail, escaped for the terminal: events come
// from the bus, where anyone allowed to publish can write one.
func eventDetail(ev events.Event) string { return clean(rawDetail(ev)) }

func rawDetail(ev events.Event) string {
	switch {
	case ev.Placement != nil && (ev.Type == events.Reserved || ev.Type == events.Running):
		return fmt.Sprintf("attempt %d on %s (leaves %s)", ev.Attempt,
			strings.Join(ev.Placement.NodeNames(), ","), strings.Join(ev.Placement.Leaves, ","))
	case ev.Node != "":
		return "node " + ev.Node + " " + ev.Reason
	case ev.Actor != "":
		return ev.Reason + " (by " + ev.Actor + ")"
	}
	return ev.Reason
}

// maxSpecFile bounds a spec file (one spec, YAML comments and all; the
// spec itself is at most jobspec.MaxSpecBytes): past it, an error, where
// a device such as /dev/zero would take all the memory.
const maxSpecFile = 4 << 20

// readSpec reads a spec file (YAML for .yaml/.yml files) and returns
// JSON. (Specs on stdin are specStream's.)
func readSpec(path string) ([]byte, error) {
	raw, err := connection.ReadFileUpTo(path, maxSpecFile)
	if err != nil {
		return nil, errors.Wrap(err, "read job spec")
	}
	if !isYAML(path, raw) {
		return raw, nil
	}
	var doc any
	if err := yaml.Unmarshal(raw, &doc); err != nil {
		return nil, errors.Wrapf(err, "%s is not valid YAML", specName(path))
	}
	out, err := json.Marshal(doc)
	if err != nil {
		return nil, errors.Wrapf(err, "%s cannot be expressed as JSON", specName(path))
	}
	return out, nil
}

// printTestOnly answers --test-only (submit's and sbatch's): admission's
// verdict for a gang that can never fit, else placement's plan.
func printTestOnly(ctx context.Context, env *cliEnv, c *client.Client, raw []byte) error {
	if spec, err := jobspec.Parse(raw); err == nil {
		if err := wouldBeRejected(ctx, c, spec); err != nil {
			return err
		}
	}
	r, err := c.TestOnly(ctx, raw)
	if err != nil {
		return err
	}
	if r.Error != "" {
		return &exitError{code: 1, msg: clean(r.Error)}
	}
	where := ""
	if r.Placement != nil {
		where = clean(fmt.Sprintf(" on %s (leaves %s)", strings.Join(r.Placement.NodeNames(), ","), strings.Join(r.Placement.Leaves, ",")))
	}
	switch {
	case r.Start:
		fmt.Fprintf(env.stdout, "would start now%s\n", where)
	case !r.StartsAt.IsZero():
		fmt.Fprintf(env.stdout, "would start ≈ %s%s\n", r.StartsAt.Local().Format("2006-01-02 15:04"), where)
	default:
		fmt.Fprintf(env.stdout, "would wait: %s\n", clean(r.Reason))
	}
	if r.Detail != "" {
		fmt.Fprintf(env.stdout, "  %s\n", clean(r.Detail))
	}
	return nil
}
