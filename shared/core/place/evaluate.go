package place

// evaluation is one pass of the filter stack over every node plus the
// per-switch aggregates the search runs on: for each switch, how many
// eligible nodes (nodes that can host one member) are beneath it and how
// many free GPUs they have. It is read-only once built.
type evaluation struct {
	cs   *cycleState
	elig []bool
	free []int32 // per node: free GPUs, the best-fit key
	cnt  []int32 // per switch: eligible nodes beneath
	gpus []int32 // per switch: free GPUs on those nodes
	// idle counts, per switch, the nodes beneath that are up with every
	// GPU free, eligible or not (whether a leaf is whole does not depend
	// on the request); eidle those of them that are eligible.
	idle, eidle []int32
	idleNode    []bool
	rejected    []int32 // per stack filter: nodes it rejected first
}

func evaluate(cs *cycleState) *evaluation {
	x := cs.idx
	n := len(cs.snap.Nodes)
	e, _ := x.evals.Get().(*evaluation)
	if e == nil || len(e.elig) != n || len(e.cnt) != len(x.sw) {
		e = &evaluation{
			elig:     make([]bool, n),
			free:     make([]int32, n),
			cnt:      make([]int32, len(x.sw)),
			gpus:     make([]int32, len(x.sw)),
			idle:     make([]int32, len(x.sw)),
			eidle:    make([]int32, len(x.sw)),
			idleNode: make([]bool, n),
			rejected: make([]int32, len(stack)),
		}
	} else {
		clear(e.elig)
		clear(e.free)
		clear(e.cnt)
		clear(e.gpus)
		clear(e.idle)
		clear(e.eidle)
		clear(e.idleNode)
		clear(e.rejected)
	}
	e.cs = cs
nodes:
	for i := range n {
		nv := &cs.snap.Nodes[i]
		idle := cs.capacity || (nv.Up && !nv.Drained && len(nv.Free) >= nv.Node.GPUs)
		if idle {
			e.idleNode[i] = true
			e.idle[x.leafOf[i]]++
		}
		for f, flt := range stack {
			if !flt.Filter(cs, i) {
				e.rejected[f]++
				continue nodes
			}
		}
		free := int32(len(cs.snap.Nodes[i].Free))
		if cs.capacity {
			free = int32(cs.snap.Nodes[i].Node.GPUs)
		}
		e.elig[i], e.free[i] = true, free
		leaf := x.leafOf[i]
		e.cnt[leaf]++
		e.gpus[leaf] += free
		if idle {
			e.eidle[leaf]++
		}
	}
	// Switches are numbered parents first, so one backward sweep sums
	// every subtree.
	for s := len(x.sw) - 1; s > 0; s-- {
		p := x.sw[s].parent
		e.cnt[p] += e.cnt[s]
		e.gpus[p] += e.gpus[s]
		e.idle[p] += e.idle[s]
		e.eidle[p] += e.eidle[s]
	}
	return e
}

// recycle returns a current-state evaluation's buffers to the index; e
// must not be used afterwards. Capacity evaluations are cached instead.
func (e *evaluation) recycle() {
	if !e.cs.capacity {
		x := e.cs.idx
		e.cs = nil
		x.evals.Put(e)
	}
}

// eligible is the number of nodes that can host a member.
func (e *evaluation) eligible() int { return int(e.cnt[0]) }

// capacityEval evaluates the request's shape on the snapshot's nodes as if
// all were up, undrained and idle: the "could it ever fit" view. It depends
// only on the index and the shape, so it is cached in the index.
func capacityEval(snap *Snapshot, x *index, req Request) *evaluation {
	k := req.Shape()
	x.mu.Lock()
	defer x.mu.Unlock()
	if e, ok := x.capCache[k]; ok {
		return e
	}
	e := evaluate(newCycleState(snap, x, req, true))
	if len(x.capCache) < 64 {
		x.capCache[k] = e
	}
	return e
}

// whole reports whether every node beneath switch sw is idle: breaking it
// costs a gang that needs the whole domain.
func (e *evaluation) whole(sw int32) bool {
	t := e.cs.idx.total[sw]
	return t > 0 && e.idle[sw] == t
}
