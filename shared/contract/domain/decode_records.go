package domain

import (
	"fmt"
	"time"

	"github.com/lockstep-dev/lockstep/shared/contract/jobspec"
)

// Decoders of the records services read from etcd: anyone with access to
// etcd can write them, so they are checked like messages.

// DecodeAssignment decodes and checks one node's part of a gang, as the
// agent reads it.
func DecodeAssignment(data []byte) (Assignment, error) {
	return decode("assignment", data, func(c *checker, a *Assignment) {
		c.jobID("jobId", a.JobID)
		c.attempt("attempt", a.Attempt)
		c.notNegative("epoch", a.Epoch)
		c.node("node", a.Node)
		c.between("nnodes", a.NNodes, 1, MaxNodes)
		c.between("nodeRank", a.NodeRank, 0, a.NNodes-1)
		c.between("worldSize", a.WorldSize, 1, MaxNodes*maxRanksPerNode)
		c.required("masterAddr", a.MasterAddr)
		c.label("masterAddr", a.MasterAddr)
		c.between("masterPort", a.MasterPort, 1, 65535)
		// The node's part of a placement; the node's GPUs are its ranks'.
		c.nodeRanks(func() string { return "ranks" }, a.Ranks, nil, a.WorldSize, map[int]bool{})
		c.argv("command", a.Command)
		c.env("env", a.Env)
		c.between("restartCount", a.RestartCount, 0, MaxAttempt)
		if a.Resume != nil {
			c.checkpointRef("resume", *a.Resume)
		}
		c.path("checkpointDir", a.CheckpointDir)
		c.path("workdir", a.Workdir)
		c.text("traceParent", a.TraceParent, 256)
		c.oneOf("gpuBind", a.GPUBind, "", "none", "closest")
		c.arrayTask("array", a.JobID, a.Array)
		c.text("jobName", a.JobName, 1024)
		c.text("queue", a.Queue, 256)
		if len(a.Nodes) > 0 {
			// The gang's nodes by node rank: this node at its own rank.
			c.between("nodes", len(a.Nodes), a.NNodes, a.NNodes)
			seen := map[string]bool{}
			for i, n := range a.Nodes {
				c.node(fmt.Sprintf("nodes.%d", i), n)
				if seen[n] {
					c.fail(fmt.Sprintf("nodes.%d", i), "%q is named twice", n)
				}
				seen[n] = true
			}
			if a.NodeRank < len(a.Nodes) && a.Nodes[a.NodeRank] != a.Node {
				c.fail("nodes", "node rank %d is %q, not this assignment's node %q", a.NodeRank, a.Nodes[a.NodeRank], a.Node)
			}
		}
		c.between("cpusPerTask", a.CPUsPerTask, 0, 1<<16)
		if b := a.Batch; b != nil {
			c.required("batch.script", b.Script)
			c.text("batch.script", b.Script, jobspec.MaxSpecBytes)
			c.text("batch.output", b.Output, 4096)
			c.text("batch.error", b.Error, 4096)
		}
		if ct := a.Container; ct != nil {
			for _, fe := range ct.Check("container") {
				c.fail(fe.Field, "%s", fe.Message)
			}
		}
		if a.PullOnly && a.Container == nil {
			c.fail("pullOnly", "set on an assignment without a container")
		}
	})
}

// DecodeAllocation decodes and checks a gang's allocation record.
func DecodeAllocation(data []byte) (Allocation, error) {
	return decode("allocation", data, func(c *checker, a *Allocation) {
		c.jobID("jobId", a.JobID)
		c.attempt("attempt", a.Attempt)
		c.oneOf("state", string(a.State), string(AllocReserved), string(AllocRunning))
		c.placement("placement", a.Placement)
		c.notNegative("lease", a.Lease)
		in := map[string]bool{}
		for _, np := range a.Placement.Nodes {
			in[np.Node] = true
		}
		eachKey(c, a.Started, func(c *checker, n string, _ bool) { c.member("started", n, in) })
		eachKey(c, a.Exited, func(c *checker, n string, code int) {
			c.member("exited", n, in)
			if code < -1 || code > 255 {
				c.between("exited."+n, code, -1, 255)
			}
		})
		whole := map[string]bool{}
		for _, n := range a.WholeNodes {
			c.member("wholeNodes", n, in)
			if whole[n] {
				c.fail("wholeNodes", "%s is listed twice", quote(n))
			}
			whole[n] = true
		}
		eachKey(c, a.NodeEpochs, func(c *checker, n string, epoch int64) {
			c.member("nodeEpochs", n, in)
			if epoch < 0 {
				c.notNegative("nodeEpochs."+n, epoch)
			}
		})
		c.text("traceParent", a.TraceParent, 256)
		if a.Pull != nil {
			c.pullPhase("pull", *a.Pull, in)
		}
	})
}

// pullPhase checks an allocation's pull phase: a valid image, a timeout
// the spec allows, reports only from the placement's nodes, in range.
func (c *checker) pullPhase(field string, p PullPhase, in map[string]bool) {
	if !jobspec.ValidImage(p.Image) {
		c.fail(field+".image", "%s is not an image reference", quote(p.Image))
	}
	if p.Timeout <= 0 || p.Timeout > jobspec.MaxPullTimeout {
		c.fail(field+".timeout", "%s is not between 0 and %s", p.Timeout, jobspec.MaxPullTimeout)
	}
	eachKey(c, p.Nodes, func(c *checker, n string, np NodePull) {
		c.member(field+".nodes", n, in)
		if np.Took < 0 || np.Took > time.Duration(MaxPullMillis)*time.Millisecond {
			c.fail(field+".nodes."+n+".took", "%s is not between 0 and a day", np.Took)
		}
		c.upTo(field+".nodes."+n+".bytes", np.Bytes, MaxImageBytes)
	})
}

// DecodeNode decodes and checks an agent's node registration.
func DecodeNode(data []byte) (Node, error) {
	return decode("node", data, func(c *checker, n *Node) {
		c.node("name", n.Name)
		c.required("addr", n.Addr)
		c.label("addr", n.Addr)
		c.between("gpus", n.GPUs, 0, MaxGPUIndex+1)
		c.between("cpus", n.CPUs, 0, MaxCPUIndex+1)
		c.label("leaf", n.Leaf)
		c.label("spine", n.Spine)
		c.label("block", n.Block)
		c.notNegative("epoch", n.Epoch)
		c.text("gpuModel", n.GPUModel, MaxNameBytes)
		if n.ContainerRuntime != "" && n.ContainerRuntime != ContainerRuntimeDocker {
			c.fail("containerRuntime", "%q is not a runtime (%q or none)", n.ContainerRuntime, ContainerRuntimeDocker)
		}
		c.upTo("gpuMemoryMiB", n.GPUMemoryMiB, maxMemoryMiB)
		c.faults("unhealthy", n.Unhealthy, n.GPUs)
		c.distances("gpuDistance", n.GPUDistance, n.GPUs)
		if len(n.NUMA) > 1024 {
			c.fail("numa", "%d NUMA nodes, more than 1024", len(n.NUMA))
			return
		}
		gpus, cpus := map[int]bool{}, map[int]bool{}
		for i, d := range n.NUMA {
			f := fmt.Sprintf("numa.%d", i)
			c.between(f+".id", d.ID, 0, 1023)
			c.upTo(f+".memoryMiB", d.MemoryMiB, maxMemoryMiB)
			if len(d.NICs) > 64 {
				c.fail(f+".nics", "%d NICs, more than 64", len(d.NICs))
			}
			for k, nic := range d.NICs {
				c.required(fmt.Sprintf("%s.nics.%d", f, k), nic)
				c.label(fmt.Sprintf("%s.nics.%d", f, k), nic)
			}
			for k, g := range d.GPUs {
				switch {
				case g < 0 || g >= n.GPUs:
					c.fail(fmt.Sprintf("%s.gpus.%d", f, k), "GPU %d is not between 0 and %d", g, n.GPUs-1)
				case gpus[g]:
					c.fail(fmt.Sprintf("%s.gpus.%d", f, k), "GPU %d is in two NUMA nodes", g)
				}
				gpus[g] = true
			}
			for k, x := range d.CPUs {
				switch {
				case x < 0 || x > MaxCPUIndex:
					c.fail(fmt.Sprintf("%s.cpus.%d", f, k), "core %d is not between 0 and %d", x, MaxCPUIndex)
				case cpus[x]:
					c.fail(fmt.Sprintf("%s.cpus.%d", f, k), "core %d is in two NUMA nodes", x)
				}
				cpus[x] = true
			}
		}
	})
}

// DecodeClaim decodes and checks a GPU or port claim.
func DecodeClaim(data []byte) (Claim, error) {
	return decode("claim", data, func(c *checker, cl *Claim) {
		c.jobID("jobId", cl.JobID)
		c.attempt("attempt", cl.Attempt)
	})
}

// maxMemoryMiB bounds memory sizes: 1 PiB, far past any one machine.
const maxMemoryMiB = 1 << 30

// faults checks a node's withdrawn GPUs: each a GPU of the node, once, with
// a reason.
func (c *checker) faults(field string, fs []GPUFault, gpus int) {
	seen := map[int]bool{}
	for i, f := range fs {
		at := fmt.Sprintf("%s.%d", field, i)
		switch {
		case f.GPU < 0 || f.GPU >= gpus:
			c.fail(at+".gpu", "GPU %d is not between 0 and %d", f.GPU, gpus-1)
		case seen[f.GPU]:
			c.fail(at+".gpu", "GPU %d is listed twice", f.GPU)
		}
		seen[f.GPU] = true
		c.required(at+".reason", f.Reason)
		c.text(at+".reason", f.Reason, MaxReasonBytes)
	}
}

// distances checks a GPU distance matrix: none, or one row and column
// per GPU, zero exactly on the diagonal, symmetric, each a known link.
func (c *checker) distances(field string, d [][]int, gpus int) {
	if d == nil {
		return
	}
	if len(d) != gpus {
		c.fail(field, "%d rows for %d GPUs", len(d), gpus)
		return
	}
	for a, row := range d {
		if len(row) != gpus {
			c.fail(fmt.Sprintf("%s.%d", field, a), "%d columns for %d GPUs", len(row), gpus)
			return
		}
	}
	for a, row := range d {
		for b, v := range row {
			at := fmt.Sprintf("%s.%d.%d", field, a, b)
			switch {
			case v < LinkSame || v > LinkSys:
				c.fail(at, "%d is not between %d and %d", v, LinkSame, LinkSys)
			case (v == LinkSame) != (a == b):
				c.fail(at, "%d: distance 0 is a GPU to itself, and only that", v)
			case d[b][a] != v:
				c.fail(at, "%d, but %d the other way", v, d[b][a])
			}
		}
	}
}

// notNegative checks an etcd lease ID (a registration's epoch, 0 before
// one; a reservation's lease) or a checkpoint step.
func (c *checker) notNegative(field string, n int64) {
	if n < 0 {
		c.fail(field, "%d is negative", n)
	}
}

func (c *checker) member(field, node string, in map[string]bool) {
	if !in[node] {
		c.fail(field, "%s is not a node of the placement", quote(node))
	}
}

func (c *checker) checkpointRef(field string, r CheckpointRef) {
	c.notNegative(field+".step", r.Step)
	c.between(field+".rank", r.Rank, 0, MaxNodes*maxRanksPerNode)
	c.attempt(field+".attempt", r.Attempt)
	c.ckptPath(field+".path", r.Path)
}
