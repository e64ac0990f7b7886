package place

import (
	"fmt"
	"strings"
	"time"
)

// Explanations follow the Kubernetes scheduler's rule that "doesn't fit"
// is a status with reasons in numbers, never an error: counts of nodes per
// rejecting filter, the best domain and its count, what the gang needs.

// placed turns a choice into a Placed result (or a Wait when no chosen
// address has a free MASTER_PORT). relaxed lists the soft constraints
// dropped to get it.
func (d *decision) placed(ch choice, relaxed []*soft) Result {
	port, ok := masterPort(d.snap, ch.nodes)
	if !ok {
		return Result{
			Code: Wait, ReasonCode: ReasonResources,
			Reason: ReasonResources + ": no free MASTER_PORT",
			Detail: fmt.Sprintf("the chosen nodes' addresses have no free port in [%d, %d)",
				d.snap.PortBase, d.snap.PortBase+d.snap.PortCount),
		}
	}
	p := build(d.cur.e.cs, ch.nodes, port)
	res := Result{Code: Placed, Placement: &p, Leaves: ch.leaves, Level: int(ch.level)}
	res.Detail = d.describe(ch)
	if len(relaxed) > 0 {
		res.Relaxed, res.ReasonCode = true, ReasonRelaxed
		var why, names []string
		for _, s := range relaxed {
			names = append(names, s.name)
			if s.never != "" {
				why = append(why, fmt.Sprintf("%s can never be met here (%s)", s.name, s.never))
			} else {
				why = append(why, fmt.Sprintf("%s was not met within its wait (waited from %s until %s)",
					s.name, d.req.WaitEnd(0, d.now).Format(time.RFC3339), s.deadline.Format(time.RFC3339)))
			}
		}
		res.Reason = ReasonRelaxed + ": " + strings.Join(names, ", ") + " dropped"
		res.Detail += "; relaxed: " + strings.Join(why, "; ")
	}
	return res
}

// describe says where a placement went: "4 nodes on 2 leaves (leaf-1,
// leaf-2), crossing level 1".
func (d *decision) describe(ch choice) string {
	x := d.x
	var leaves []string
	seen := map[int32]bool{}
	for _, i := range ch.nodes {
		if l := x.leafOf[i]; !seen[l] {
			seen[l] = true
			leaves = append(leaves, d.leafName(l))
		}
	}
	s := fmt.Sprintf("%s on %s (%s)", plural(len(ch.nodes), "node"), plural(ch.leaves, "leaf"), list(leaves, 4))
	if ch.level > 0 {
		s += fmt.Sprintf(", crossing level %d", ch.level)
	}
	return s
}

// waitFor: the gang would place now without the waiting constraint s.
func (d *decision) waitFor(s *soft, keep constraint) Result {
	left := s.deadline.Sub(d.now)
	return Result{
		Code: Wait, ReasonCode: s.code,
		Reason: fmt.Sprintf("%s (%s left)", s.code, shortDuration(left)),
		Detail: fmt.Sprintf("%s; waiting up to %s more for %s, then placing on the best available",
			d.explainMiss(d.cur, keep), shortDuration(left), s.name),
	}
}

// wait: not placeable now, for lack of resources or of a required domain.
func (d *decision) wait(code string, con constraint) Result {
	detail := d.explainMiss(d.cur, con)
	return Result{Code: Wait, ReasonCode: code, Reason: code + ": " + d.short(d.cur, con), Detail: detail}
}

// unschedulable: the idle cluster cannot hold the gang within con.
func (d *decision) unschedulable(con constraint) Result {
	return Result{
		Code: Unschedulable, ReasonCode: ReasonNoNodes,
		Reason: ReasonNoNodes + ": " + d.short(d.capacity(), con),
		Detail: d.explainMiss(d.capacity(), con) + ", even with the cluster idle",
	}
}

// short is the one-clause reason: "3 of 4 nodes with 8 free GPUs", or
// "best leaf has 1 of 2 nodes with 8 free GPUs".
func (d *decision) short(s *searcher, con constraint) string {
	need := d.needNodes(s)
	if got := s.e.eligible(); got < s.n {
		return fmt.Sprintf("%d of %s", got, need)
	}
	if c, ok := s.best(con); ok { // only the leaf budget fails
		return fmt.Sprintf("best needs %s, %d allowed", plural(c.leaves, "leaf"), con.maxLeaves)
	}
	name, cnt := d.bestDomain(s, con)
	return fmt.Sprintf("best %s has %d of %s", d.domainWord(con), cnt, need) + nameSuffix(name)
}

// explainMiss says in numbers why s finds no placement under con.
func (d *decision) explainMiss(s *searcher, con constraint) string {
	need := d.needNodes(s)
	got := s.e.eligible()
	if got < s.n {
		msg := fmt.Sprintf("needs %s; %d %s", need, got, haveWord(got, s.e.cs.capacity))
		if got > 0 {
			msg += fmt.Sprintf(", on %s", plural(d.eligibleLeaves(s), "leaf"))
		}
		if r := d.rejections(s.e); r != "" {
			msg += "; " + r
		}
		return msg
	}
	overall := fmt.Sprintf("%d such nodes on %s overall", got, plural(d.eligibleLeaves(s), "leaf"))
	if c, ok := s.best(con); ok { // only the leaf budget fails
		return fmt.Sprintf("needs %s within %s: the best placement spans %s; %s",
			need, plural(con.maxLeaves, "leaf"), plural(c.leaves, "leaf"), overall)
	}
	name, cnt := d.bestDomain(s, con)
	return fmt.Sprintf("needs %s in one %s: best %s has %d%s; %s",
		need, d.domainWord(con), d.domainWord(con), cnt, nameSuffix(name), overall)
}

func (d *decision) needNodes(s *searcher) string {
	free := "free "
	if s.e.cs.capacity {
		free = ""
	}
	what := fmt.Sprintf("%s with %d %sGPUs", plural(s.n, "node"), d.req.GPUsPerNode, free)
	if d.req.GPUBind == BindClosest {
		what += " bindable closest"
	}
	return what
}

func haveWord(n int, capacity bool) string {
	verb := "has them"
	if n != 1 {
		verb = "have them"
	}
	if capacity {
		return verb + " in the cluster"
	}
	return verb + " now"
}

// rejections is "of 20 nodes: 2 down, 14 with fewer than 8 free GPUs".
func (d *decision) rejections(e *evaluation) string {
	var parts []string
	for f, n := range e.rejected {
		if n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", n, stack[f].Reason(e.cs)))
		}
	}
	if len(parts) == 0 {
		return ""
	}
	return fmt.Sprintf("of %d nodes: %s", len(e.elig), strings.Join(parts, ", "))
}

func (d *decision) eligibleLeaves(s *searcher) int {
	n := 0
	for _, leaf := range d.x.leafSeq {
		if s.e.cnt[leaf] > 0 {
			n++
		}
	}
	return n
}

// domainWord names the domain kind con restricts to.
func (d *decision) domainWord(con constraint) string {
	tree := string(con.tree)
	if con.tree == LevelNone && con.maxLeaves == 1 {
		tree = "leaf"
	}
	switch {
	case con.block && tree != "":
		return "block and " + tree
	case con.block:
		return "block"
	case tree != "":
		return tree
	}
	return "cluster"
}

// bestDomain finds the domain of con's kind with the most eligible nodes.
func (d *decision) bestDomain(s *searcher, con constraint) (string, int) {
	x, e := d.x, s.e
	name, best := "", -1
	offer := func(n string, c int) {
		if c > best {
			name, best = n, c
		}
	}
	switch {
	case con.block:
		for b, bi := range x.blocks {
			perPart := map[int32]int{}
			for _, i := range bi.nodes {
				if !e.elig[i] {
					continue
				}
				var p int32
				switch con.tree {
				case LevelLeaf:
					p = x.leafOf[i]
				case LevelSpine:
					p = x.spineOf[x.leafOf[i]]
				}
				perPart[p]++
			}
			for _, c := range perPart {
				offer(x.blocks[b].name, c)
			}
		}
	case con.tree == LevelSpine:
		for k, sw := range x.spineDoms {
			n := 0
			for _, leaf := range x.spineLvs[k] {
				n += int(e.cnt[leaf])
			}
			offer(d.leafName(sw), n)
		}
	case con.tree == LevelLeaf || con.maxLeaves == 1:
		for _, leaf := range x.leafSeq {
			offer(d.leafName(leaf), int(e.cnt[leaf]))
		}
	}
	return name, max(best, 0)
}

func (d *decision) leafName(sw int32) string {
	if d.x.sw[sw].pseudo {
		return d.x.sw[sw].name + " (no leaf)"
	}
	return d.x.sw[sw].name
}

func nameSuffix(name string) string {
	if name == "" {
		return ""
	}
	return " (" + name + ")"
}

func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	if word == "leaf" {
		return fmt.Sprintf("%d leaves", n)
	}
	return fmt.Sprintf("%d %ss", n, word)
}

func list(names []string, limit int) string {
	if len(names) <= limit {
		return strings.Join(names, ", ")
	}
	return strings.Join(names[:limit], ", ") + fmt.Sprintf(", … %d more", len(names)-limit)
}

// shortDuration renders a wait for humans: "12m", "1h5m", "45s"; minutes
// round up so "1m" is shown until the last minute.
func shortDuration(d time.Duration) string {
	switch {
	case d <= 0:
		return "0s"
	case d < time.Minute:
		return fmt.Sprintf("%ds", int((d+time.Second-1)/time.Second))
	}
	m := int((d + time.Minute - 1) / time.Minute)
	if m < 60 {
		return fmt.Sprintf("%dm", m)
	}
	if m%60 == 0 {
		return fmt.Sprintf("%dh", m/60)
	}
	return fmt.Sprintf("%dh%dm", m/60, m%60)
}
