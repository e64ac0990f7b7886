package connection

import (
	"bytes"
	"os"

	"github.com/cockroachdb/errors"
	"go.yaml.in/yaml/v3"

	"github.com/lockstep-dev/lockstep/shared/plumbing/atomicfile"
)

// SetContext writes context name into the config file at path (creating
// the file when missing) and makes it the current context only when the
// file has no other current context: a user's choice of cluster is never
// switched behind their back. Everything else in the file, comments
// included, is kept. It reports whether name is now current.
func SetContext(path, name string, ctx Context) (current bool, err error) {
	err = editCLIConfig(path, func(existing CLIConfig, root *yaml.Node) error {
		if err := putContext(root, name, ctx); err != nil {
			return err
		}
		current = existing.CurrentContext == "" || existing.CurrentContext == name
		if current {
			mapSet(root, "current-context", scalar(name))
		}
		return nil
	})
	return current, err
}

// UpdateContext changes context name with change (a new context starts
// empty; an error from change writes nothing) and leaves the current
// context as it is (`lockstep config set-context`).
func UpdateContext(path, name string, change func(*Context) error) error {
	return editCLIConfig(path, func(existing CLIConfig, root *yaml.Node) error {
		ctx := existing.Contexts[name]
		if err := change(&ctx); err != nil {
			return err
		}
		return putContext(root, name, ctx)
	})
}

// UseContext makes name, which the file must have, the current context.
func UseContext(path, name string) error {
	return editCLIConfig(path, func(existing CLIConfig, root *yaml.Node) error {
		if _, err := existing.Use(name); err != nil {
			return err
		}
		mapSet(root, "current-context", scalar(name))
		return nil
	})
}

// DeleteContext removes context name, which the file must have; when it
// was the current context the file is left with none (defaults apply)
// rather than some other cluster chosen for the user. It reports whether
// it was current.
func DeleteContext(path, name string) (wasCurrent bool, err error) {
	err = editCLIConfig(path, func(existing CLIConfig, root *yaml.Node) error {
		if _, err := existing.Use(name); err != nil {
			return err
		}
		mapDelete(mapGet(root, "contexts"), name)
		if wasCurrent = existing.CurrentContext == name; wasCurrent {
			mapDelete(root, "current-context")
		}
		return nil
	})
	return wasCurrent, err
}

// editCLIConfig reads the config file at path (missing: empty), lets edit
// change its YAML tree, and writes it back. The file is read and checked
// (LoadCLIConfig) first, so a file this code does not understand is never
// rewritten; edit gets that checked reading too. The tree, not the
// decoded struct, is what is written: comments and layout survive.
func editCLIConfig(path string, edit func(existing CLIConfig, root *yaml.Node) error) error {
	if path == "" {
		return errors.New("config file: no path (set --config, LOCKSTEP_CONFIG, XDG_CONFIG_HOME or HOME)")
	}
	existing, err := LoadCLIConfig(path)
	if err != nil {
		return err
	}
	var doc yaml.Node
	if existing.Path != "" {
		raw, err := os.ReadFile(path)
		if err != nil {
			return errors.Wrap(err, "config file")
		}
		if err := yaml.Unmarshal(raw, &doc); err != nil {
			return errors.Wrapf(err, "config file %s", path)
		}
	}
	if doc.Kind == 0 {
		doc = yaml.Node{Kind: yaml.DocumentNode, Content: []*yaml.Node{{Kind: yaml.MappingNode}}}
	}
	root := doc.Content[0]
	if root.Kind != yaml.MappingNode {
		return errors.Newf("config file %s: not a mapping", path)
	}
	if err := edit(existing, root); err != nil {
		return err
	}
	var buf bytes.Buffer
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	if err := enc.Encode(&doc); err != nil {
		return errors.Wrapf(err, "encode config file %s", path)
	}
	return writeFileAtomic(path, buf.Bytes())
}

// putContext sets contexts.<name> in root to ctx.
func putContext(root *yaml.Node, name string, ctx Context) error {
	if err := ValidContextName(name); err != nil {
		return err
	}
	var val yaml.Node
	if err := val.Encode(ctx); err != nil {
		return errors.Wrap(err, "encode context")
	}
	contexts := mapGet(root, "contexts")
	if contexts == nil || contexts.Kind != yaml.MappingNode {
		contexts = &yaml.Node{Kind: yaml.MappingNode}
		mapSet(root, "contexts", contexts)
	}
	mapSet(contexts, name, &val)
	return nil
}

// writeFileAtomic replaces path with data, readable by its owner only (a
// context names credentials): through a temporary file of its own in the
// same directory and a rename, so a reader never sees half a config and
// two writers never share a temporary file.
func writeFileAtomic(path string, data []byte) error {
	return errors.Wrap(atomicfile.Write(path, data, 0o700, 0o600), "write config file")
}

func scalar(v string) *yaml.Node { return &yaml.Node{Kind: yaml.ScalarNode, Value: v} }

// mapGet is the value of key in a YAML mapping, nil when absent.
func mapGet(m *yaml.Node, key string) *yaml.Node {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			return m.Content[i+1]
		}
	}
	return nil
}

// mapSet sets key in a YAML mapping, replacing its value in place.
func mapSet(m *yaml.Node, key string, val *yaml.Node) {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			m.Content[i+1] = val
			return
		}
	}
	m.Content = append(m.Content, scalar(key), val)
}

// mapDelete removes key from a YAML mapping (m nil: nothing to do).
func mapDelete(m *yaml.Node, key string) {
	if m == nil {
		return
	}
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			m.Content = append(m.Content[:i], m.Content[i+2:]...)
			return
		}
	}
}
