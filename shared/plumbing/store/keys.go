// Package store is Lockstep's etcd layer: the one key layout (this file),
// client construction, and the transactions shared by services.
//
// Layout (all under Prefix):
//
//	nodes/<node>              domain.Node, under the agent's lease (liveness)
//	inventory/<node>          domain.Node, no lease (capacity known even while down)
//	claims/<node>/<gpu>       domain.Claim, under the reservation lease until running
//	claims/<node>/all         domain.Claim of every GPU of the node (a gang holding
//	                          the whole node: one key, not one per GPU; see
//	                          ClaimKeys); it excludes every other claim on the node
//	ports/<addr>/<port>       domain.Claim for MASTER_PORT, same lifetime as GPU claims
//	alloc/<job>               domain.Allocation, same lifetime as claims
//	assign/<node>/<job>       domain.Assignment, same lifetime as claims
//	drains/<job>              domain.DrainRecord, no lease: a drain in progress
//	nodestate/<node>          domain.NodeState, no lease: an operator's drain of a node
//	running/<node>/<job>      Running, under the agent's node lease: some process
//	                          of the job's ranks is alive on the node (written
//	                          before the ranks start, deleted once their whole
//	                          trees are gone); a reservation of the job waits
//	                          until no such key is left on the nodes where one
//	                          may be (footprints/<job>). Under the node's name
//	                          so that etcd's RBAC, which grants key ranges,
//	                          can give each node its own running keys only
//	footprints/<job>          Footprint, no lease: the nodes of the job's latest
//	                          reservation, the only nodes where a running key
//	                          of the job may be (see ReadPrior)
//	election/<service>        concurrency.Election keys for singletons
//
// The watch caches of these prefixes, each with its value type, are built
// by the constructors in caches.go (NodeCache, AllocationCache, …).
package store

import (
	"strconv"
	"strings"
	"time"
)

// Prefix roots every key, so one etcd cluster can host other data.
const Prefix = "/lockstep/v1/"

// Key prefixes.
const (
	NodesPrefix     = Prefix + "nodes/"
	InventoryPrefix = Prefix + "inventory/"
	ClaimsPrefix    = Prefix + "claims/"
	PortsPrefix     = Prefix + "ports/"
	AllocPrefix     = Prefix + "alloc/"
	AssignPrefix    = Prefix + "assign/"
	ElectionPrefix  = Prefix + "election/"
	DrainsPrefix    = Prefix + "drains/"
	NodeStatePrefix = Prefix + "nodestate/"
	RunningPrefix   = Prefix + "running/"
	FootprintPrefix = Prefix + "footprints/"
)

// DrainKey is a job's drain record.
func DrainKey(job string) string { return DrainsPrefix + job }

// NodeStateKey is a node's administrative state.
func NodeStateKey(node string) string { return NodeStatePrefix + node }

// RunningKey says that ranks of job are alive on node.
func RunningKey(node, job string) string { return RunningPrefix + node + "/" + job }

// NodeRunningPrefix covers the running keys of one node: the range its
// etcd role may write. Node names have no '/', so one node's prefix never
// covers another's keys.
func NodeRunningPrefix(node string) string { return RunningPrefix + node + "/" }

// ParseRunningKey splits a running key into node and job.
func ParseRunningKey(key string) (node, job string, ok bool) {
	rest, found := strings.CutPrefix(key, RunningPrefix)
	if !found {
		return "", "", false
	}
	node, job, ok = strings.Cut(rest, "/")
	return node, job, ok && job != "" && node != "" && !strings.Contains(job, "/")
}

// FootprintKey records where ranks of the job may be alive.
func FootprintKey(job string) string { return FootprintPrefix + job }

// Lease and timing defaults.
const (
	// DefaultNodeTTL is the agent lease TTL: a node is declared down at most
	// this long after its agent stops renewing.
	DefaultNodeTTL = 10 * time.Second
	// DefaultReservationTTL is the reservation lease TTL: a gang service that
	// dies mid-launch leaks its claims for at most this long.
	DefaultReservationTTL = 10 * time.Second
	// DefaultLaunchTimeout bounds reserved → every rank running.
	DefaultLaunchTimeout = 60 * time.Second
	// MasterPortBase and MasterPortCount bound MASTER_PORT choices.
	MasterPortBase  = 29500
	MasterPortCount = 2000
)

// MaxTxnOps is the etcd --max-txn-ops Lockstep needs (etcd's default is
// 128): the reservation of a gang of n nodes and g GPUs in all is one
// transaction of up to 3n+g+3 compares (ReservationTxn), so the default
// stops at about 13 nodes of 8 GPUs. 8192 holds 512 nodes of 8 GPUs, in
// well under etcd's 1.5 MiB request limit. The embedded etcd sets it; an
// external cluster must be started with it.
const MaxTxnOps = 8192

// NodeKey is a node's liveness key.
func NodeKey(node string) string { return NodesPrefix + node }

// InventoryKey is a node's capacity record.
func InventoryKey(node string) string { return InventoryPrefix + node }

// ClaimKey is the claim of one GPU.
func ClaimKey(node string, gpu int) string {
	return ClaimsPrefix + node + "/" + strconv.Itoa(gpu)
}

// WholeNodeClaimKey is the claim of every GPU of one node, held by a gang
// that uses the whole node. It and the node's GPU claims exclude each
// other (ReservationTxn).
func WholeNodeClaimKey(node string) string { return ClaimsPrefix + node + "/" + wholeNode }

// WholeNode is the GPU index ParseClaimKey gives a whole-node claim.
const WholeNode = -1

const wholeNode = "all"

// NodeClaimsPrefix covers every GPU claim of one node.
func NodeClaimsPrefix(node string) string { return ClaimsPrefix + node + "/" }

// PortKey is the claim of one MASTER_PORT on one address.
func PortKey(addr string, port int) string {
	return PortsPrefix + addr + "/" + strconv.Itoa(port)
}

// AllocKey is a job's allocation record.
func AllocKey(job string) string { return AllocPrefix + job }

// AssignKey is one node's part of a job.
func AssignKey(node, job string) string { return AssignPrefix + node + "/" + job }

// NodeAssignPrefix covers every assignment of one node.
func NodeAssignPrefix(node string) string { return AssignPrefix + node + "/" }

// ElectionKey is the election prefix of a singleton service.
func ElectionKey(service string) string { return ElectionPrefix + service }

// ParseClaimKey splits a claim key into node and GPU index; the index of a
// whole-node claim is WholeNode.
func ParseClaimKey(key string) (node string, gpu int, ok bool) {
	if node, found := strings.CutSuffix(key, "/"+wholeNode); found {
		node, found = strings.CutPrefix(node, ClaimsPrefix)
		if found && node != "" && !strings.Contains(node, "/") {
			return node, WholeNode, true
		}
		return "", 0, false
	}
	node, gpu, ok = splitIndexedKey(key, ClaimsPrefix)
	if !ok || gpu < 0 {
		return "", 0, false
	}
	return node, gpu, true
}

// ParsePortKey splits a port key into address and port.
func ParsePortKey(key string) (addr string, port int, ok bool) {
	return splitIndexedKey(key, PortsPrefix)
}

// splitIndexedKey splits a key of the form prefix + owner + "/" + number
// (claims and port claims) into owner and number.
func splitIndexedKey(key, prefix string) (owner string, n int, ok bool) {
	rest, found := strings.CutPrefix(key, prefix)
	if !found {
		return "", 0, false
	}
	i := strings.LastIndexByte(rest, '/')
	if i <= 0 {
		return "", 0, false
	}
	n, err := strconv.Atoi(rest[i+1:])
	if err != nil {
		return "", 0, false
	}
	return rest[:i], n, true
}

// LastSegment returns what follows the last '/'.
func LastSegment(key string) string { return key[strings.LastIndexByte(key, '/')+1:] }
