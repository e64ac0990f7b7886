package jobspec

import (
	"encoding/json"
	"reflect"
	"testing"
	"time"
)

// TestDefaultsMatchSchema: every "default" the schema documents is what
// Parse fills in (a field the encoding leaves out reads as its zero).
func TestDefaultsMatchSchema(t *testing.T) {
	sch := jobSpecSchema(t)
	s, err := Parse([]byte(`{"gang":{"nodes":2,"gpusPerNode":8},"command":["x"]}`))
	if err != nil {
		t.Fatal(err)
	}
	enc, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	var got map[string]any
	if err := json.Unmarshal(enc, &got); err != nil {
		t.Fatal(err)
	}
	checked := 0
	var walk func(path string, sch, got map[string]any)
	walk = func(path string, sch, got map[string]any) {
		props, _ := sch["properties"].(map[string]any)
		for name, p := range props {
			prop, _ := p.(map[string]any)
			field := path + name
			v, present := got[name]
			if def, ok := prop["default"]; ok {
				checked++
				if !present {
					v = reflect.Zero(reflect.TypeOf(def)).Interface()
				}
				if !sameDefault(def, v) {
					t.Errorf("%s: the schema's default is %v, Parse fills %v", field, def, v)
				}
			}
			if sub, ok := v.(map[string]any); ok {
				walk(field+".", prop, sub)
			}
		}
	}
	walk("", sch, got)
	if checked < 9 {
		t.Errorf("only %d defaults found in the schema", checked)
	}
}

// sameDefault compares JSON values, durations by what they mean ("120s"
// is "2m0s").
func sameDefault(a, b any) bool {
	as, aok := a.(string)
	bs, bok := b.(string)
	if aok && bok {
		ad, aerr := time.ParseDuration(as)
		bd, berr := time.ParseDuration(bs)
		if aerr == nil && berr == nil {
			return ad == bd
		}
	}
	return reflect.DeepEqual(a, b)
}

// The defaults the schema states in words, and WithDefaults's promises.
func TestWithDefaults(t *testing.T) {
	s, err := Parse([]byte(`{"id":"a","gang":{"nodes":2,"gpusPerNode":8},"command":["x"],"topology":{"maxSwitches":1}}`))
	if err != nil {
		t.Fatal(err)
	}
	if s.Name != "a" || s.Gang.TasksPerNode != 8 || s.Topology.WaitForSwitches.Duration() != DefaultSwitchWait {
		t.Errorf("name %q, tasksPerNode %d, waitForSwitches %v", s.Name, s.Gang.TasksPerNode, s.Topology.WaitForSwitches.Duration())
	}
	if again := s.WithDefaults(); !reflect.DeepEqual(again, s) {
		t.Errorf("not idempotent:\n %+v\n %+v", s, again)
	}
	// waitForSwitches only means something with maxSwitches.
	if s := (Spec{}).WithDefaults(); !s.Topology.WaitForSwitches.IsZero() {
		t.Errorf("waitForSwitches defaulted without maxSwitches: %v", s.Topology.WaitForSwitches)
	}
	// A record written before Parse filled these reads the same through
	// the accessors.
	var old Spec
	if err := json.Unmarshal([]byte(`{"queue":"q","gang":{"nodes":1,"gpusPerNode":8,"tasksPerNode":8},"command":["x"]}`), &old); err != nil {
		t.Fatal(err)
	}
	if old.MaxRestarts() != DefaultMaxRestarts || old.Grace() != DefaultGrace || old.Signal() != DefaultSignal {
		t.Errorf("old record: maxRestarts %d, grace %v, signal %s", old.MaxRestarts(), old.Grace(), old.Signal())
	}
}
