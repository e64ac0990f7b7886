package topology

import (
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/cockroachdb/errors"
	"github.com/lockstep-dev/lockstep/shared/contract/errs"
	"go.yaml.in/yaml/v3"
)

// UnmarshalYAML rejects unknown fields itself, because the decoder's
// KnownFields error names the Go type and line but not the switch, and an
// operator fixing a 500-line file wants the switch.
func (s *SwitchSpec) UnmarshalYAML(n *yaml.Node) error {
	what, err := checkFields(n, "switch", "name", "children", "nodes")
	if err != nil {
		return err
	}
	type plain SwitchSpec // no UnmarshalYAML method, so no recursion
	return errors.Wrap(n.Decode((*plain)(s)), what)
}

// UnmarshalYAML: see SwitchSpec.UnmarshalYAML.
func (b *BlockSpec) UnmarshalYAML(n *yaml.Node) error {
	what, err := checkFields(n, "block", "name", "nodes")
	if err != nil {
		return err
	}
	type plain BlockSpec
	return errors.Wrap(n.Decode((*plain)(b)), what)
}

// checkFields fails on a mapping key outside allowed. It returns how to name
// the entry in errors: by its name field when it has one, else by line.
func checkFields(n *yaml.Node, kind string, allowed ...string) (string, error) {
	if n.Kind != yaml.MappingNode {
		return "", errors.Newf("line %d: each %s must be a mapping with fields %s", n.Line, kind, strings.Join(allowed, ", "))
	}
	what := fmt.Sprintf("%s at line %d", kind, n.Line)
	for i := 0; i+1 < len(n.Content); i += 2 {
		if k, v := n.Content[i], n.Content[i+1]; k.Value == "name" && v.Kind == yaml.ScalarNode {
			what = fmt.Sprintf("%s %q", kind, v.Value)
		}
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k := n.Content[i]
		if !slices.Contains(allowed, k.Value) {
			return "", errors.Newf("%s: line %d: unknown field %q (allowed: %s)", what, k.Line, k.Value, strings.Join(allowed, ", "))
		}
	}
	return what, nil
}

// LoadYAML reads a topology in the YAML format described in the package
// documentation. Node and child lists may use hostlist expressions.
func LoadYAML(r io.Reader) (*Topology, error) {
	dec := yaml.NewDecoder(r)
	dec.KnownFields(true) // top-level typos ("switchs:") must not pass silently
	var s Spec
	if err := dec.Decode(&s); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, errs.MarkInvalid(errors.New("topology YAML is empty"))
		}
		return nil, errs.MarkInvalid(errors.Wrap(err, "parsing topology YAML"))
	}
	if len(s.Switches) == 0 && len(s.Blocks) == 0 {
		// An empty file would silently turn topology-aware placement off.
		return nil, errs.MarkInvalid(errors.New("topology YAML defines no switches and no blocks"))
	}
	for i := range s.Switches {
		sw := &s.Switches[i]
		if sw.Name == "" {
			return nil, errs.MarkInvalid(errors.Newf("switch #%d has no name", i+1))
		}
		var err error
		if sw.Children, err = expandAll(sw.Children); err != nil {
			return nil, errs.MarkInvalid(errors.Wrapf(err, "switch %q: children", sw.Name))
		}
		if sw.Nodes, err = expandAll(sw.Nodes); err != nil {
			return nil, errs.MarkInvalid(errors.Wrapf(err, "switch %q: nodes", sw.Name))
		}
	}
	for i := range s.Blocks {
		b := &s.Blocks[i]
		if b.Name == "" {
			return nil, errs.MarkInvalid(errors.Newf("block #%d has no name", i+1))
		}
		var err error
		if b.Nodes, err = expandAll(b.Nodes); err != nil {
			return nil, errs.MarkInvalid(errors.Wrapf(err, "block %q: nodes", b.Name))
		}
	}
	return New(s)
}

// expandAll expands each hostlist expression of a YAML list and concatenates
// the results.
func expandAll(exprs []string) ([]string, error) {
	var out []string
	for _, e := range exprs {
		hosts, err := expandHostlist(e)
		if err != nil {
			return nil, err
		}
		out = append(out, hosts...)
	}
	return out, nil
}
