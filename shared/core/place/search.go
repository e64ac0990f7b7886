package place

import (
	"cmp"
	"slices"
)

// constraint is what a search must respect: a tree domain (one leaf, one
// spine, or anywhere), optionally one block as well, and a leaf budget.
type constraint struct {
	tree      Level // LevelNone, LevelLeaf or LevelSpine
	block     bool
	maxLeaves int // 0: no limit
}

// with adds a level: leaf is tighter than spine; block is orthogonal.
func (c constraint) with(l Level) constraint {
	switch l {
	case LevelLeaf:
		c.tree = LevelLeaf
	case LevelSpine:
		if c.tree != LevelLeaf {
			c.tree = LevelSpine
		}
	case LevelBlock:
		c.block = true
	}
	return c
}

func (c constraint) withMaxLeaves(n int) constraint {
	if c.maxLeaves == 0 || n < c.maxLeaves {
		c.maxLeaves = n
	}
	return c
}

// candidate is one way to place the gang, ranked by better.
type candidate struct {
	scope int32 // tree search: the switch whose leaves are used
	block int32 // block search: the block, else -1
	// picks are the chosen leaves and how many nodes each gives; nil
	// means greedyLeaves over scope's leaves, chosen when materialized.
	leaves    int   // leaf switches used
	level     int32 // highest switch level crossed (0 within one leaf)
	frag      frag
	cnt, gpus int32 // eligible nodes and their free GPUs in the scope
	tie       uint64
	picks     []leafTake
}

// frag is what a placement costs the cluster's whole domains, fewer
// first: the idle leaves, idle spines and idle nodes it breaks into (a
// gang that needs a whole leaf or node then finds one fewer), and the
// idle eligible nodes of the domains it uses (when it must break one,
// break the leaf that has the fewest, keeping the others whole). This is
// best fit by domain, as Slurm's topology/tree and KAI's bin-packing do.
type frag struct {
	leaves, spines, nodes, idle int32
}

func (a frag) compare(b frag) int {
	return cmp.Or(cmp.Compare(a.leaves, b.leaves), cmp.Compare(a.spines, b.spines),
		cmp.Compare(a.nodes, b.nodes), cmp.Compare(a.idle, b.idle))
}

type leafTake struct {
	leaf int32
	take int
	// cnt and eidle are the leaf's eligible and idle eligible nodes (in
	// the candidate's block, for block candidates), for fragOf.
	cnt, eidle int32
}

// better ranks candidates: fewest leaves, then lowest level crossed, then
// the fewest whole domains broken (frag), then best fit (the tightest
// scope: fewest eligible nodes, fewest free GPUs), then the seeded
// tie-break.
func better(a, b candidate) bool {
	if a.leaves != b.leaves {
		return a.leaves < b.leaves
	}
	if a.level != b.level {
		return a.level < b.level
	}
	if c := a.frag.compare(b.frag); c != 0 {
		return c < 0
	}
	if a.cnt != b.cnt {
		return a.cnt < b.cnt
	}
	if a.gpus != b.gpus {
		return a.gpus < b.gpus
	}
	return a.tie < b.tie
}

// fragOf is the frag of picks: within a leaf the nodes with the fewest
// free GPUs go first (materialize), so a pick breaks into idle nodes only
// past the leaf's busy eligible ones.
func (s *searcher) fragOf(picks []leafTake) frag {
	e, x := s.e, s.x
	var f frag
	var spines []int32
	for _, pk := range picks {
		if e.whole(pk.leaf) {
			f.leaves++
		}
		if sp := x.spineOf[pk.leaf]; sp > 0 && sp != pk.leaf && e.whole(sp) && !slices.Contains(spines, sp) {
			spines = append(spines, sp)
			f.spines++
		}
		f.nodes += max(0, int32(pk.take)-(pk.cnt-pk.eidle))
		f.idle += pk.eidle
	}
	return f
}

// searcher runs searches over one evaluation.
type searcher struct {
	e    *evaluation
	x    *index
	n    int // nodes wanted
	seed uint64
	buf  []int32
}

// newSearcher searches e for n nodes. n is passed, not read from the
// evaluation's request: capacity evaluations are cached by per-node shape
// and shared by requests of any node count.
func newSearcher(e *evaluation, n int, seed uint64) *searcher {
	return &searcher{e: e, x: e.cs.idx, n: n, seed: seed}
}

// choice is a search's answer: the nodes (snapshot indices, in rank
// order) and the placement's quality.
type choice struct {
	nodes  []int32
	leaves int
	level  int32
}

// search finds the best placement under con, or reports false.
func (s *searcher) search(con constraint) (choice, bool) {
	c, ok := s.best(con)
	if !ok || (con.maxLeaves > 0 && c.leaves > con.maxLeaves) {
		return choice{}, false
	}
	return s.materialize(c), true
}

// best finds the best candidate under con, ignoring maxLeaves: the search
// minimises leaves first, so if its answer is over budget, so is every
// other.
func (s *searcher) best(con constraint) (candidate, bool) {
	e, x := s.e, s.x
	var best candidate
	found := false
	consider := func(c candidate, ok bool) {
		if ok && (!found || better(c, best)) {
			best, found = c, true
		}
	}
	if e.eligible() < s.n {
		return best, false
	}
	switch {
	case con.block:
		for b := range x.blocks {
			s.blockCandidates(int32(b), con.tree, consider)
		}
	case con.tree == LevelLeaf:
		for _, leaf := range x.leafSeq {
			if int(e.cnt[leaf]) >= s.n {
				consider(s.oneLeaf(s.leafCandOf(leaf)), true)
			}
		}
	case con.tree == LevelSpine:
		for k, d := range x.spineDoms {
			consider(s.spineCandidate(d, x.spineLvs[k]))
		}
	default:
		consider(s.bestInSubtree(0))
	}
	return best, found
}

// leafCandOf is a leaf as the tree search sees it.
func (s *searcher) leafCandOf(leaf int32) leafCand {
	e := s.e
	return leafCand{leaf: leaf, cnt: e.cnt[leaf], gpus: e.gpus[leaf], eidle: e.eidle[leaf], whole: e.whole(leaf),
		tie: mix(s.seed, s.x.sw[leaf].hash)}
}

// oneLeaf places the whole gang on leaf c. It leaves picks nil (no
// allocation per leaf the search looks at); bestAmong sets them.
func (s *searcher) oneLeaf(c leafCand) candidate {
	e := s.e
	f := frag{nodes: max(0, int32(s.n)-(c.cnt-c.eidle)), idle: c.eidle}
	if c.whole {
		f.leaves = 1
	}
	if sp := s.x.spineOf[c.leaf]; sp > 0 && sp != c.leaf && e.whole(sp) {
		f.spines = 1
	}
	return candidate{scope: c.leaf, block: -1, leaves: 1, frag: f, cnt: c.cnt, gpus: c.gpus, tie: c.tie}
}

// scopeCandidate places the gang on k leaves beneath switch sw. Its
// leaves are chosen when it is materialized (greedyLeaves, which takes
// partly used leaves before whole ones): choosing them for every switch
// the search visits doubled a decision's time at 10,000 nodes, so scopes
// of several leaves are ranked without frag.
func (s *searcher) scopeCandidate(sw int32, k int) candidate {
	info := &s.x.sw[sw]
	return candidate{
		scope: sw, block: -1, leaves: k, level: info.level,
		cnt: s.e.cnt[sw], gpus: s.e.gpus[sw], tie: mix(s.seed, info.hash),
	}
}

// minLeaves is the fewest leaves under sw that together hold n eligible
// nodes (largest leaves first), or -1 when sw holds fewer than n.
func (s *searcher) minLeaves(sw int32) int {
	e, x := s.e, s.x
	if int(e.cnt[sw]) < s.n {
		return -1
	}
	info := &x.sw[sw]
	s.buf = s.buf[:0]
	for _, leaf := range x.leafSeq[info.lo:info.hi] {
		if c := e.cnt[leaf]; c > 0 {
			s.buf = append(s.buf, c)
		}
	}
	slices.Sort(s.buf)
	sum := 0
	for i := len(s.buf) - 1; i >= 0; i-- {
		sum += int(s.buf[i])
		if sum >= s.n {
			return len(s.buf) - i
		}
	}
	return -1 // unreachable: cnt[sw] >= n
}

// bestInSubtree finds, under root, the fewest leaves that hold the gang
// and then the lowest switch whose subtree achieves that count: a top-down
// walk that skips every subtree holding fewer than n eligible nodes and
// every subtree that needs more leaves than the best (a subtree never needs
// fewer leaves than its parent).
func (s *searcher) bestInSubtree(root int32) (candidate, bool) {
	e, x := s.e, s.x
	k := s.minLeaves(root)
	if k < 0 {
		return candidate{}, false
	}
	var best candidate
	found := false
	if k == 1 {
		info := &x.sw[root]
		for _, leaf := range x.leafSeq[info.lo:info.hi] {
			if int(e.cnt[leaf]) < s.n {
				continue
			}
			if c := s.oneLeaf(s.leafCandOf(leaf)); !found || better(c, best) {
				best, found = c, true
			}
		}
		return best, found
	}
	stack := []int32{root}
	for len(stack) > 0 {
		sw := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if int(e.cnt[sw]) < s.n || x.sw[sw].level == 0 {
			continue
		}
		if sw != root && s.minLeaves(sw) != k {
			continue
		}
		if c := s.scopeCandidate(sw, k); !found || better(c, best) {
			best, found = c, true
		}
		stack = append(stack, x.sw[sw].children...)
	}
	return best, found
}

// spineCandidate places the gang on the given leaves, all children of the
// spine d (or d itself, a parentless leaf).
func (s *searcher) spineCandidate(d int32, leaves []int32) (candidate, bool) {
	var cands []leafCand
	for _, leaf := range leaves {
		if s.e.cnt[leaf] > 0 {
			cands = append(cands, s.leafCandOf(leaf))
		}
	}
	return s.bestAmong(cands)
}

// blockCandidates offers, for one block, the best way to place the gang
// within each of its tree partitions (the whole block; or per leaf, or per
// spine, when the tree level is constrained too).
func (s *searcher) blockCandidates(b int32, tree Level, consider func(candidate, bool)) {
	e, x := s.e, s.x
	type agg struct{ cnt, gpus, eidle int32 }
	perLeaf := map[int32]*agg{}
	var leaves []int32
	for _, i := range x.blocks[b].nodes {
		if !e.elig[i] {
			continue
		}
		leaf := x.leafOf[i]
		a := perLeaf[leaf]
		if a == nil {
			a = &agg{}
			perLeaf[leaf] = a
			leaves = append(leaves, leaf)
		}
		a.cnt++
		a.gpus += e.free[i]
		if e.idleNode[i] {
			a.eidle++
		}
	}
	part := func(leaf int32) int32 {
		switch tree {
		case LevelLeaf:
			return leaf
		case LevelSpine:
			return x.spineOf[leaf]
		}
		return 0
	}
	slices.Sort(leaves)
	byPart := map[int32][]leafCand{}
	var parts []int32
	for _, leaf := range leaves {
		p := part(leaf)
		if _, ok := byPart[p]; !ok {
			parts = append(parts, p)
		}
		a := perLeaf[leaf]
		byPart[p] = append(byPart[p], leafCand{leaf: leaf, cnt: a.cnt, gpus: a.gpus, eidle: a.eidle,
			whole: e.whole(leaf), tie: mix(s.seed, x.sw[leaf].hash)})
	}
	for _, p := range parts {
		if c, ok := s.bestAmong(byPart[p]); ok {
			c.block = b
			c.tie = mix(s.seed, hashString(x.blocks[b].name)+uint64(p))
			consider(c, true)
		}
	}
}

// bestAmong is bestInSubtree for an arbitrary set of leaves (those of a
// block, or of a spine domain): the fewest leaves of the set that hold the
// gang, then the lowest switch above a subset achieving that, then best
// fit. Sets are small, so it walks each leaf's ancestors.
func (s *searcher) bestAmong(cands []leafCand) (candidate, bool) {
	x := s.x
	var cnt, gpus int32
	for _, c := range cands {
		cnt += c.cnt
		gpus += c.gpus
	}
	if int(cnt) < s.n {
		return candidate{}, false
	}
	k := minLeavesOf(cands, s.n)
	var best candidate
	found := false
	if k == 1 {
		for _, c := range cands {
			if int(c.cnt) < s.n {
				continue
			}
			if cand := s.oneLeaf(c); !found || better(cand, best) {
				best, found = cand, true
				best.picks = []leafTake{{leaf: c.leaf, take: s.n, cnt: c.cnt, eidle: c.eidle}}
			}
		}
		return best, found
	}
	under := map[int32][]leafCand{}
	var ancestors []int32
	for _, c := range cands {
		for a := x.sw[c.leaf].parent; a >= 0; a = x.sw[a].parent {
			if _, ok := under[a]; !ok {
				ancestors = append(ancestors, a)
			}
			under[a] = append(under[a], c)
		}
	}
	slices.Sort(ancestors)
	for _, a := range ancestors {
		set := under[a]
		if minLeavesOf(set, s.n) != k {
			continue
		}
		picks := greedyLeaves(set, s.n, k)
		c := candidate{block: -1, leaves: k, level: x.sw[a].level, frag: s.fragOf(picks), tie: mix(s.seed, x.sw[a].hash), picks: picks}
		for _, l := range set {
			c.cnt += l.cnt
			c.gpus += l.gpus
		}
		if !found || better(c, best) {
			best, found = c, true
		}
	}
	return best, found
}

type leafCand struct {
	leaf             int32
	cnt, gpus, eidle int32
	whole            bool // every node of the leaf idle (not only the eligible)
	tie              uint64
}

func minLeavesOf(cands []leafCand, n int) int {
	counts := make([]int, len(cands))
	for i, c := range cands {
		counts[i] = int(c.cnt)
	}
	slices.Sort(counts)
	sum := 0
	for i := len(counts) - 1; i >= 0; i-- {
		sum += counts[i]
		if sum >= n {
			return len(counts) - i
		}
	}
	return -1
}

// greedyLeaves picks k leaves holding n eligible nodes, best fit: slot by
// slot, the smallest (then not whole, then most used) leaf that still lets
// the remaining slots be filled by the largest leaves left. Small, partly
// used leaves are emptied first; large whole leaves stay free for large
// gangs. Each pick says how many nodes to take from it: all, except from
// the last.
func greedyLeaves(cands []leafCand, n, k int) []leafTake {
	cands = slices.Clone(cands)
	slices.SortFunc(cands, func(a, b leafCand) int {
		return cmp.Or(cmp.Compare(b.cnt, a.cnt), compareBool(b.whole, a.whole), cmp.Compare(b.gpus, a.gpus), cmp.Compare(b.tie, a.tie))
	})
	var picks []leafTake
	need := n
	for slot := 0; slot < k && need > 0; slot++ {
		r := k - slot
		top := func(m int) int {
			t := 0
			for i := 0; i < m && i < len(cands); i++ {
				t += int(cands[i].cnt)
			}
			return t
		}
		topR1, topR := top(r-1), top(r)
		pick := 0
		for p := len(cands) - 1; p >= 0; p-- {
			other := topR1
			if p < r-1 {
				other = topR - int(cands[p].cnt)
			}
			if int(cands[p].cnt)+other >= need {
				pick = p
				break
			}
		}
		take := min(int(cands[pick].cnt), need)
		picks = append(picks, leafTake{leaf: cands[pick].leaf, take: take, cnt: cands[pick].cnt, eidle: cands[pick].eidle})
		need -= take
		cands = slices.Delete(cands, pick, pick+1)
	}
	return picks
}

// materialize turns a candidate into nodes: its leaves (picks),
// and in each leaf the eligible nodes with the fewest free GPUs first.
func (s *searcher) materialize(c candidate) choice {
	e, x := s.e, s.x
	picks := c.picks
	if picks == nil {
		info := &x.sw[c.scope]
		var cands []leafCand
		for _, leaf := range x.leafSeq[info.lo:info.hi] {
			if e.cnt[leaf] > 0 {
				cands = append(cands, s.leafCandOf(leaf))
			}
		}
		picks = greedyLeaves(cands, s.n, c.leaves)
	}
	out := choice{leaves: len(picks), level: c.level}
	for _, pk := range picks {
		var nodes []int32
		for _, i := range x.sw[pk.leaf].nodes {
			if e.elig[i] && (c.block < 0 || x.blockOf[i] == c.block) {
				nodes = append(nodes, i)
			}
		}
		slices.SortFunc(nodes, func(a, b int32) int {
			return cmp.Or(cmp.Compare(e.free[a], e.free[b]),
				cmp.Compare(mix(s.seed, x.nodes[a].hash), mix(s.seed, x.nodes[b].hash)), cmp.Compare(a, b))
		})
		out.nodes = append(out.nodes, nodes[:pk.take]...)
	}
	// Rank order: leaves in tree order, nodes by name within a leaf, so
	// neighbouring ranks share a switch.
	slices.SortFunc(out.nodes, func(a, b int32) int {
		return cmp.Or(cmp.Compare(x.leafOf[a], x.leafOf[b]), cmp.Compare(x.fp[a].name, x.fp[b].name))
	})
	if len(out.nodes) == 1 {
		out.level = -1
	}
	return out
}

func compareBool(a, b bool) int {
	switch {
	case a == b:
		return 0
	case a:
		return 1
	}
	return -1
}
