// Package queue is Lockstep's queue policy: which pending jobs start now,
// and why each of the others waits. It is pure: a plan is a function of
// the Input (a placement snapshot, the pending and running jobs, the queue
// configuration, recent usage, now and a seed), with no I/O and no clock,
// so the placement service, `lockstep queue`, `submit --test-only` and the
// simulator share it, and a plan replays from its JSON input.
//
// # PlanBackfill
//
//  1. Order (order.go): higher priority first; within a priority, the queue
//     with the lowest fair-share key, Input.Usage[queue] / weight, first
//     (Usage is decayed GPU-hours: the caller computes it with DecayedUsage,
//     typically with DefaultHalfLife); then submission time plus the
//     job-size handicap (size.go: a day per GPU beyond the first, at most
//     a week and at most 16 × the small-job backlog), so small jobs go
//     ahead of big ones submitted shortly before them; then submission
//     time, queue and job ID.
//  2. Quota (quota.go): a job whose queue already holds G GPUs (running,
//     plus what this plan starts) waits with QuotaExceeded when G + its
//     GPUs exceeds the queue's GPUQuota. A job larger than the quota could
//     never start; ExceedsQuota lets admission reject it. Likewise per
//     user (userlimit.go): a job whose owner already holds G GPUs waits
//     with UserGPULimit when G + its GPUs exceeds the owner's
//     MaxRunningGPUs, overall or in its queue. Admit (access.go) is
//     admission's verdict on the rest of the policy: allow lists,
//     priority caps, pending-job limits, and jobs larger than a limit.
//     Preemptor chooses the one job that may preempt, within both.
//  3. Until a reservation exists, each job that placement can place on the
//     free resources starts, and its resources are taken. The first job
//     that cannot start (placement says Wait) gets the reservation: the
//     earliest time it could start and where, found by releasing running
//     jobs in order of expected end (start + time limit) on a copy of the
//     free resources and re-running placement (reserve.go). Jobs without a
//     time limit never end for this purpose; if the job fits only once
//     they end, the reservation's start is unknown but its resources are
//     still held. If the job cannot get a reservation at all (its nodes
//     are down), the next blocked job may.
//  4. After the reservation (EASY backfill), a job that fits now starts
//     only if it cannot delay the reservation: it ends, by its own time
//     limit, before the reserved start; or it fits in the free resources
//     minus the reservation's placement (the "shadow"). Otherwise it waits
//     with Priority. Jobs that do not fit at all wait with placement's
//     reason (Resources, WaitingForSwitches, RequiredTopology, ...).
//  5. A job whose topology wait has run out, and that could start now
//     only spread over more switches than it asked for, keeps waiting when
//     a compact placement that running jobs will free would finish it
//     sooner by the stretch model (stretch.go: a spread placement's
//     slowdown counts Stretch.Weight times), and holds the reservation
//     on that placement; behind the reservation, a job that could backfill
//     only spread keeps waiting the same way. A multi-node gang without any
//     topology limit that could start now only on more leaves than the
//     idle cluster needs is weighed the same way (compact by default).
//  6. Behind the reservation, a gang waiting by its own choice (a switch
//     or preferred-level wait still running, or a compact placement
//     preferred by step 5) gets a hold: a reservation of its own, on the
//     leaves that free soonest, that never counts on what earlier
//     reservations hold. A later job may use a reservation's or hold's
//     resources only if it ends before that one starts (holds.go): EASY
//     backfill, topology-aware. At most maxHolds (1) hold per plan.
//
// Starting jobs never moves the reservation later, so a big gang is
// delayed at most until the jobs running when it reached the head of the
// queue end: it cannot starve behind a stream of small jobs. The size
// handicap lets smaller jobs reach the head before it, but only those
// submitted less than MaxSizeHandicap after it (TestSizeHandicapBound).
//
// Why favour small jobs: under a backlog, FIFO with a reservation makes
// every 1-GPU job wait behind the whole-node jobs and gangs submitted
// before it, although it could run in a gap they cannot use. Slurm's
// multifactor priority has a job-size factor for this (PriorityFavorSmall);
// expressing it in queue time keeps it comparable with age and gives the
// bound above. Scaling its cap to the small-job backlog keeps it in
// proportion: on the overloaded Philly replay (docs/benchmarks.md) it cuts
// the mean queueing delay from 9.0 to 5.5 days, and on a cluster sized for
// the load, where a fixed week made gangs wait twice as long, it shortens
// the mean (2.1 → 1.8 h) and gangs wait about as long as without it.
// PlanFIFOSkip, the baseline, starts whatever fits in priority order and
// skips the rest; TestBigGangDoesNotStarve shows the difference.
//
// # Worked example
//
// Four 8-GPU nodes in one leaf; now 14:00. r1 runs on n1 until 14:30, r2
// on n2 until 15:00. Pending, all priority 0 in one queue, in submission
// order: A (3 nodes), B (1 node, 20m limit), C (1 node, 2h limit), D (1
// node, no limit).
//
//   - A does not fit (2 free nodes). Releasing r1 at 14:30 frees n1, and
//     A fits on n1, n3, n4: A waits with "Reserved (starts ≈ 14:30)".
//   - B fits now and ends by 14:20, before 14:30: it starts (backfilled),
//     on n3 or n4, although A's reservation holds them.
//   - C fits on the node B left, but runs until 16:00 and the shadow (free
//     now minus n1, n3, n4) is empty: it waits with Priority. So does D,
//     which has no time limit.
//
// Under PlanFIFOSkip, B and C start at once, and at 14:30 D takes n1: A
// waits until D ends, which may be never. (TestWorkedExample.)
package queue
