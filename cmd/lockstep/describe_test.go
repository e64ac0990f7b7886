package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/lockstep-dev/lockstep/shared/contract/domain"
	"github.com/lockstep-dev/lockstep/shared/contract/jobspec"
)

func TestDescribeShowsDependencies(t *testing.T) {
	var buf bytes.Buffer
	spec := jobspec.Spec{Name: "b", Command: []string{"x"}, Singleton: true, Dependencies: []jobspec.Dependency{
		{Type: jobspec.DependAfterOK, Jobs: []string{"a", "a2"}}, {Type: jobspec.DependAfterNotOK, Jobs: []string{"c"}}}}
	printDescription(&buf, description{ID: "b", State: domain.StatePending, Reason: domain.ReasonDependency,
		Detail: "waiting for afterok:a", Spec: spec})
	for _, want := range []string{"State:      pending — Dependency", "Why:        waiting for afterok:a",
		"Depends on: afterok:a:a2,afternotok:c,singleton"} {
		if !strings.Contains(buf.String(), want) {
			t.Errorf("describe lacks %q:\n%s", want, buf.String())
		}
	}
}
