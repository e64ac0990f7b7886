package main

import (
	"fmt"
	"os"
	"text/tabwriter"

	"github.com/cockroachdb/errors"
	"github.com/spf13/cobra"

	"github.com/lockstep-dev/lockstep/shared/plumbing/connection"
)

// configCommands are config's subcommands: the contexts of the config
// file, as kubectl's and the nats CLI's contexts are.
var configCommands = []command{
	{"", "get-contexts", "list the contexts; * marks the current one", args(0, ""), onConfigOut, (*app).getContexts},
	{"", "current-context", "print the current context's name", args(0, ""), onConfig, (*app).currentContext},
	{"", "use-context NAME", "make NAME the current context", args(1, "NAME"), onConfig, (*app).useContext},
	{"", "set-context NAME", "create context NAME or change the settings given (--nats, --creds, --tls-*, --etcd, --etcd-*)",
		args(1, "NAME"), []string{groupNATS, groupEtcd, groupConfig}, (*app).setContext},
	{"", "delete-context NAME", "remove context NAME (when it was current, none is)", args(1, "NAME"), onConfig, (*app).deleteContext},
}

func (a *app) config(cmd *cobra.Command) runE {
	cmd.Long = longHelp(`
		Named contexts in the config file: where a cluster is and the credentials to reach it.
		The file is --config, else $LOCKSTEP_CONFIG, else $XDG_CONFIG_HOME/lockstep/config.yaml,
		else ~/.config/lockstep/config.yaml. A command reaching the cluster takes each setting
		from its flag, else the environment (LOCKSTEP_NATS, NATS_URL, LOCKSTEP_CREDS, ...), else
		the context (--context, else LOCKSTEP_CONTEXT, else current-context), else the default.
		` + "`lockstep dev`" + ` writes a context named dev.`)
	a.add(cmd, configCommands)
	return func(*cobra.Command, []string) error {
		return usagef("config needs a subcommand: get-contexts | current-context | use-context NAME | set-context NAME [flags] | delete-context NAME")
	}
}

// configPath is the config file this invocation reads and writes.
func (a *app) configPath() string { return a.globals.conn.ConfigPath(os.Getenv) }

// contextRow is one context as get-contexts -o json prints it.
type contextRow struct {
	Name    string             `json:"name"`
	Current bool               `json:"current"`
	Context connection.Context `json:"context"`
}

func (a *app) getContexts(*cobra.Command) runE {
	return func(*cobra.Command, []string) error {
		path := a.configPath()
		cfg, err := connection.LoadCLIConfig(path)
		if err != nil {
			return err
		}
		rows := make([]contextRow, 0, len(cfg.Contexts))
		for _, name := range cfg.Names() {
			rows = append(rows, contextRow{Name: name, Current: name == cfg.CurrentContext, Context: cfg.Contexts[name]})
		}
		if a.structured() {
			return a.writeData(rows)
		}
		if len(rows) == 0 {
			fmt.Fprintf(a.env.stderr, "no contexts in %s (lockstep config set-context NAME --nats URL adds one)\n", clean(path))
			return nil
		}
		tw := tabwriter.NewWriter(a.env.stdout, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "CURRENT\tNAME\tNATS\tETCD\tCREDS")
		for _, r := range rows {
			mark := ""
			if r.Current {
				mark = "*"
			}
			c := r.Context
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", mark, clean(r.Name), orDefault(c.NATS), orDefault(c.Etcd), orDash(c.Creds))
		}
		return tw.Flush()
	}
}

// orDefault is a context's address, "(default)" when it names none.
func orDefault(s string) string {
	if s == "" {
		return "(default)"
	}
	return clean(s)
}

// orDash is a context's file setting, "-" when it has none.
func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return clean(s)
}

func (a *app) currentContext(*cobra.Command) runE {
	return func(*cobra.Command, []string) error {
		path := a.configPath()
		cfg, err := connection.LoadCLIConfig(path)
		if err != nil {
			return err
		}
		if cfg.CurrentContext == "" {
			return errors.WithHint(errors.Newf("no current context in %s: commands use the defaults", path),
				"lockstep config use-context NAME")
		}
		fmt.Fprintln(a.env.stdout, clean(cfg.CurrentContext))
		if env := os.Getenv("LOCKSTEP_CONTEXT"); env != "" && env != cfg.CurrentContext {
			fmt.Fprintf(a.env.stderr, "note: LOCKSTEP_CONTEXT=%s overrides it for commands run with this environment\n", clean(env))
		}
		return nil
	}
}

func (a *app) useContext(*cobra.Command) runE {
	return func(_ *cobra.Command, args []string) error {
		path := a.configPath()
		if err := connection.UseContext(path, args[0]); err != nil {
			return err
		}
		fmt.Fprintf(a.env.stdout, "current context is %s (%s)\n", clean(args[0]), clean(path))
		return nil
	}
}

func (a *app) setContext(cmd *cobra.Command) runE {
	cmd.Long = longHelp(`
		Create context NAME, or change it: each connection flag given (--nats, --creds,
		--tls-ca, --tls-cert, --tls-key, --etcd, --etcd-ca, --etcd-cert, --etcd-key) sets
		that setting, "" clears it, the others are kept. Relative paths are stored
		absolute. The current context is not changed (use-context does that).`)
	return func(cmd *cobra.Command, args []string) error {
		if cmd.Flags().Changed("context") {
			return usagef("config set-context: --context does not apply (the context is NAME)")
		}
		if err := connection.ValidContextName(args[0]); err != nil {
			return usagef("config set-context: %v", err)
		}
		path := a.configPath()
		if err := connection.UpdateContext(path, args[0], a.globals.conn.CopyTo); err != nil {
			return err
		}
		fmt.Fprintf(a.env.stdout, "context %s set in %s\n", clean(args[0]), clean(path))
		return nil
	}
}

func (a *app) deleteContext(*cobra.Command) runE {
	return func(_ *cobra.Command, args []string) error {
		path := a.configPath()
		wasCurrent, err := connection.DeleteContext(path, args[0])
		if err != nil {
			return err
		}
		fmt.Fprintf(a.env.stdout, "context %s deleted from %s\n", clean(args[0]), clean(path))
		if wasCurrent {
			fmt.Fprintln(a.env.stdout, "it was the current context: none is now (commands use the defaults)")
		}
		return nil
	}
}
