package slurm

import (
	"strings"
	"time"

	"github.com/cockroachdb/errors"

	"github.com/lockstep-dev/lockstep/shared/contract/jobspec"
	"github.com/lockstep-dev/lockstep/shared/contract/slurmenv"
)

// sbatchOptions is sbatch's option table (Slurm's slurm_opt.c, the
// options sbatch accepts): every name, short letter and argument kind, so
// that the command line and #SBATCH lines split exactly as sbatch splits
// them. Options with a setter are supported; the rest are refused, or
// skipped with a warning under WithIgnoreUnsupported.
var sbatchOptions = []optDef{
	// Supported (issue 18, item 1).
	{"job-name", 'J', requiredArg, setString(func(d *Directives) *string { return &d.JobName })},
	{"nodes", 'N', requiredArg, setParsed(parseNodes, func(d *Directives) *int { return &d.Nodes })},
	{"ntasks", 'n', requiredArg, setParsed(positiveInt, func(d *Directives) *int { return &d.NTasks })},
	{"ntasks-per-node", 0, requiredArg, setParsed(positiveInt, func(d *Directives) *int { return &d.NTasksPerNode })},
	{"tasks-per-node", 0, requiredArg, setParsed(positiveInt, func(d *Directives) *int { return &d.NTasksPerNode })},
	{"cpus-per-task", 'c', requiredArg, setParsed(positiveInt, func(d *Directives) *int { return &d.CPUsPerTask })},
	{"gpus-per-node", 0, requiredArg, setOptional(parseGPUs, func(d *Directives) **GPUs { return &d.GPUsPerNode })},
	{"gres", 0, requiredArg, setGRES},
	{"gpu-bind", 0, requiredArg, setGPUBind},
	{"switches", 0, requiredArg, setOptional(ParseSwitches, func(d *Directives) **Switches { return &d.Switches })},
	{"time", 't', requiredArg, setTime},
	{"partition", 'p', requiredArg, setString(func(d *Directives) *string { return &d.Partition })},
	{"priority", 0, requiredArg, setPriority},
	{"nice", 0, optionalArg, setNice},
	{"output", 'o', requiredArg, setString(func(d *Directives) *string { return &d.Output })},
	{"error", 'e', requiredArg, setString(func(d *Directives) *string { return &d.Error })},
	{"chdir", 'D', requiredArg, setString(func(d *Directives) *string { return &d.Chdir })},
	{"export", 0, requiredArg, setOptional(ParseExport, func(d *Directives) **Export { return &d.Export })},
	{"requeue", 0, optionalArg, setRequeue},
	{"no-requeue", 0, noArg, func(d *Directives, _, _ string, _ bool) error { d.Requeue = new(false); return nil }},
	{"signal", 0, requiredArg, setOptional(ParseSignal, func(d *Directives) **Signal { return &d.Signal })},
	{"exclusive", 0, optionalArg, setExclusive},
	{"array", 'a', requiredArg, setOptional(ParseArray, func(d *Directives) **Array { return &d.Array })},
	{"dependency", 'd', requiredArg, setOptional(ParseDependency, func(d *Directives) **Dependency { return &d.Dependency })},
	{"wait", 'W', noArg, setFlag(func(d *Directives) *bool { return &d.Wait })},
	{"parsable", 0, noArg, setFlag(func(d *Directives) *bool { return &d.Parsable })},
	{"test-only", 0, noArg, setFlag(func(d *Directives) *bool { return &d.TestOnly })},
	// pyxis's container options (docs/containers.md).
	{"container-image", 0, requiredArg, setParsed(ParseContainerImage, func(d *Directives) *string { return &d.Container.Image })},
	{"container-mounts", 0, requiredArg, setParsed(ParseContainerMounts, func(d *Directives) *[]jobspec.Mount { return &d.Container.Mounts })},
	{"container-workdir", 0, requiredArg, setParsed(parseWorkdir, func(d *Directives) *string { return &d.Container.Workdir })},
	{"container-env", 0, requiredArg, setParsed(parseContainerEnv, func(d *Directives) *[]string { return &d.Container.EnvNames })},
	// Supported because they only change what sbatch prints.
	{"quiet", 'Q', noArg, setFlag(func(d *Directives) *bool { return &d.Quiet })},
	{"verbose", 'v', noArg, func(d *Directives, _, _ string, _ bool) error { d.Verbose++; return nil }},
	{"help", 'h', noArg, setFlag(func(d *Directives) *bool { return &d.Help })},
	{"usage", 0, noArg, setFlag(func(d *Directives) *bool { return &d.Help })},
	{"version", 'V', noArg, setFlag(func(d *Directives) *bool { return &d.Version })},

	// sbatch options Lockstep does not support (yet).
	{"account", 'A', requiredArg, nil},
	{"acctg-freq", 0, requiredArg, nil},
	{"autocomplete", 0, requiredArg, nil},
	{"batch", 0, requiredArg, nil},
	{"begin", 'b', requiredArg, nil},
	{"bb", 0, requiredArg, nil},
	{"bbf", 0, requiredArg, nil},
	{"cluster-constraint", 0, requiredArg, nil},
	{"cluster", 0, requiredArg, nil},
	{"clusters", 'M', requiredArg, nil},
	{"comment", 0, requiredArg, nil},
	{"consolidate-segments", 0, noArg, nil},
	{"container", 0, requiredArg, nil},
	{"container-id", 0, requiredArg, nil},
	{"container-name", 0, requiredArg, nil},
	{"container-save", 0, requiredArg, nil},
	{"container-mount-home", 0, noArg, nil},
	{"no-container-mount-home", 0, noArg, nil},
	{"container-remap-root", 0, noArg, nil},
	{"no-container-remap-root", 0, noArg, nil},
	{"container-entrypoint", 0, noArg, nil},
	{"no-container-entrypoint", 0, noArg, nil},
	{"container-writable", 0, noArg, nil},
	{"container-readonly", 0, noArg, nil},
	{"context", 0, requiredArg, nil},
	{"contiguous", 0, noArg, nil},
	{"constraint", 'C', requiredArg, nil},
	{"core-spec", 'S', requiredArg, nil},
	{"cores-per-socket", 0, requiredArg, nil},
	{"cpu-freq", 0, requiredArg, nil},
	{"cpus-per-gpu", 0, requiredArg, nil},
	{"deadline", 0, requiredArg, nil},
	{"delay-boot", 0, requiredArg, nil},
	{"distribution", 'm', requiredArg, nil},
	{"exclude", 'x', requiredArg, nil},
	{"export-file", 0, requiredArg, nil},
	{"external", 0, noArg, nil},
	{"extra", 0, requiredArg, nil},
	{"extra-node-info", 'B', requiredArg, nil},
	{"get-user-env", 0, noArg, nil},
	{"gid", 0, requiredArg, nil},
	{"gpu-freq", 0, requiredArg, nil},
	{"gpus", 'G', requiredArg, nil},
	{"gpus-per-socket", 0, requiredArg, nil},
	{"gpus-per-task", 0, requiredArg, nil},
	{"gres-flags", 0, requiredArg, nil},
	{"hint", 0, requiredArg, nil},
	{"hold", 'H', noArg, nil},
	{"ignore-pbs", 0, noArg, nil},
	{"input", 'i', requiredArg, nil},
	{"kill-on-invalid-dep", 0, requiredArg, nil},
	{"licenses", 'L', requiredArg, nil},
	{"mail-type", 0, requiredArg, nil},
	{"mail-user", 0, requiredArg, nil},
	{"mcs-label", 0, requiredArg, nil},
	{"mem", 0, requiredArg, nil},
	{"mem-bind", 0, requiredArg, nil},
	{"mem-per-cpu", 0, requiredArg, nil},
	{"mem-per-gpu", 0, requiredArg, nil},
	{"mem-update", 0, requiredArg, nil},
	{"mincpus", 0, requiredArg, nil},
	{"network", 0, requiredArg, nil},
	{"no-kill", 'k', optionalArg, nil},
	{"nodefile", 'F', requiredArg, nil},
	{"nodelist", 'w', requiredArg, nil},
	{"ntasks-per-core", 0, requiredArg, nil},
	{"ntasks-per-gpu", 0, requiredArg, nil},
	{"ntasks-per-socket", 0, requiredArg, nil},
	{"ntasks-per-tres", 0, requiredArg, nil},
	{"oom-kill-step", 0, optionalArg, nil},
	{"open-mode", 0, requiredArg, nil},
	{"overcommit", 'O', noArg, nil},
	{"oversubscribe", 's', noArg, nil},
	{"prefer", 0, requiredArg, nil},
	{"profile", 0, requiredArg, nil},
	{"propagate", 0, optionalArg, nil},
	{"qos", 'q', requiredArg, nil},
	{"reboot", 0, noArg, nil},
	{"reservation", 0, requiredArg, nil},
	{"resources", 0, requiredArg, nil},
	{"resv-ports", 0, optionalArg, nil},
	{"runtime", 0, requiredArg, nil},
	{"segment", 0, requiredArg, nil},
	{"sockets-per-node", 0, requiredArg, nil},
	{"spread-job", 0, noArg, nil},
	{"spread-segments", 0, noArg, nil},
	{"stepmgr", 0, noArg, nil},
	{"thread-spec", 0, requiredArg, nil},
	{"threads-per-core", 0, requiredArg, nil},
	{"time-min", 0, requiredArg, nil},
	{"tmp", 0, requiredArg, nil},
	{"tres-bind", 0, requiredArg, nil},
	{"tres-per-task", 0, requiredArg, nil},
	{"uid", 0, requiredArg, nil},
	{"use-min-nodes", 0, noArg, nil},
	{"wait-all-nodes", 0, requiredArg, nil},
	{"wckey", 0, requiredArg, nil},
	{"wrap", 0, requiredArg, nil},
}

// valueError names the option and its value: "--nodes=x: ..." or "-N x: ...".
func valueError(name, value string, err error) error {
	if strings.HasPrefix(name, "--") {
		return errors.Wrapf(err, "%s=%s", name, value)
	}
	return errors.Wrapf(err, "%s %s", name, value)
}

func setString(field func(*Directives) *string) setter {
	return setParsed(func(s string) (string, error) {
		if s == "" {
			return "", errors.New("empty value")
		}
		return s, nil
	}, field)
}

// setParsed stores the value, parsed by parse, in the field.
func setParsed[T any](parse func(string) (T, error), field func(*Directives) *T) setter {
	return func(d *Directives, name, value string, _ bool) error {
		v, err := parse(value)
		if err != nil {
			return valueError(name, value, err)
		}
		*field(d) = v
		return nil
	}
}

// setOptional is setParsed for a field that is nil until the option is
// given.
func setOptional[T any](parse func(string) (T, error), field func(*Directives) **T) setter {
	return setParsed(func(s string) (*T, error) {
		v, err := parse(s)
		return &v, err
	}, field)
}

func setFlag(field func(*Directives) *bool) setter {
	return func(d *Directives, _, _ string, _ bool) error {
		*field(d) = true
		return nil
	}
}

func setGRES(d *Directives, name, value string, _ bool) error {
	if strings.EqualFold(value, "none") {
		d.GRESGPU = nil
		return nil
	}
	g, err := parseGRES(value)
	if err != nil {
		return valueError(name, value, err)
	}
	d.GRESGPU = &g
	return nil
}

// setGPUBind accepts closest and none, optionally after Slurm's
// "verbose," (which only makes Slurm log the binding).
func setGPUBind(d *Directives, name, value string, _ bool) error {
	v := strings.TrimPrefix(strings.ToLower(value), "verbose,")
	if v != "closest" && v != "none" {
		return valueError(name, value, errors.New("Lockstep supports closest and none (not map_gpu, mask_gpu, per_task, single)"))
	}
	d.GPUBind = v
	return nil
}

// setTime is arg_set_time_limit: seconds round up to the next minute, and
// 0 is no limit.
func setTime(d *Directives, name, value string, _ bool) error {
	t, err := ParseTime(value)
	if err != nil {
		return valueError(name, value, err)
	}
	if !t.Unlimited {
		t.Duration = (t.Duration + time.Minute - 1).Truncate(time.Minute)
		if t.Duration == 0 {
			t.Unlimited = true
		}
	}
	d.TimeLimit = &t
	return nil
}

func setPriority(d *Directives, name, value string, _ bool) error {
	if strings.EqualFold(value, "TOP") {
		return valueError(name, value, errors.New("TOP is not supported; give a number"))
	}
	n, err := slurmenv.NonNegativeInt(value)
	if err != nil {
		return valueError(name, value, err)
	}
	d.Priority = &n
	return nil
}

// setNice is arg_set_nice: bare --nice is 100.
func setNice(d *Directives, name, value string, hasValue bool) error {
	n := 100
	if hasValue {
		var err error
		if n, err = signedInt(value); err != nil {
			return valueError(name, value, err)
		}
	}
	d.Nice = &n
	return nil
}

func setRequeue(d *Directives, name, value string, hasValue bool) error {
	switch {
	case !hasValue || value == "":
		d.RequeueExpedite = false
	case strings.EqualFold(value, "expedite"):
		d.RequeueExpedite = true
	default:
		return valueError(name, value, errors.New("the only value is expedite"))
	}
	d.Requeue = new(true)
	return nil
}

func setExclusive(d *Directives, name, value string, hasValue bool) error {
	v := strings.ToLower(value)
	switch {
	case !hasValue || v == "exclusive" || v == "allocation":
		d.Exclusive = "exclusive"
	case v == "oversubscribe" || v == "user" || v == "mcs" || v == "topo":
		d.Exclusive = v
	default:
		return valueError(name, value, errors.New("want exclusive, allocation, oversubscribe, user, mcs or topo"))
	}
	return nil
}
