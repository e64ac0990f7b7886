package prometheus_test

import (
	"encoding/json"
	"os"
	"testing"
)

const dashboardFile = "../../grafana/lockstep.json"

type grafanaPanel struct {
	ID      int            `json:"id"`
	Type    string         `json:"type"`
	Title   string         `json:"title"`
	Panels  []grafanaPanel `json:"panels"`
	Targets []struct {
		Expr string `json:"expr"`
	} `json:"targets"`
}

// TestDashboard: every panel of the Grafana dashboard queries; every query
// parses and reads only series the code exports or a rule records; panel
// IDs are unique (Grafana keys panels by them).
func TestDashboard(t *testing.T) {
	b, err := os.ReadFile(dashboardFile)
	if err != nil {
		t.Fatal(err)
	}
	var dash struct {
		UID    string         `json:"uid"`
		Panels []grafanaPanel `json:"panels"`
	}
	if err := json.Unmarshal(b, &dash); err != nil {
		t.Fatalf("%s: %v", dashboardFile, err)
	}
	if dash.UID == "" {
		t.Error("the dashboard has no uid")
	}
	known := knownNames(t)
	ids := map[int]bool{}
	queries := 0
	var walk func([]grafanaPanel)
	walk = func(panels []grafanaPanel) {
		for _, p := range panels {
			if ids[p.ID] {
				t.Errorf("panel id %d is used twice", p.ID)
			}
			ids[p.ID] = true
			walk(p.Panels)
			if p.Type == "row" {
				continue
			}
			if len(p.Targets) == 0 {
				t.Errorf("panel %q has no query", p.Title)
			}
			for _, q := range p.Targets {
				queries++
				for _, name := range metricNames(t, q.Expr) {
					if !known[name] {
						t.Errorf("panel %q reads %s, which nothing exports or records", p.Title, name)
					}
				}
			}
		}
	}
	walk(dash.Panels)
	if queries < 10 {
		t.Errorf("%d queries in the dashboard", queries)
	}
}
