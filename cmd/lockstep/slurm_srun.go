//go:build !lockstep_client

package main

import (
	"fmt"
	"maps"
	"os"
	"os/signal"
	"strings"
	"sync"
	"syscall"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"golang.org/x/sys/unix"

	"github.com/lockstep-dev/lockstep/cmd/lockstep/slurm"
	"github.com/lockstep-dev/lockstep/services/agent"
	"github.com/lockstep-dev/lockstep/shared/contract/jobspec"
	"github.com/lockstep-dev/lockstep/shared/contract/rankenv"
)

// srun inside a batch script: a step of tasks across the job's
// allocation, run by the agents (services/agent/steps.go). It talks to
// its own node's agent over the agent socket with the attempt's token,
// both in the script's environment.
func (a *app) srun(cmd *cobra.Command) runE {
	fs := slurmFlags("srun")
	fs.SetInterspersed(false) // options end at the command: its own are its own
	nodes := fs.IntP("nodes", "N", 0, "run on the first N nodes of the job (default: all)")
	ntasks := fs.IntP("ntasks", "n", 0, "run N tasks in all (default: nodes × the job's tasks per node)")
	perNode := fs.Int("ntasks-per-node", 0, "at most N tasks on each node")
	kill := fs.StringP("kill-on-bad-exit", "K", "0", "1: a task exiting non-zero kills the step's other tasks")
	fs.Lookup("kill-on-bad-exit").NoOptDefVal = "1"
	label := fs.BoolP("label", "l", false, "prefix each output line with its task ID")
	export := fs.String("export", "ALL", "what of this environment the tasks get: ALL, NONE, or NAME[=value],... (ALL,… adds to all)")
	fs.StringP("job-name", "J", "", "ignored (steps have no names of their own)")
	// pyxis's options: a step runs where its batch script does (in the
	// batch job's image when sbatch had --container-image), never in a
	// container of its own; refused by name rather than as unknown.
	var ctrOpts []string
	for _, name := range []string{"container-image", "container-mounts", "container-workdir", "container-env"} {
		ctrOpts = append(ctrOpts, name)
		fs.String(name, "", "not supported: steps run in the batch job's environment, its image with sbatch --container-image (docs/containers.md)")
	}
	run := a.slurmCommand(cmd, fs, longHelp(`
		Run a step of tasks across the batch job's allocation, as Slurm's srun does
		inside an sbatch script: by default on every node with the job's tasks per
		node, each task with its share of the node's GPUs and cores. Output is
		relayed here; the exit code is the highest of the tasks'. Only inside a
		batch script (docs/slurm.md); other options are not supported.`), func(cmd *cobra.Command, argv []string) error {
		if len(argv) == 0 {
			return usagef("srun: no command given")
		}
		for _, name := range ctrOpts {
			if fs.Changed(name) {
				return usagef("srun: --%s: a step cannot run in a container of its own; steps run in the batch job's image (sbatch --container-image, docs/containers.md)", name)
			}
		}
		sock, token := os.Getenv(rankenv.AgentSocket), os.Getenv(rankenv.AckToken)
		if sock == "" || token == "" || os.Getenv(rankenv.JobID) == "" {
			return usagef("srun runs inside a Lockstep batch job's script (%s and %s are not set)", rankenv.AgentSocket, rankenv.JobID)
		}
		var killOnBad bool
		switch *kill {
		case "0":
		case "1":
			killOnBad = true
		default:
			return usagef("srun: --kill-on-bad-exit=%q: want 0 or 1", *kill)
		}
		env, err := exportedEnv(*export, os.Environ())
		if err != nil {
			return err
		}
		req := agent.SrunRequest{JobID: os.Getenv(rankenv.JobID), Attempt: envInt(rankenv.Attempt, 0),
			Nodes: *nodes, NTasks: *ntasks, TasksPerNode: *perNode, KillOnBadExit: killOnBad, Argv: argv, Env: env}
		signals, stop := forwardedSignals()
		defer stop()
		var mu sync.Mutex
		code, err := agent.Srun(cmd.Context(), sock, token, req, signals, func(ev agent.SrunEvent) {
			w := a.env.stdout
			if ev.Stream == "stderr" {
				w = a.env.stderr
			}
			mu.Lock()
			defer mu.Unlock()
			if *label {
				fmt.Fprintf(w, "%d: %s\n", ev.Task, ev.Line)
			} else {
				fmt.Fprintln(w, ev.Line)
			}
		})
		if err != nil {
			return &exitError{code: max(code, 1), msg: "srun: " + err.Error()}
		}
		if code != 0 {
			return &exitError{code: code}
		}
		return nil
	})
	// -K takes its value attached or none (getopt's "K::"): -K1 is
	// --kill-on-bad-exit=1, which pflag would read as -K then -1.
	return func(cmd *cobra.Command, args []string) error {
		for i := 0; i < len(args); i++ {
			arg := args[i]
			if arg == "--" || arg == "-" || !strings.HasPrefix(arg, "-") {
				break // the step's command
			}
			if v, ok := strings.CutPrefix(arg, "-K"); ok && v != "" && !strings.HasPrefix(v, "=") {
				args[i] = "--kill-on-bad-exit=" + v
			} else if valueFollows(fs, arg) {
				i++ // -N 2: the 2 is the flag's, not the command
			}
		}
		return run(cmd, args)
	}
}

// valueFollows reports whether flag arg (one of fs's) takes the next
// argument as its value: a long flag without "=value", or a run of short
// flags whose last one takes a value and has none attached.
func valueFollows(fs *pflag.FlagSet, arg string) bool {
	if name, ok := strings.CutPrefix(arg, "--"); ok {
		f := fs.Lookup(name)
		return !strings.Contains(name, "=") && f != nil && f.NoOptDefVal == ""
	}
	for j := 1; j < len(arg); j++ {
		f := fs.ShorthandLookup(arg[j : j+1])
		if f == nil {
			return false
		}
		if f.NoOptDefVal == "" { // takes a value: the rest of arg, or the next
			return j == len(arg)-1
		}
	}
	return false
}

// forwardedSignals catches the signals srun passes on to its step's tasks
// (a batch script's checkpoint trap sends SIGUSR1 to srun, as under Slurm),
// which would otherwise end srun. SIGINT and SIGTERM still end the step,
// through the command's context.
func forwardedSignals() (<-chan string, func()) {
	caught := make(chan os.Signal, 4)
	signal.Notify(caught, syscall.SIGUSR1, syscall.SIGUSR2, syscall.SIGHUP, syscall.SIGCONT)
	names := make(chan string, 4)
	done := make(chan struct{})
	go func() {
		defer close(names)
		for {
			select {
			case s := <-caught:
				names <- unix.SignalName(s.(syscall.Signal))
			case <-done:
				return
			}
		}
	}()
	return names, func() {
		signal.Stop(caught)
		close(done)
	}
}

// exportedEnv is what --export gives the tasks of environ, read as
// sbatch reads it (slurm.ParseExport: case-insensitive ALL and NONE, ALL
// anywhere in a list, quoted values): ALL (Slurm's default) all of it, NONE
// nothing, else the names listed (NAME takes its value from here,
// NAME=value sets it), on top of all with ALL. Variables the agent cannot
// pass (odd names, NULs, huge values) are left out.
func exportedEnv(export string, environ []string) (map[string]string, error) {
	e, err := slurm.ParseExport(export)
	if err != nil {
		return nil, usagef("srun: --export: %v", err)
	}
	here := map[string]string{}
	for _, kv := range environ {
		k, v, ok := strings.Cut(kv, "=")
		if ok && jobspec.ValidEnvName(k) && len(v) <= 65536 && !strings.ContainsRune(v, 0) && len(here) < 1000 {
			here[k] = v
		}
	}
	out := map[string]string{}
	if e.All {
		maps.Copy(out, here)
	}
	for _, k := range e.Names {
		if !jobspec.ValidEnvName(k) {
			return nil, usagef("srun: --export: %q is not a variable name", k)
		}
		if v, ok := here[k]; ok {
			out[k] = v
		}
	}
	for _, kv := range e.Set {
		if !jobspec.ValidEnvName(kv.Name) {
			return nil, usagef("srun: --export: %q is not a variable name", kv.Name)
		}
		out[kv.Name] = kv.Value
	}
	return out, nil
}
