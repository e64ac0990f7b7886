package sim

import "slices"

// pending holds the waiting jobs in one FIFO per gang shape, so that a
// pass can look only at jobs that could start.
//
// A job whose shape does not fit the free GPUs now cannot start in this
// pass (a pass only takes GPUs), and under every policy here such a job
// changes nothing, except the first of them in the policy's order: under
// EASY backfill it is the job that gets the reservation (reservations
// never fail in a simulation: every node is up). The queue order is
// submission order within a shape (the job-size handicap depends on the
// shape only), so that job is the first waiting job of some blocked
// shape. So a pass is given, in submission order, the first Window waiting
// jobs of every shape that fits and the first waiting job of every shape
// that does not; with one queue and one priority this is the whole queue
// as far as any decision is concerned, up to the window.
type pending struct {
	byShape map[shapeKey]int
	queues  []shapeQueue
	cand    []int32
}

type shapeKey struct{ nodes, gpus int }

type shapeQueue struct {
	key     shapeKey
	ids     []int32
	head    int
	scanned int // prefix length the last candidates call covered
}

func (p *pending) push(e *engine, i int32) {
	j := &e.jobs[i]
	k := shapeKey{j.Nodes, j.GPUsPerNode}
	q, ok := p.byShape[k]
	if !ok {
		if p.byShape == nil {
			p.byShape = map[shapeKey]int{}
		}
		q = len(p.queues)
		p.byShape[k] = q
		p.queues = append(p.queues, shapeQueue{key: k})
	}
	p.queues[q].ids = append(p.queues[q].ids, i)
}

// candidates returns the jobs a pass considers, in submission order (a
// reused buffer): up to Window waiting jobs of each shape for which fits
// is true, and the first waiting job of each other shape.
func (p *pending) candidates(e *engine, fits func(shapeKey) bool) []int32 {
	p.cand = p.cand[:0]
	for qi := range p.queues {
		q := &p.queues[qi]
		q.scanned = 0
		if !fits(q.key) {
			for q.head < len(q.ids) && e.jobs[q.ids[q.head]].state != stWaiting {
				q.head++
			}
			if q.head < len(q.ids) {
				p.cand = append(p.cand, q.ids[q.head])
			}
			continue
		}
		n, k := 0, q.head
		for ; k < len(q.ids) && n < e.cfg.Window; k++ {
			if i := q.ids[k]; e.jobs[i].state == stWaiting {
				p.cand = append(p.cand, i)
				n++
			}
		}
		q.scanned = k - q.head
	}
	slices.Sort(p.cand)
	return p.cand
}

// prune drops the jobs that left the queues from the prefixes the last
// candidates call scanned.
func (p *pending) prune(e *engine) {
	for qi := range p.queues {
		q := &p.queues[qi]
		end := q.head + q.scanned
		w := end
		for k := end - 1; k >= q.head; k-- {
			if e.jobs[q.ids[k]].state == stWaiting {
				w--
				q.ids[w] = q.ids[k]
			}
		}
		q.head, q.scanned = w, 0
		if q.head > 1<<14 && q.head > len(q.ids)/2 {
			q.ids = append(q.ids[:0], q.ids[q.head:]...)
			q.head = 0
		}
	}
}

// freeNodes counts, for g = 0..maxFit, the nodes with at least g free GPUs.
func (e *engine) freeNodes() []int {
	if cap(e.atLeast) < e.maxFit+1 {
		e.atLeast = make([]int, e.maxFit+1)
	}
	c := e.atLeast[:e.maxFit+1]
	clear(c)
	for i := range e.snap.Nodes {
		c[len(e.snap.Nodes[i].Free)]++
	}
	for g := len(c) - 2; g >= 0; g-- {
		c[g] += c[g+1]
	}
	return c
}

// gangFits says whether a whole gang of the shape could fit the free GPUs.
func (e *engine) gangFits() func(shapeKey) bool {
	c := e.freeNodes()
	return func(k shapeKey) bool { return k.gpus < len(c) && c[k.gpus] >= k.nodes }
}

// podFits says whether one pod of the shape could.
func (e *engine) podFits() func(shapeKey) bool {
	c := e.freeNodes()
	return func(k shapeKey) bool { return k.gpus < len(c) && c[k.gpus] >= 1 }
}
