package config

import (
	"bytes"
	"os"
	"path/filepath"

	"github.com/cockroachdb/errors"
	"go.yaml.in/yaml/v3"
)

// SetContext writes context name into the config file at path (creating
// the file when missing) and makes it the current context only when the
// file has no other current context: a user's choice of cluster is never
// switched behind their back. Everything else in the file, comments
// included, is kept. It reports whether name is now current.
func SetContext(path, name string, ctx Context) (current bool, err error) {
	if path == "" {
		return false, errors.New("config file: no path (set LOCKSTEP_CONFIG or HOME)")
	}
	// Reading it first checks that the file is one we understand before
	// anything in it is changed.
	existing, err := LoadCLIConfig(path)
	if err != nil {
		return false, err
	}
	var doc yaml.Node
	if existing.Path != "" {
		raw, err := os.ReadFile(path)
		if err != nil {
			return false, errors.Wrap(err, "config file")
		}
		if err := yaml.Unmarshal(raw, &doc); err != nil {
			return false, errors.Wrapf(err, "config file %s", path)
		}
	}
	if doc.Kind == 0 {
		doc = yaml.Node{Kind: yaml.DocumentNode, Content: []*yaml.Node{{Kind: yaml.MappingNode}}}
	}
	root := doc.Content[0]
	if root.Kind != yaml.MappingNode {
		return false, errors.Newf("config file %s: not a mapping", path)
	}
	var val yaml.Node
	if err := val.Encode(ctx); err != nil {
		return false, errors.Wrap(err, "encode context")
	}
	contexts := mapGet(root, "contexts")
	if contexts == nil || contexts.Kind != yaml.MappingNode {
		contexts = &yaml.Node{Kind: yaml.MappingNode}
		mapSet(root, "contexts", contexts)
	}
	mapSet(contexts, name, &val)
	current = existing.CurrentContext == "" || existing.CurrentContext == name
	if current {
		mapSet(root, "current-context", &yaml.Node{Kind: yaml.ScalarNode, Value: name})
	}
	var buf bytes.Buffer
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	if err := enc.Encode(&doc); err != nil {
		return false, errors.Wrapf(err, "encode config file %s", path)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return false, errors.Wrapf(err, "create %s", filepath.Dir(path))
	}
	// Through a temporary file: a reader never sees half a config.
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, buf.Bytes(), 0o600); err != nil {
		return false, errors.Wrapf(err, "write %s", tmp)
	}
	return current, errors.Wrapf(os.Rename(tmp, path), "rename %s", tmp)
}

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
	m.Content = append(m.Content, &yaml.Node{Kind: yaml.ScalarNode, Value: key}, val)
}
