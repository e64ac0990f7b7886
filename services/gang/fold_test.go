package gang

import (
	"testing"

	"github.com/lockstep-dev/lockstep/shared/contract/domain"
)

func gangOn(nodes ...string) domain.Allocation {
	a := domain.Allocation{JobID: "j", Attempt: 1, State: domain.AllocReserved}
	for i, n := range nodes {
		a.Placement.Nodes = append(a.Placement.Nodes, domain.NodePlacement{Node: n, NodeRank: i})
	}
	return a
}

func report(node string, kind domain.ReportKind, code int) domain.Report {
	return domain.Report{JobID: "j", Attempt: 1, Node: node, Kind: kind, ExitCode: code}
}

// fold is the whole decision of the report path; each case is a batch of
// reports arriving together on an allocation.
func TestFold(t *testing.T) {
	started := func(a domain.Allocation, nodes ...string) domain.Allocation {
		a = cloneAllocation(a)
		for _, n := range nodes {
			if a.Started == nil {
				a.Started = map[string]bool{}
			}
			a.Started[n] = true
		}
		return a
	}
	three := gangOn("a", "b", "c")
	running := started(three, "a", "b", "c")
	running.State = domain.AllocRunning

	t.Run("some starts record progress, no barrier", func(t *testing.T) {
		p := fold(three, []domain.Report{report("a", domain.ReportStarted, 0), report("b", domain.ReportStarted, 0)})
		if !p.changed || !p.startsChanged || p.barrier || p.ending != nil {
			t.Fatalf("got %+v", p)
		}
		if p.next.State != domain.AllocReserved || !p.next.Started["a"] || !p.next.Started["b"] || p.next.Started["c"] {
			t.Fatalf("next = %+v", p.next)
		}
		if three.Started != nil {
			t.Fatal("fold changed its input")
		}
	})
	t.Run("the last start passes the barrier", func(t *testing.T) {
		p := fold(started(three, "a"), []domain.Report{report("b", domain.ReportStarted, 0), report("c", domain.ReportStarted, 0)})
		if !p.barrier || p.next.State != domain.AllocRunning {
			t.Fatalf("got %+v", p)
		}
	})
	t.Run("an exit implies its start", func(t *testing.T) {
		p := fold(started(three, "a", "b"), []domain.Report{report("c", domain.ReportExited, 0)})
		if !p.barrier || !p.startsChanged || p.next.Exited["c"] != 0 || len(p.next.Exited) != 1 || p.ending != nil {
			t.Fatalf("got %+v", p)
		}
	})
	t.Run("a start seen again changes nothing", func(t *testing.T) {
		p := fold(running, []domain.Report{report("a", domain.ReportStarted, 0)})
		if p.changed || p.barrier || !p.started {
			t.Fatalf("got %+v", p)
		}
	})
	t.Run("clean exits complete the set", func(t *testing.T) {
		a := cloneAllocation(running)
		a.Exited = map[string]int{"a": 0}
		p := fold(a, []domain.Report{report("b", domain.ReportExited, 0), report("c", domain.ReportExited, 0)})
		if !p.changed || p.startsChanged || !p.next.AllExited() || p.ending != nil {
			t.Fatalf("got %+v", p)
		}
	})
	t.Run("a failure ends the gang and is not recorded as clean", func(t *testing.T) {
		p := fold(running, []domain.Report{report("a", domain.ReportExited, 0), report("b", domain.ReportExited, 3),
			report("c", domain.ReportFailed, 1)})
		if p.ending == nil || p.ending.Node != "b" || p.ending.ExitCode != 3 {
			t.Fatalf("ending = %+v, want b's exit 3 (the first)", p.ending)
		}
		if _, ok := p.next.Exited["b"]; ok || p.next.AllExited() {
			t.Fatalf("a failed exit recorded as clean: %+v", p.next.Exited)
		}
		if p.exits["a"] != 0 || p.exits["b"] != 3 || p.exits["c"] != 1 {
			t.Fatalf("exits = %v", p.exits)
		}
	})
	t.Run("lost ranks end the gang", func(t *testing.T) {
		p := fold(three, []domain.Report{report("a", domain.ReportLost, 0), report("b", domain.ReportStarted, 0)})
		if p.ending == nil || p.ending.Kind != domain.ReportLost || !p.next.Started["b"] {
			t.Fatalf("got %+v", p)
		}
	})
	t.Run("a batch gang has exited when its script's node has", func(t *testing.T) {
		batch := cloneAllocation(running)
		batch.Batch = true
		p := fold(batch, []domain.Report{report("b", domain.ReportStarted, 0)})
		if p.next.AllExited() {
			t.Fatal("batch gang exited before its script did")
		}
		p = fold(batch, []domain.Report{report("a", domain.ReportExited, 0)})
		if !p.next.AllExited() || p.ending != nil {
			t.Fatalf("the script (node rank 0) exited 0, gang not done: %+v", p)
		}
		// Its script failing ends it as any failed rank does.
		p = fold(batch, []domain.Report{report("a", domain.ReportFailed, 2)})
		if p.ending == nil || p.ending.ExitCode != 2 || p.next.AllExited() {
			t.Fatalf("got %+v", p)
		}
		// A held node losing its share ends it too (requeue).
		p = fold(batch, []domain.Report{report("c", domain.ReportLost, 0)})
		if p.ending == nil || p.ending.Kind != domain.ReportLost {
			t.Fatalf("got %+v", p)
		}
	})
}
