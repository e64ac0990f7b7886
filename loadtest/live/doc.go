// Package live load-tests the real services: admission, placement, gang
// and drain, over real NATS JetStream and etcd, with thousands of virtual
// nodes hosted in this process.
//
// # Cluster
//
// By default Run starts a devcluster (embedded NATS and etcd on free
// loopback ports, in a temporary directory, etcd fsync on, every service
// once), with auth when Config.Auth: then the harness connects as dev's
// admin and submits as its user alice, on her own subject. The devcluster
// insists on one real node; its agent is stopped right after start (its
// node goes down), so every job runs on virtual nodes. Given NATS and etcd
// URLs instead, Run starts no services: it adds virtual nodes and load to
// that cluster, connecting with Config.Credentials (an admin's on a cluster
// with auth) and submitting as SubmitCreds' user when set, and reports no
// service CPU or memory (they run elsewhere).
//
// Submissions always go over their own connection, so that a run with
// auth and one without differ only in auth (see Comparison).
//
// # Virtual agents
//
// A virtual node is what the real agent (services/agent) shows the rest of
// the system, without processes:
//
//   - it registers nodes/<node> (under a lease) and inventory/<node> in
//     etcd, with leaf and spine labels from the fabric;
//   - it sees its assignments through ONE watch on the assign/ prefix for
//     every virtual node of the process (not one watch per node);
//   - for a new assignment of its registration's epoch it publishes
//     domain.Report "started" on subjects.ReportFrom(node), then "exited" (code 0)
//     when the job's run time is over; an assignment of another epoch is
//     reported "lost"; a deleted assignment cancels the pending exit. A
//     rewrite of the same attempt (the launch barrier detaching it from the
//     reservation lease) starts nothing, as in the real agent.
//   - reports carry the real agent's de-duplication IDs,
//     report.<job>.<attempt>.<node>.<kind>.
//
// The job's run time travels in its command: jobs are submitted as
// ["sleep", "<seconds>"], which is what a real agent would run, and the
// virtual agent waits that long instead.
//
// Leases: NodesPerLease virtual nodes (250 by default) share one etcd
// lease, kept alive by this process, so 1,000 nodes cost etcd 4 keep-alive
// streams instead of 1,000. Node-loss detection is per lease: if one
// expires, all of its nodes go down at once (as a rack would).
//
// # Load and measurement
//
// Jobs are published open loop, at their stream's submission offsets
// (fixed rate or a trace), whatever the cluster's progress; the run is
// bounded by the stream's count and span and by Deadline. One ordered
// JetStream consumer on the job events records, per job, when it was
// admitted, reserved, running and ended (event times, from the services'
// clocks; in-process those are this machine's clock, like the submit
// time). Conflicts are counted from conflict events and from the job
// records' Conflicts. Before the load, the raw etcd ceiling is measured in
// the same run: RawWorkers clients commit store.Reserve transactions of
// the stream's most common gang shape on throwaway keys under a separate
// prefix (as services/gang/bench_test.go does), and the sustained
// reservation rate is reported as a ratio of it.
package live
