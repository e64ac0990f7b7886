package main

import (
	"encoding/json"
	"io"
	"slices"

	"github.com/cockroachdb/errors"
	"github.com/spf13/cobra"
	"go.yaml.in/yaml/v3"
)

// The -o formats. table is the default; wide adds the columns a command
// leaves out of its table (a command with nothing more to say prints its
// table); json and yaml print the same data, for scripts; csv is for the
// commands that mark themselves csvOutput (history).
var outputFormats = []string{"table", "wide", "json", "yaml", "csv"}

// csvAnnotation on a command: it prints -o csv.
const csvAnnotation = "lockstep/csv"

// csvOutput marks cmd as printing -o csv.
func csvOutput(cmd *cobra.Command) {
	if cmd.Annotations == nil {
		cmd.Annotations = map[string]string{}
	}
	cmd.Annotations[csvAnnotation] = "yes"
}

// checkFormat refuses -o csv on a command that does not print it, before
// anything is dialled.
func checkFormat(cmd *cobra.Command, format string) error {
	if format == "csv" && cmd.Annotations[csvAnnotation] == "" {
		return usagef("-o csv: %s does not print csv (want table, wide, json or yaml)", verb(cmd))
	}
	return nil
}

// format is -o.
func (a *app) format() string { return a.globals.output.value }

// structured reports -o json or -o yaml: print data, not a table.
func (a *app) structured() bool { return slices.Contains([]string{"json", "yaml"}, a.format()) }

// writeData prints v as -o json (indented) or -o yaml asks.
func (a *app) writeData(v any) error {
	if a.format() == "yaml" {
		return writeYAML(a.env.stdout, v)
	}
	return writeJSON(a.env, v)
}

// show prints v as -o asks: JSON or YAML of v, else the command's table
// (wide with -o wide).
func (a *app) show(v any, table func(w io.Writer, wide bool) error) error {
	if a.structured() {
		return a.writeData(v)
	}
	return table(a.env.stdout, a.format() == "wide")
}

// writeYAML prints v as YAML with the field names and order its JSON has
// (the json tags are the contract; YAML is another spelling of it).
func writeYAML(w io.Writer, v any) error {
	raw, err := json.Marshal(v)
	if err != nil {
		return errors.Wrap(err, "encode output")
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(raw, &doc); err != nil {
		return errors.Wrap(err, "encode output as YAML")
	}
	blockStyle(&doc)
	enc := yaml.NewEncoder(w)
	enc.SetIndent(2)
	if err := enc.Encode(&doc); err != nil {
		return errors.Wrap(err, "encode output as YAML")
	}
	return enc.Close()
}

// blockStyle drops the flow style and quoting JSON parsed with, so YAML is
// written in block style, quoting only what needs it.
func blockStyle(n *yaml.Node) {
	n.Style = 0
	for _, c := range n.Content {
		blockStyle(c)
	}
}
