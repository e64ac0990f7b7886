package testenv

import (
	"context"
	"fmt"
	"testing"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/lockstep-dev/lockstep/shared/contract/domain"
	"github.com/lockstep-dev/lockstep/shared/contract/jobspec"
	"github.com/lockstep-dev/lockstep/shared/plumbing/store"
)

// Fixtures for the gangs service tests write by hand, as placement and
// gang would make them: the spec, the placement and the assignments of
// attempt 1 agree with one another.

// GangSpec is the spec of job id in queue "default": width nodes of gpus
// GPUs, one task per GPU, running command.
func GangSpec(id string, width, gpus int, command ...string) jobspec.Spec {
	return jobspec.Spec{ID: id, Queue: "default", Command: command,
		Gang: jobspec.Gang{Nodes: width, GPUsPerNode: gpus, TasksPerNode: gpus}}
}

// GangNodes names the width nodes of job id's gang: id-n0, id-n1, ….
func GangNodes(id string, width int) []string {
	out := make([]string, width)
	for k := range out {
		out[k] = fmt.Sprintf("%s-n%d", id, k)
	}
	return out
}

// GangPlacement places a gang on nodes, gpus ranks on each: rank k·gpus+g
// runs on GPU g of nodes[k], as its local rank g. nodes[0] is the master,
// listening on port.
func GangPlacement(nodes []string, gpus, port int) domain.Placement {
	p := domain.Placement{MasterAddr: nodes[0], MasterPort: port}
	for k, name := range nodes {
		np := domain.NodePlacement{Node: name, NodeRank: k}
		for g := range gpus {
			np.GPUs = append(np.GPUs, g)
			np.Ranks = append(np.Ranks, domain.Rank{Rank: k*gpus + g, LocalRank: g, GPUs: []int{g}})
		}
		p.Nodes = append(p.Nodes, np)
	}
	return p
}

// GangAssignments is what each node of p runs of attempt 1 of job id: its
// ranks, the gang's shape and master, and command.
func GangAssignments(id string, p domain.Placement, command []string) []domain.Assignment {
	var out []domain.Assignment
	for _, np := range p.Nodes {
		out = append(out, domain.Assignment{JobID: id, Attempt: 1, Node: np.Node, NodeRank: np.NodeRank,
			NNodes: len(p.Nodes), WorldSize: p.WorldSize(), MasterAddr: p.MasterAddr, MasterPort: p.MasterPort,
			Ranks: np.Ranks, Command: command})
	}
	return out
}

// RegisterNodes registers nodes as their agents would: gpus GPUs each,
// reached at their names, under lease (their epoch). It returns each
// node's registration revision, which a reservation compares.
func (e *Env) RegisterNodes(t testing.TB, lease clientv3.LeaseID, gpus int, nodes ...string) map[string]int64 {
	t.Helper()
	revs := map[string]int64{}
	for _, name := range nodes {
		node := domain.Node{Name: name, Addr: name, GPUs: gpus, Epoch: int64(lease)}
		resp, err := e.Etcd.Put(context.Background(), store.NodeKey(name), store.MustJSON(node), clientv3.WithLease(lease))
		if err != nil {
			t.Fatal(err)
		}
		revs[name] = resp.Header.Revision
	}
	return revs
}

// Held counts the keys of keys that etcd holds.
func (e *Env) Held(t testing.TB, keys ...string) int {
	t.Helper()
	n := 0
	for _, k := range keys {
		resp, err := e.Etcd.Get(context.Background(), k, clientv3.WithCountOnly())
		if err != nil {
			t.Fatal(err)
		}
		n += int(resp.Count)
	}
	return n
}
