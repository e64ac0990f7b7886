package domain

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/lockstep-dev/lockstep/shared/contract/jobspec"
	"github.com/lockstep-dev/lockstep/shared/contract/validate"
)

// Decoders of the messages services send each other.

// DecodeProposal decodes and checks placement's proposal. Its placement is
// checked for shape only; gang still compares it against the job record
// and the cluster.
func DecodeProposal(data []byte) (Proposal, error) {
	return decode("proposal", data, func(c *checker, p *Proposal) {
		c.jobID("jobId", p.JobID)
		c.attempt("attempt", p.Attempt)
		c.placement("placement", p.Placement)
		c.text("note", p.Note, MaxReasonBytes)
	})
}

// DecodeReport decodes and checks an agent's report.
func DecodeReport(data []byte) (Report, error) {
	return decode("report", data, func(c *checker, r *Report) {
		c.jobID("jobId", r.JobID)
		c.attempt("attempt", r.Attempt)
		c.node("node", r.Node)
		kinds := make([]string, len(ReportKinds))
		for i, k := range ReportKinds {
			kinds[i] = string(k)
		}
		c.oneOf("kind", string(r.Kind), kinds...)
		c.between("rank", r.Rank, 0, MaxNodes*maxRanksPerNode)
		// 0–255 from a process, -1 from Go when there is no status.
		c.between("exitCode", r.ExitCode, -1, 255)
		c.text("reason", r.Reason, MaxReasonBytes)
		c.pulled(r)
	})
}

// pulled checks a report's pull fields: in range on a pulled report,
// absent on any other; a pull failure says why.
func (c *checker) pulled(r *Report) {
	if r.Kind != ReportPulled {
		if r.PullMillis != 0 || r.ImageBytes != 0 || r.Pulled {
			c.fail("pullMs", "set on a %s report; only pulled reports carry pull fields", quote(string(r.Kind)))
		}
		if r.Kind == ReportPullFailed {
			c.required("reason", r.Reason)
		}
		return
	}
	c.upTo("pullMs", r.PullMillis, MaxPullMillis)
	c.upTo("imageBytes", r.ImageBytes, MaxImageBytes)
}

// DecodeCancelRequest decodes and checks a cancel request.
func DecodeCancelRequest(data []byte) (CancelRequest, error) {
	return decode("cancel request", data, func(c *checker, r *CancelRequest) {
		c.jobID("jobId", r.JobID)
		c.text("reason", r.Reason, MaxReasonBytes)
	})
}

// DecodeDrainRequest decodes and checks a drain request.
func DecodeDrainRequest(data []byte) (DrainRequest, error) {
	return decode("drain request", data, func(c *checker, r *DrainRequest) {
		c.jobID("jobId", r.JobID)
		c.drainKind("kind", r.Kind)
		c.drainThen("then", r.Then)
		c.text("reason", r.Reason, MaxReasonBytes)
	})
}

// DecodeCheckpointAck decodes and checks a rank's checkpoint ack.
func DecodeCheckpointAck(data []byte) (CheckpointAck, error) {
	return decode("checkpoint ack", data, func(c *checker, a *CheckpointAck) {
		c.jobID("jobId", a.JobID)
		c.attempt("attempt", a.Attempt)
		c.between("rank", a.Rank, 0, MaxNodes*maxRanksPerNode)
		c.notNegative("step", a.Step)
		c.ckptPath("path", a.Path)
	})
}

// DecodeAckReply decodes and checks drain's answer to a checkpoint ack.
func DecodeAckReply(data []byte) (AckReply, error) {
	return decode("ack reply", data, func(c *checker, r *AckReply) {
		c.text("error", r.Error, MaxReasonBytes)
		if r.OK && r.Error != "" {
			c.fail("error", "set on a reply that says ok")
		}
	})
}

// DecodeNodeRequest decodes and checks an operator's node drain or resume.
func DecodeNodeRequest(data []byte) (NodeRequest, error) {
	return decode("node request", data, func(c *checker, r *NodeRequest) {
		c.node("node", r.Node)
		c.text("reason", r.Reason, MaxReasonBytes)
	})
}

func (c *checker) drainKind(field string, k DrainKind) {
	c.oneOf(field, string(k), string(DrainCancel), string(DrainCheckpoint), string(DrainPreempt), string(DrainNode), string(DrainTimeLimit))
}

func (c *checker) drainThen(field string, t DrainThen) {
	c.oneOf(field, string(t), string(ThenRequeue), string(ThenCancel), string(ThenTimeout))
}

// ckptPath checks where a rank says it wrote a checkpoint: the rank chose
// it (it may be relative to its working directory), so only its length
// and characters are checked.
func (c *checker) ckptPath(field, p string) {
	c.text(field, p, maxPathBytes)
	if hasControl(p) {
		c.fail(field, "%s has a control character", quote(p))
	}
}

// placement checks a placement's shape: 1–4096 distinct nodes, node ranks
// in order, each node's GPUs distinct and in range, its ranks' GPUs among
// them and held by one rank, ranks numbered 0…world-1 exactly once.
func (c *checker) placement(field string, p Placement) {
	if len(p.Nodes) == 0 || len(p.Nodes) > MaxNodes {
		c.fail(field+".nodes", "%d nodes, want 1 to %d", len(p.Nodes), MaxNodes)
		return
	}
	c.required(field+".masterAddr", p.MasterAddr)
	c.label(field+".masterAddr", p.MasterAddr)
	c.between(field+".masterPort", p.MasterPort, 1, 65535)
	if len(p.Leaves) > len(p.Nodes) {
		c.fail(field+".leaves", "%d leaves for %d nodes", len(p.Leaves), len(p.Nodes))
	}
	for i, l := range p.Leaves {
		if !validLabel(l) {
			c.label(at(field+".leaves", i), l)
		}
	}
	world := p.WorldSize()
	seenNode := make(map[string]bool, len(p.Nodes))
	// Sized for the usual gang, not for the ranks a hostile message claims.
	seenRank := make(map[int]bool, min(world, maxRanksPerNode))
	for i, np := range p.Nodes {
		// Field paths are built only for an error: a placement is checked
		// in every proposal, assignment and allocation record read, and
		// building each node's and rank's path up front was most of what
		// the check allocated.
		f := func(leaf string) string { return at(field+".nodes", i) + "." + leaf }
		if !ValidNodeName(np.Node) {
			c.node(f("node"), np.Node)
		}
		if seenNode[np.Node] {
			c.fail(f("node"), "%s appears twice", quote(np.Node))
		}
		seenNode[np.Node] = true
		if np.NodeRank != i {
			c.fail(f("nodeRank"), "%d, want %d (node ranks follow the node order)", np.NodeRank, i)
		}
		gpus := c.gpuSet(f("gpus"), np.GPUs)
		c.nodeRanks(func() string { return f("ranks") }, np.Ranks, gpus, world, seenRank)
	}
}

// gpuSet is a set of GPU indices: those in range as bits, any others (an
// error already reported, still counted as the map it replaces counted
// them) in a map made only then.
type gpuSet struct {
	bits [(MaxGPUIndex + 1) / 64]uint64
	out  map[int]bool
	n    int
}

func (s *gpuSet) has(g int) bool {
	if g < 0 || g > MaxGPUIndex {
		return s.out[g]
	}
	return s.bits[g/64]&(1<<(g%64)) != 0
}

func (s *gpuSet) add(g int) {
	switch {
	case s.has(g):
		return
	case g < 0 || g > MaxGPUIndex:
		if s.out == nil {
			s.out = map[int]bool{}
		}
		s.out[g] = true
	default:
		s.bits[g/64] |= 1 << (g % 64)
	}
	s.n++
}

// gpuSet checks a node's GPU indices as indices does, and returns them as
// a set.
func (c *checker) gpuSet(field string, xs []int) *gpuSet {
	set := &gpuSet{}
	c.distinct(field, xs, MaxGPUIndex, set)
	return set
}

// nodeRanks checks one node's ranks: 1–1024 of them, local ranks in
// order, ranks in [0, world) and not already in seen, each GPU in range,
// held by one rank and (when gpus is not nil) among the node's GPUs, every
// one of which some rank holds. field builds the ranks' field path, for
// an error.
func (c *checker) nodeRanks(field func() string, ranks []Rank, gpus *gpuSet, world int, seen map[int]bool) {
	if len(ranks) == 0 || len(ranks) > maxRanksPerNode {
		c.fail(field(), "%d ranks, want 1 to %d", len(ranks), maxRanksPerNode)
		return
	}
	var held gpuSet
	for j, r := range ranks {
		rf := func(leaf string) string { return at(field(), j) + "." + leaf }
		switch {
		case r.Rank < 0 || r.Rank >= world:
			c.fail(rf("rank"), "%d is not between 0 and %d", r.Rank, world-1)
		case seen[r.Rank]:
			c.fail(rf("rank"), "%d appears twice", r.Rank)
		}
		seen[r.Rank] = true
		if r.LocalRank != j {
			c.fail(rf("localRank"), "%d, want %d", r.LocalRank, j)
		}
		if len(r.GPUs) > MaxGPUIndex+1 {
			c.fail(rf("gpus"), "%d GPUs, more than %d", len(r.GPUs), MaxGPUIndex+1)
			continue
		}
		for k, g := range r.GPUs {
			switch {
			case g < 0 || g > MaxGPUIndex:
				c.fail(at(rf("gpus"), k), "%d is not between 0 and %d", g, MaxGPUIndex)
			case gpus != nil && !gpus.has(g):
				c.fail(at(rf("gpus"), k), "GPU %d is not among the node's", g)
			case held.has(g):
				c.fail(at(rf("gpus"), k), "GPU %d is held by two ranks", g)
			}
			held.add(g)
		}
		if len(r.CPUs) > 0 {
			c.indices(rf("cpus"), r.CPUs, MaxCPUIndex)
		}
	}
	if gpus != nil && held.n != gpus.n {
		c.fail(field(), "the node claims %d GPUs, its ranks hold %d", gpus.n, held.n)
	}
}

// indices checks a list of distinct device or core indices in [0, most]
// and returns them as a set.
func (c *checker) indices(field string, xs []int, most int) map[int]bool {
	set := mapSet(make(map[int]bool, len(xs)))
	c.distinct(field, xs, most, set)
	return set
}

// mapSet is a set of indices of any range.
type mapSet map[int]bool

func (s mapSet) has(x int) bool { return s[x] }
func (s mapSet) add(x int)      { s[x] = true }

// distinct checks a list of distinct indices in [0, most], adding each
// (out of range ones too) to set.
func (c *checker) distinct(field string, xs []int, most int, set interface {
	has(int) bool
	add(int)
}) {
	if len(xs) > most+1 {
		c.fail(field, "%d entries, more than the %d allowed", len(xs), most+1)
		return
	}
	for k, x := range xs {
		switch {
		case x < 0 || x > most:
			c.fail(at(field, k), "%d is not between 0 and %d", x, most)
		case set.has(x):
			c.fail(at(field, k), "%d appears twice", x)
		}
		set.add(x)
	}
}

// argv checks a command: 1–1024 arguments, the first non-empty, none
// holding a NUL (no process can receive one).
func (c *checker) argv(field string, argv []string) {
	if len(argv) == 0 || len(argv) > 1024 || argv[0] == "" {
		c.fail(field, "want 1 to 1024 arguments, the first non-empty")
		return
	}
	for i, a := range argv {
		if len(a) > 65536 || strings.IndexByte(a, 0) >= 0 {
			c.fail(fmt.Sprintf("%s.%d", field, i), "longer than 65536 bytes or holds a NUL")
		}
	}
}

// env checks environment variables: names as in the spec, values bounded
// and NUL-free.
func (c *checker) env(field string, env map[string]string) {
	if len(env) > 1024 {
		c.fail(field, "%d variables, more than 1024", len(env))
		return
	}
	eachKey(c, env, func(c *checker, k, v string) {
		if !jobspec.ValidEnvName(k) {
			c.fail(field, "%s is not a variable name", quote(k))
		}
		if len(v) > 65536 || strings.IndexByte(v, 0) >= 0 {
			c.fail(field+"."+k, "longer than 65536 bytes or holds a NUL")
		}
	})
}

func sortedKeys[K cmp.Ordered, V any](m map[K]V) []K { return slices.Sorted(maps.Keys(m)) }

// eachKey runs check on every entry of m, in map order while none fails
// and again in key order, for c, when one does: the errors then list in a
// stable order, and a well-formed record (every record a cache or a
// follower decodes, many times a job) is not sorted. check must do
// nothing but check.
func eachKey[K cmp.Ordered, V any](c *checker, m map[K]V, check func(c *checker, k K, v V)) {
	var probe checker
	for k, v := range m {
		if check(&probe, k, v); probe.fes != nil {
			break
		}
	}
	if probe.fes == nil {
		return
	}
	for _, k := range sortedKeys(m) {
		check(c, k, m[k])
	}
}

// at is field.i, the path of a list's element.
func at(field string, i int) string { return field + "." + strconv.Itoa(i) }

// CheckPlacement checks a placement's shape (see DecodeProposal) for
// decoders outside this package; nil means valid.
func CheckPlacement(field string, p Placement) []validate.FieldError {
	var c checker
	c.placement(field, p)
	return c.fes
}
