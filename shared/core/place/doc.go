// Package place decides where a gang runs. Place is a pure function
// over a Snapshot: no I/O, no clock, no global randomness, so the placement
// service, admission, `lockstep submit --test-only` and the simulator all
// run the same code, and a decision can be replayed from its JSON Input.
//
// # Inputs
//
// A Snapshot lists nodes (domain.Node plus free GPUs, free cores, up and
// drained flags), the claimed MASTER_PORTs, and optionally a topology file.
// The switch tree is the file merged with the agents' labels (the file wins;
// see topology.Merge). A node the topology does not place counts as a leaf
// of its own. A Request is a gang of Nodes × GPUsPerNode split into
// TasksPerNode ranks, with optional cores per rank, closest binding and
// topology constraints.
//
// # Algorithm
//
//  1. Filter (stack.go): every node goes through up → not drained → enough
//     free GPUs → binding (the per-node shape fits the free NUMA layout).
//     Rejections are counted per filter for the explanation.
//  2. Aggregate (evaluate.go): for every switch, the number of eligible
//     nodes beneath it and their free GPUs; one pass over the nodes and one
//     over the switches, which are numbered parents first.
//  3. Search (search.go), lexicographically:
//     a. fewest leaf switches: k = how many of the largest leaves it takes
//     to hold N eligible nodes;
//     b. lowest level crossed: the lowest switch whose subtree also needs
//     only k leaves, found top-down, skipping subtrees with fewer than N
//     eligible nodes or needing more than k leaves;
//     c. best fit by domain (frag): the placement that breaks the fewest
//     whole domains — leaves whose every node is idle, then such spines,
//     then idle nodes — then whose leaves have the fewest idle nodes
//     (single-leaf placements, and those within a spine or block domain;
//     switches spanning several leaves skip it, for speed);
//     d. best fit: among equal switches, the one with the fewest eligible
//     nodes, then fewest free GPUs; within it, leaves chosen slot by slot
//     as the smallest (most used, not whole) leaf that still lets the
//     remaining slots be filled, so large whole leaves stay free for large
//     gangs; within a leaf, the nodes with the fewest free GPUs;
//     e. the seed breaks remaining ties.
//     A required or preferred level restricts the search to one domain at a
//     time (each leaf, each spine = a leaf's parent, each block) and keeps
//     the best domain by the same order. No combinations are enumerated:
//     a decision costs O(nodes + switches·depth), about a millisecond at
//     10,000 nodes.
//  4. Bind (bind.go): each rank gets its GPUs and, when asked, its cores;
//     closest binding takes both from one NUMA node.
//  5. MASTER_PORT (port.go): the lowest free port of the first chosen node
//     whose address has one; that node becomes node rank 0.
//
// # Constraints and bounded waits
//
// Required is hard. MaxSwitches (with WaitForSwitches) and Preferred (with
// PreferredWait) are soft with a deadline of Request.WaitSince plus the
// wait (now plus the wait while the wait has not started; the caller
// starts it at the first decision that waits for the constraint):
// before it, they are enforced and the gang waits ("WaitingForSwitches (12m
// left)") when they are what stops it; after it, or straight away if the
// idle cluster could never meet them, they are dropped, the best available
// placement is taken and Result.Relaxed is set with a sentence saying so.
// A gang that the idle cluster cannot hold within its required level is
// Unschedulable (admission rejects it); one that could, but not now, waits.
//
// # Worked example
//
// Two spines; spine-1 has leaf-1 (6 nodes, 4 of them with 8 free GPUs) and
// leaf-2 (4 nodes, 2 with 8 free GPUs); spine-2 has leaf-3 (4 nodes, 3
// free). A gang of 3 × 8 GPUs: one leaf suffices (k = 1); leaf-1 and leaf-3
// both hold 3; best fit picks leaf-3 (3 eligible nodes, fewer than leaf-1's
// 4), keeping leaf-1's room for a larger gang. A gang of 5 × 8: no leaf
// holds 5 now, so k = 2; spine-1 achieves 2 (4+2) at level 1, the root also
// does at level 2, so spine-1 wins; within it the greedy takes leaf-2 whole
// (the smallest leaf that, with leaf-1, reaches 5) and 3 nodes of leaf-1.
// With maxSwitches 1 and a 15-minute wait, the same gang waits with
// "WaitingForSwitches (15m left)", since leaf-1 could hold it once two of
// its nodes free up; when the wait is over it gets the spine-1 placement,
// marked Relaxed. (These cases are the first scenarios in
// scenario_test.go.)
//
// # Explanations
//
// "Doesn't fit" is a Result, not an error: Code Wait or Unschedulable,
// Reason starting with a reason code, and Detail in numbers, e.g.
// "needs 2 nodes with 8 free GPUs in one leaf: best leaf has 1 (leaf-2); 3
// such nodes on 2 leaves overall". Code Error is reserved for a faulty
// snapshot (contradictory topology labels).
//
// # Binding and cores
//
// NodeView.FreeCPUs nil means cores are not tracked: all of the node's
// cores (its NUMA lists, else 0..CPUs-1) are free. A node without NUMA
// information is one NUMA node. Closest binding needs, per rank,
// GPUsPerNode/TasksPerNode GPUs and CPUsPerTask cores on one NUMA node;
// without it, GPUs go lowest index first and cores, if asked, lowest free
// first. A node that reports no cores cannot host a gang asking for cores.
//
// PlacePods is the per-pod (Kubernetes-style) baseline used to show what
// gang placement avoids.
package place
