package prometheus_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/prometheus/promql"
	"github.com/prometheus/prometheus/promql/promqltest"
	"github.com/prometheus/prometheus/storage"
)

// alertCases: for each alert, the series (promqltest's load notation, one
// sample a minute for three minutes) on which it fires and on which it
// stays quiet. Gauges from watch caches come from two replicas, as in the
// compose cluster.
var alertCases = []struct {
	alert, series string
	fires         bool
}{
	{"LockstepNodeDown", `lockstep_nodes{state="down",instance="drain-1"} 1 1 1
lockstep_nodes{state="down",instance="drain-2"} 1 1 1`, true},
	{"LockstepNodeDown", `lockstep_nodes{state="down",instance="drain-1"} 1 0 0
lockstep_nodes{state="up",instance="drain-1"} 7 8 8`, false},

	{"LockstepGPUUnhealthy", `lockstep_gpus_unhealthy{leaf="leaf-1",instance="drain-1"} 0 1 1
lockstep_gpus_unhealthy{leaf="leaf-2",instance="drain-1"} 0 0 0`, true},
	{"LockstepGPUUnhealthy", `lockstep_gpus_unhealthy{leaf="leaf-1",instance="drain-1"} 0 0 0`, false},

	{"LockstepGangPastSwitchWait", `lockstep_gangs_past_switch_wait{queue="research",instance="placement-1"} 2 2 2`, true},
	{"LockstepGangPastSwitchWait", `lockstep_gangs_past_switch_wait{queue="research",instance="placement-1"} 0 0 0`, false},

	{"LockstepPlacementLeaderMissing", `lockstep_placement_leader{instance="placement-1"} 1 0 0
lockstep_placement_leader{instance="placement-2"} 0 0 0`, true},
	// Every placement replica gone: no series at all is no leader too.
	{"LockstepPlacementLeaderMissing", `up{job="lockstep-gang",instance="gang-1"} 1 1 1`, true},
	{"LockstepPlacementLeaderMissing", `lockstep_placement_leader{instance="placement-1"} 1 0 0
lockstep_placement_leader{instance="placement-2"} 0 1 1`, false},

	{"LockstepPlacementLeaders", `lockstep_placement_leader{instance="placement-1"} 1 1 1
lockstep_placement_leader{instance="placement-2"} 1 1 1`, true},
	{"LockstepPlacementLeaders", `lockstep_placement_leader{instance="placement-1"} 1 1 1
lockstep_placement_leader{instance="placement-2"} 0 0 0`, false},

	{"LockstepEtcdUnavailable", `lockstep_dependency_up{dependency="etcd",service="gang/gang-1"} 1 0 0
lockstep_dependency_up{dependency="etcd",service="drain/drain-1"} 0 0 0
lockstep_dependency_up{dependency="nats",service="gang/gang-1"} 1 1 1`, true},
	{"LockstepEtcdUnavailable", `lockstep_dependency_up{dependency="etcd",service="gang/gang-1"} 0 0 0
lockstep_dependency_up{dependency="etcd",service="drain/drain-1"} 1 1 1`, false},

	{"LockstepEtcdNoLeader", `etcd_server_has_leader{instance="etcd-2"} 1 0 0`, true},
	{"LockstepEtcdNoLeader", `etcd_server_has_leader{instance="etcd-2"} 1 1 1`, false},

	{"LockstepEtcdMemberDown", `up{job="etcd",instance="etcd-3"} 0 0 0`, true},
	{"LockstepEtcdMemberDown", `up{job="etcd",instance="etcd-3"} 1 1 1
up{job="lockstep-gang",instance="gang-1"} 0 0 0`, false},

	{"LockstepNATSUnavailable", `lockstep_dependency_up{dependency="nats",service="gang/gang-1"} 0 0 0
lockstep_dependency_up{dependency="nats",service="agent/node-01"} 0 0 0`, true},
	{"LockstepNATSUnavailable", `lockstep_dependency_up{dependency="nats",service="gang/gang-1"} 0 0 0
lockstep_dependency_up{dependency="nats",service="agent/node-01"} 1 1 1
lockstep_dependency_up{dependency="etcd",service="gang/gang-1"} 0 0 0`, false},

	{"LockstepDependencyLost", `lockstep_dependency_up{dependency="nats",service="gang/gang-1"} 1 1 1
lockstep_dependency_up{dependency="etcd",service="agent/node-03"} 1 0 0`, true},
	{"LockstepDependencyLost", `lockstep_dependency_up{dependency="nats",service="gang/gang-1"} 1 1 1
lockstep_dependency_up{dependency="etcd",service="agent/node-03"} 1 1 1`, false},

	{"LockstepTargetDown", `up{job="lockstep-agent",instance="node-05"} 1 0 0`, true},
	{"LockstepTargetDown", `up{job="lockstep-agent",instance="node-05"} 1 1 1
up{job="etcd",instance="etcd-1"} 0 0 0`, false},
}

// TestAlertsFire evaluates each alert's expression on its cases (at the
// last sample; the `for` duration is Prometheus's to keep) and checks that
// every alert has a case that fires and one that does not.
func TestAlertsFire(t *testing.T) {
	exprs := map[string]string{}
	for _, r := range rules(t) {
		if r.Alert != "" {
			exprs[r.Alert] = r.Expr
		}
	}
	covered := map[string][2]bool{}
	for _, c := range alertCases {
		expr, ok := exprs[c.alert]
		if !ok {
			t.Errorf("no alert %s in the rules", c.alert)
			continue
		}
		got := len(instant(t, c.series, expr)) > 0
		if got != c.fires {
			t.Errorf("%s on\n%s\nfires=%v, want %v (expr %s)", c.alert, c.series, got, c.fires, expr)
		}
		cov := covered[c.alert]
		cov[boolIndex(c.fires)] = true
		covered[c.alert] = cov
	}
	for name := range exprs {
		if cov := covered[name]; !cov[0] || !cov[1] {
			t.Errorf("alert %s has no case that fires and one that does not (fires, quiet: %v)", name, cov)
		}
	}
}

func boolIndex(b bool) int {
	if b {
		return 1
	}
	return 0
}

// evalAt is when instant queries run: the third sample of every series.
var evalAt = time.Unix(0, 0).Add(2 * time.Minute)

// instant loads series into a fresh storage and evaluates expr at evalAt.
func instant(t *testing.T, series, expr string) promql.Vector {
	t.Helper()
	st := promqltest.LoadedStorage(t, "load 1m\n"+indent(series))
	t.Cleanup(func() { _ = st.Close() })
	return instantOn(t, st, expr)
}

func instantOn(t *testing.T, st storage.Queryable, expr string) promql.Vector {
	t.Helper()
	engine := promqltest.NewTestEngineWithOpts(t, promql.EngineOpts{MaxSamples: 100000, Timeout: 10 * time.Second, Parser: promqlParser})
	q, err := engine.NewInstantQuery(context.Background(), st, nil, expr, evalAt)
	if err != nil {
		t.Fatalf("%s: %v", expr, err)
	}
	defer q.Close()
	res := q.Exec(context.Background())
	if res.Err != nil {
		t.Fatalf("%s: %v", expr, res.Err)
	}
	v, err := res.Vector()
	if err != nil {
		t.Fatalf("%s: %v", expr, err)
	}
	return v
}

func indent(s string) string {
	return "  " + strings.ReplaceAll(strings.TrimSpace(s), "\n", "\n  ")
}
