// Package lifecycle decides what happens to a gang after it is placed,
// wherever a service compares stored state and acts on the difference. It
// is pure: each decision is a function of values the service observed
// (etcd listings, the job records its watch holds, now), so it is tested as
// a table, and the service is a thin loop: observe, decide here, apply.
//
// # Reconcile (gang)
//
// Reconcile takes one reconciler pass's observation and returns the
// actions that repair it, in the order to apply them:
//
//   - per allocation, in listing order: Release (its job is finished, gone
//     or on another attempt), FailPull (a container gang still pulling
//     past its pull deadline, JudgePull), LaunchTimeout, Requeue (a node
//     of it is down)
//     or AnnounceRunning (past the barrier, never recorded as running);
//     while its job is still pending on its attempt (the reservation is
//     being recorded), only FailPull and LaunchTimeout, by their deadlines;
//   - RequeueUnlessHeld for an active job without its allocation;
//   - DropMalformed for an allocation record that cannot be used;
//   - SweepStrays for keys no allocation accounts for (StrayJobs).
//
// Some actions are final, and the watch lags the bucket. Where the watch
// does not have the record a final action would rest on, the plan says
// Confirm… instead: the service reads the record right before acting and
// asks JudgeAllocation or JudgeStrays again with what it read. Likewise
// RequeueUnlessHeld is applied only if a fresh read of the allocation still
// finds none of that attempt. Those reads stay next to the writes they
// guard, as they were before the decisions moved here.
//
// # CompleteDrain (drain)
//
// CompleteDrain decides how a drain ends: the job record's transition
// (End, a mutator safe to retry under compare-and-set) and the events that
// announce it (Events): checkpointed when every expected rank acknowledged,
// then requeued, cancelled or timeout.
//
// # GPUDrains (drain)
//
// GPUDrains decides which running gangs have a rank on a GPU that its
// node's health checks withdrew (the live registration's Unhealthy list)
// and must be checkpoint-drained and requeued, as for a drained node.
package lifecycle
