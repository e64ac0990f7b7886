package main

import (
	"maps"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/cockroachdb/errors"

	"github.com/lockstep-dev/lockstep/cmd/lockstep/slurm"
	"github.com/lockstep-dev/lockstep/shared/contract/jobspec"
	"github.com/lockstep-dev/lockstep/shared/contract/rankenv"
)

// The variables sbatch always sets for the job (Slurm's input to the
// batch script).
const (
	envSubmitDir  = "SLURM_SUBMIT_DIR"
	envSubmitHost = "SLURM_SUBMIT_HOST"
)

// sbatchEnv is the job's env under --export, Slurm's semantics over
// Lockstep's clean rank environment:
//
//   - ALL (the default, alone or in a list): the submitter's environment,
//     except what stays behind (stayBehind); a variable a spec cannot
//     carry (a name such as bash's BASH_FUNC_f%%, a value that is not
//     UTF-8) is left out and named in skipped;
//   - NONE: nothing of it;
//   - NAME: that variable of the submitter's, when set (an error when a
//     spec cannot carry it);
//   - NAME=value: that value, over the rest.
//
// SLURM_SUBMIT_DIR and SLURM_SUBMIT_HOST are always set. More variables
// than a spec may hold, or a value too long, is an error naming them.
func sbatchEnv(e *slurm.Export, sub sbatchSubmitter) (env map[string]string, skipped []string, err error) {
	all := e == nil || e.All
	env = map[string]string{}
	have := map[string]string{}
	var order []string
	for _, kv := range sub.environ {
		k, v, ok := strings.Cut(kv, "=")
		if _, dup := have[k]; !ok || dup {
			continue // as getenv: the first wins
		}
		have[k] = v
		order = append(order, k)
	}
	if all {
		for _, k := range order {
			v := have[k]
			switch {
			case stayBehind(k):
			case !jobspec.ValidEnvName(k) || !utf8.ValidString(v):
				skipped = append(skipped, k)
			default:
				env[k] = v
			}
		}
	}
	if e != nil {
		for _, k := range e.Names {
			if !jobspec.ValidEnvName(k) {
				return nil, nil, errors.Newf("--export: %q is not an environment variable name a job can carry (letters, digits and '_', not starting with a digit)", k)
			}
			v, ok := have[k]
			if !ok {
				continue // unset: nothing to export, as in Slurm
			}
			if !utf8.ValidString(v) {
				return nil, nil, errors.Newf("--export: the value of %s is not UTF-8 text; a job spec carries text only", k)
			}
			env[k] = v
		}
		for _, s := range e.Set {
			if !jobspec.ValidEnvName(s.Name) {
				return nil, nil, errors.Newf("--export: %q is not an environment variable name a job can carry", s.Name)
			}
			if !utf8.ValidString(s.Value) {
				return nil, nil, errors.Newf("--export: the value of %s is not UTF-8 text", s.Name)
			}
			env[s.Name] = s.Value
		}
	}
	env[envSubmitDir], env[envSubmitHost] = sub.dir, sub.host
	for _, k := range slices.Sorted(maps.Keys(env)) {
		if n := utf8.RuneCountInString(env[k]); n > maxEnvValue {
			return nil, nil, errors.Newf("--export: %s is %d characters long, more than the %d a job's variable may be", k, n, maxEnvValue)
		}
	}
	if len(env) > maxEnvVars {
		what := "--export"
		if all {
			what = "--export=ALL (sbatch's default)"
		}
		return nil, nil, errors.WithHint(errors.Newf("%s: %d environment variables to send, more than the %d a job may carry", what, len(env), maxEnvVars),
			"send only what the job needs: --export=NONE, or --export=NAME,NAME=value,...")
	}
	return env, skipped, nil
}

// stayBehind is a variable of the submitter's that --export=ALL does not
// send, though Slurm would: an enclosing job's Slurm and Lockstep
// variables (LOCKSTEP_* also holds the submitter's connection and
// credentials), and what the node agent sets for every rank of the new
// job (the account's HOME, USER, LOGNAME and SHELL, the torchrun set,
// CUDA_VISIBLE_DEVICES), which would describe another job or another
// account. PATH travels, as in Slurm: a script finds the programs its
// submitter's shell found (a module's, a virtualenv's); so do
// NCCL_IB_HCA and UCX_NET_DEVICES, which a job may set.
func stayBehind(name string) bool {
	if strings.HasPrefix(name, "SLURM_") || strings.HasPrefix(name, "LOCKSTEP_") {
		return true
	}
	switch name {
	case rankenv.Path, rankenv.NCCLIBHCA, rankenv.UCXNetDevices:
		return false
	}
	return slices.ContainsFunc(rankenv.Vars, func(v rankenv.Var) bool { return v.Name == name })
}
