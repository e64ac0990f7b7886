package main

import (
	"encoding/json"
	"fmt"
	"path"
	"path/filepath"
	"strings"
	"unicode/utf8"

	"github.com/cockroachdb/errors"

	"github.com/lockstep-dev/lockstep/cmd/lockstep/slurm"
	"github.com/lockstep-dev/lockstep/shared/contract/errs"
	"github.com/lockstep-dev/lockstep/shared/contract/jobspec"
)

// sbatchScript is the batch script sbatch submits: its text, its name
// ($0, the script file's base name) and its arguments.
type sbatchScript struct {
	text []byte
	name string
	args []string
}

// sbatchSubmitter is what a batch job takes from where sbatch runs: the
// directory (SLURM_SUBMIT_DIR, the default working directory), the host
// (SLURM_SUBMIT_HOST) and the environment --export propagates
// (os.Environ's NAME=value).
type sbatchSubmitter struct {
	dir, host string
	environ   []string
}

// Bounds of the job spec (schemas/jobspec.v1.json) a script or its
// submitter can exceed; checked here so the error says what to change.
const (
	maxBatchScript   = 131072 // batch.script, in characters
	maxBatchFile     = 4096   // batch.output, batch.error
	maxArrayIndexes  = 1024   // array.indexes
	maxArrayLimit    = 100000 // array.maxConcurrent
	maxEnvVars       = 256    // env
	maxEnvValue      = 65536  // one env value, in characters
	maxCommandString = 65536  // one command word
)

// sbatchSpec is the job spec sbatch submits for a script under its
// directives (the script's, the command line over them): the script runs
// once, as a batch job (spec.batch), in --chdir or the submit directory,
// with the environment --export says. What has no Lockstep meaning is an
// error naming the option, marked slurm.ErrUnsupported, or with ignore a
// warning. It returns the spec's JSON, validated as admission validates
// it, and the warnings.
func sbatchSpec(d slurm.Directives, sc sbatchScript, sub sbatchSubmitter, ignore bool) (jobspec.Spec, []byte, []string, error) {
	var warnings []string
	unsupported := func(what string) error {
		if ignore {
			warnings = append(warnings, what+" is not supported by Lockstep; ignored")
			return nil
		}
		return errs.MarkInvalid(errors.Mark(errors.Newf("%s is not supported by Lockstep", what), slurm.ErrUnsupported))
	}
	// --exclusive (or =allocation) is what a Lockstep gang has of its
	// GPUs; the other kinds share or reserve in ways Lockstep has no
	// notion of.
	if x := d.Exclusive; x != "" && x != "exclusive" {
		if err := unsupported("--exclusive=" + x); err != nil {
			return jobspec.Spec{}, nil, nil, err
		}
	}
	if d.RequeueExpedite {
		if err := unsupported("--requeue=expedite"); err != nil {
			return jobspec.Spec{}, nil, nil, err
		}
	}
	if d.Signal != nil && d.Signal.Reservation {
		if err := unsupported("--signal's R: flag (reservations)"); err != nil {
			return jobspec.Spec{}, nil, nil, err
		}
	}

	s, err := sbatchSpecOf(d, sc, sub, &warnings)
	if err != nil {
		return jobspec.Spec{}, nil, nil, errs.MarkInvalid(err)
	}
	raw, err := json.Marshal(s)
	if err != nil {
		return jobspec.Spec{}, nil, nil, errors.Wrap(err, "encode job spec")
	}
	if len(raw) > jobspec.MaxSpecBytes {
		return jobspec.Spec{}, nil, nil, errs.MarkInvalid(sizeError(s, len(raw)))
	}
	if _, err := jobspec.Parse(raw); err != nil {
		return jobspec.Spec{}, nil, nil, err
	}
	return s, raw, warnings, nil
}

func sbatchSpecOf(d slurm.Directives, sc sbatchScript, sub sbatchSubmitter, warnings *[]string) (jobspec.Spec, error) {
	if err := checkText("the script", string(sc.text), maxBatchScript); err != nil {
		return jobspec.Spec{}, err
	}
	command := append([]string{sc.name}, sc.args...)
	for i, w := range command {
		what := fmt.Sprintf("script argument %d", i)
		if i == 0 {
			what = "the script's name"
		}
		if err := checkText(what, w, maxCommandString); err != nil {
			return jobspec.Spec{}, err
		}
	}
	s, err := d.JobSpec(command)
	if err != nil {
		return s, err
	}
	if s.Name == "" {
		// Slurm names a job after its script.
		s.Name = truncateRunes(sc.name, 128)
	}
	s.Batch = &jobspec.Batch{Script: string(sc.text), Output: d.Output, Error: d.Error}
	for _, f := range []struct{ opt, pattern string }{{"--output", d.Output}, {"--error", d.Error}} {
		if err := checkBatchFile(f.opt, f.pattern); err != nil {
			return s, err
		}
	}
	if s.Workdir, err = sbatchWorkdir(d.Chdir, sub.dir); err != nil {
		return s, err
	}
	env, skipped, err := sbatchEnv(d.Export, sub)
	if err != nil {
		return s, err
	}
	if len(skipped) > 0 {
		*warnings = append(*warnings, fmt.Sprintf("--export=ALL: not sent, not variables a job can carry "+
			"(a name of letters, digits and '_', a UTF-8 value): %s", strings.Join(skipped, ", ")))
	}
	s.Env = env
	if s.Container != nil {
		var unset []string
		s.Container.Env, unset = containerEnv(d.Container.EnvNames, sub.environ)
		if len(unset) > 0 {
			*warnings = append(*warnings, "--container-env: not set here, not sent: "+strings.Join(unset, ", "))
		}
	}
	if s.Array, err = sbatchArray(d.Array); err != nil {
		return s, err
	}
	if s.Dependencies, s.Singleton, err = sbatchDependencies(d.Dependency); err != nil {
		return s, err
	}
	return s, nil
}

// containerEnv is --container-env: each name's value where sbatch runs
// (pyxis takes them from the host, over the image's), and the names that
// are not set here.
func containerEnv(names, environ []string) (map[string]string, []string) {
	if len(names) == 0 {
		return nil, nil
	}
	here := map[string]string{}
	for _, kv := range environ {
		if k, v, ok := strings.Cut(kv, "="); ok {
			here[k] = v
		}
	}
	out := map[string]string{}
	var unset []string
	for _, n := range names {
		if v, ok := here[n]; ok {
			out[n] = v
		} else {
			unset = append(unset, n)
		}
	}
	return out, unset
}

// checkText refuses what a job spec cannot carry as sent: JSON would
// replace bytes that are not UTF-8, silently changing the script.
func checkText(what, s string, limit int) error {
	if !utf8.ValidString(s) {
		i := 0
		for i < len(s) {
			r, n := utf8.DecodeRuneInString(s[i:])
			if r == utf8.RuneError && n == 1 {
				break
			}
			i += n
		}
		return errors.Newf("%s is not UTF-8 text (byte %d): a job spec carries text only", what, i)
	}
	if n := utf8.RuneCountInString(s); n > limit {
		return errors.Newf("%s is %d characters, more than the %d a job spec may carry", what, n, limit)
	}
	return nil
}

// checkBatchFile refuses an --output or --error pattern that can never
// name a file: the agent expands the rest (%j, %x, ...) where the script
// runs, so those are left as written.
func checkBatchFile(opt, pattern string) error {
	if pattern == "" {
		return nil
	}
	if err := checkText(opt+"="+pattern, pattern, maxBatchFile); err != nil {
		return err
	}
	if i := strings.IndexFunc(pattern, func(r rune) bool { return r < 0x20 || r == 0x7f }); i >= 0 {
		return errors.Newf("%s=%q: a control character (byte %d) cannot be in a file name", opt, pattern, i)
	}
	if base := path.Base(pattern); strings.HasSuffix(pattern, "/") || base == "." || base == ".." {
		return errors.Newf("%s=%s names a directory, not a file (Slurm's default name is slurm-%%j.out)", opt, pattern)
	}
	return nil
}

// sbatchWorkdir is --chdir, a relative one under the submit directory,
// else the submit directory, as sbatch runs a script where it was
// submitted.
func sbatchWorkdir(chdir, submitDir string) (string, error) {
	dir := submitDir
	if chdir != "" {
		dir = chdir
		if !filepath.IsAbs(chdir) {
			dir = filepath.Join(submitDir, chdir)
		}
		dir = filepath.Clean(dir)
	}
	if fe, ok := jobspec.CheckPath("workdir", dir); !ok {
		if chdir != "" {
			return "", errors.Newf("--chdir=%s: %s", chdir, fe.Message)
		}
		return "", errors.Newf("the current directory, the job's working directory: %s (give -D/--chdir)", fe.Message)
	}
	return dir, nil
}

// sbatchArray is --array without its %limit, written in the spec's syntax
// (brackets dropped), and the limit.
func sbatchArray(a *slurm.Array) (*jobspec.Array, error) {
	if a == nil {
		return nil, nil
	}
	var parts []string
	for _, r := range a.Ranges {
		switch {
		case r.First == r.Last:
			parts = append(parts, fmt.Sprint(r.First))
		case r.Step == 1:
			parts = append(parts, fmt.Sprintf("%d-%d", r.First, r.Last))
		default:
			parts = append(parts, fmt.Sprintf("%d-%d:%d", r.First, r.Last, r.Step))
		}
	}
	indexes := strings.Join(parts, ",")
	switch {
	case len(indexes) > maxArrayIndexes:
		return nil, errors.Newf("--array=%s: the index list is %d characters, more than the %d allowed; use ranges", a.Raw, len(indexes), maxArrayIndexes)
	case a.Limit > maxArrayLimit:
		return nil, errors.Newf("--array=%s: a limit of %d tasks at once is more than the %d allowed", a.Raw, a.Limit, maxArrayLimit)
	}
	return &jobspec.Array{Indexes: indexes, MaxConcurrent: a.Limit}, nil
}

// sbatchDependencies are --dependency's conditions, grouped by type in
// the order given, and singleton. Lockstep's dependencies must all hold:
// Slurm's '?' (any of) and after's +time are refused, never dropped (the
// job would start too early).
func sbatchDependencies(dep *slurm.Dependency) ([]jobspec.Dependency, bool, error) {
	if dep == nil {
		return nil, false, nil
	}
	if dep.Any && len(dep.Items) > 1 {
		return nil, false, errors.Newf("--dependency=%s: '?' (any one of the conditions) is not supported: Lockstep's dependencies must all hold (',')", dep.Raw)
	}
	var out []jobspec.Dependency
	singleton := false
	at := map[string]int{}
	for _, item := range dep.Items {
		if item.Type == "singleton" {
			singleton = true
			continue
		}
		i, ok := at[item.Type]
		if !ok {
			i = len(out)
			at[item.Type] = i
			out = append(out, jobspec.Dependency{Type: item.Type})
		}
		for _, j := range item.Jobs {
			if j.Delay > 0 {
				return nil, false, errors.Newf("--dependency=%s: after:%s+%d (start minutes after the job started) is not supported",
					dep.Raw, j.ID, int(j.Delay.Minutes()))
			}
			out[i].Jobs = append(out[i].Jobs, j.ID)
		}
	}
	return out, singleton, nil
}

// sizeError explains a spec over jobspec.MaxSpecBytes: the script and the
// environment are what make one that large.
func sizeError(s jobspec.Spec, size int) error {
	envBytes, largest, largestLen := 0, "", 0
	for k, v := range s.Env {
		envBytes += len(k) + len(v)
		if len(v) > largestLen {
			largest, largestLen = k, len(v)
		}
	}
	msg := fmt.Sprintf("the job spec is %d bytes, more than the %d allowed: the script is %d bytes, the environment %d bytes in %d variables",
		size, jobspec.MaxSpecBytes, len(s.Batch.Script), envBytes, len(s.Env))
	if largest != "" {
		msg += fmt.Sprintf(" (the largest %s, %d bytes)", largest, largestLen)
	}
	err := errors.Newf("%s", msg)
	return errors.WithHint(err, "send less of the environment: --export=NONE, or --export=NAME,... for the variables the job needs")
}

func truncateRunes(s string, n int) string {
	for i := range s {
		if n == 0 {
			return s[:i]
		}
		n--
	}
	return s
}
