// Package prometheus_test checks deploy/prometheus and deploy/grafana with
// Prometheus's own packages, as `promtool check config` and `promtool check
// rules` would, and more: every metric a rule or panel reads is one the
// code exports (deploy/prometheus/exported-metrics.txt, kept true by a
// test in the main module) or a rule records, and each alert fires exactly
// in the situations it is written for. It lives in this module, not the
// main one, so that Prometheus's dependency graph stays out of Lockstep's;
// .ci/run runs it.
package prometheus_test

import (
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/prometheus/common/model"
	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/model/rulefmt"
	"github.com/prometheus/prometheus/promql/parser"
)

// Paths from this directory.
const (
	prometheusDir = "../../prometheus"
	rulesGlob     = prometheusDir + "/rules/*.yml"
	namesFile     = prometheusDir + "/exported-metrics.txt"
)

// promqlParser parses as Prometheus does by default (no experimental features).
var promqlParser = parser.NewParser(parser.Options{})

// ruleFiles loads every rule file as `promtool check rules` does; a file
// that fails fails the test.
func ruleFiles(t *testing.T) map[string]*rulefmt.RuleGroups {
	t.Helper()
	files, err := filepath.Glob(rulesGlob)
	if err != nil || len(files) == 0 {
		t.Fatalf("no rule files match %s (%v)", rulesGlob, err)
	}
	out := map[string]*rulefmt.RuleGroups{}
	for _, f := range files {
		rgs, errs := rulefmt.ParseFile(f, false, model.UTF8Validation, promqlParser, slog.New(slog.DiscardHandler))
		for _, err := range errs {
			t.Errorf("%v", err)
		}
		if rgs != nil {
			out[f] = rgs
		}
	}
	if t.Failed() {
		t.FailNow()
	}
	return out
}

// rules is every rule of every file, in file and group order.
func rules(t *testing.T) []rulefmt.Rule {
	t.Helper()
	files := ruleFiles(t)
	var out []rulefmt.Rule
	for _, f := range slices.Sorted(maps.Keys(files)) {
		for _, g := range files[f].Groups {
			out = append(out, g.Rules...)
		}
	}
	return out
}

// TestRulesLoad is `promtool check rules`: each file parses, every
// expression and template is valid, and no two rules record the same
// series (promtool's duplicate lint), nor two alerts share a name.
func TestRulesLoad(t *testing.T) {
	seen := map[string]bool{}
	n := 0
	for _, r := range rules(t) {
		n++
		name := r.Record
		if name == "" {
			name = "ALERT " + r.Alert
		}
		key := name + labels.FromMap(r.Labels).String()
		if seen[key] {
			t.Errorf("%s is defined twice", key)
		}
		seen[key] = true
	}
	if n == 0 {
		t.Fatal("no rules")
	}
}

// TestRuleMetricNames: every series a rule reads is exported by the code
// (exported-metrics.txt), recorded by a rule, or made by Prometheus itself.
func TestRuleMetricNames(t *testing.T) {
	known := knownNames(t)
	for _, r := range rules(t) {
		for _, name := range metricNames(t, r.Expr) {
			if !known[name] {
				t.Errorf("rule %s%s reads %s, which nothing exports or records (exported-metrics.txt)", r.Record, r.Alert, name)
			}
		}
	}
}

// scrapeNames are the series Prometheus makes for every target.
var scrapeNames = []string{"up", "scrape_duration_seconds", "scrape_samples_scraped"}

// knownNames is every name a query may read: the exported ones, the
// recorded ones and Prometheus's own per-target series.
func knownNames(t *testing.T) map[string]bool {
	t.Helper()
	b, err := os.ReadFile(namesFile)
	if err != nil {
		t.Fatal(err)
	}
	known := map[string]bool{}
	for line := range strings.Lines(string(b)) {
		if line = strings.TrimSpace(line); line != "" && !strings.HasPrefix(line, "#") {
			known[line] = true
		}
	}
	if len(known) < 10 {
		t.Fatalf("%s lists %d names", namesFile, len(known))
	}
	for _, r := range rules(t) {
		if r.Record != "" {
			known[r.Record] = true
		}
	}
	for _, n := range scrapeNames {
		known[n] = true
	}
	return known
}

// metricNames parses expr and returns the metric names its selectors read;
// a selector without a name fails the test (it could read anything).
func metricNames(t *testing.T, expr string) []string {
	t.Helper()
	e, err := promqlParser.ParseExpr(expr)
	if err != nil {
		t.Errorf("%q: %v", expr, err)
		return nil
	}
	var names []string
	parser.Inspect(e, func(n parser.Node, _ []parser.Node) error {
		vs, ok := n.(*parser.VectorSelector)
		if !ok {
			return nil
		}
		if vs.Name == "" {
			t.Errorf("%q: selector %s names no metric", expr, vs)
			return nil
		}
		names = append(names, vs.Name)
		return nil
	})
	return names
}
