// Package sim is a discrete-event simulator on virtual time: it replays a
// job stream (package trace) on a simulated cluster (package fabric)
// through the same placement and queue code the services use
// (shared/core/place, shared/core/queue; imported, never copied), under one of
// four policies, and measures how well each uses the GPUs.
//
// # Policies
//
//   - per-pod: the Kubernetes default scheduler. Each node's share of a
//     gang is a pod of GPUsPerNode GPUs, placed on its own by
//     placement.PlacePods (most free GPUs first, topology-blind) as soon as
//     it fits, in submission order; pods that fit are bound even when the
//     rest of the gang does not, and hold their GPUs idle until the last
//     one is placed (that is when the job starts). There is no timeout:
//     the default scheduler has none.
//   - gang: Volcano-like gang scheduling without topology: all or nothing,
//     queue.PlanFIFOSkip (submission order, skip what does not fit, no
//     reservation), and placement.Place on a snapshot whose nodes carry no
//     leaf or spine labels, so it packs nodes best-fit but ignores
//     switches.
//   - slurm: Slurm with topology/tree and sched/backfill. The main
//     scheduler runs at every event and starts jobs in submission order
//     with placement.Place (switch-tree best fit, the algorithm placement
//     documents) until the first that does not fit; the backfill scheduler
//     (queue.PlanBackfill, EASY, in submission order: Slurm's default
//     priority has no job-size factor) runs every BackfillInterval
//     (Slurm's bf_interval, 30 s by default) after something changed.
//   - lockstep: Lockstep's placement service: queue.PlanBackfill on every
//     event, in the order Config.Queues sets (FIFO within a priority by
//     default; `--queues` can turn on the bounded job-size handicap, see
//     queue.Order), with topology-aware placement, and each
//     multi-node job asking for the fewest leaves it could ever use,
//     waiting up to SwitchWait for them (the seed's
//     `--switches=1@00:15:00`), after which placement relaxes the
//     constraint by itself. As in the service, the wait starts at the first
//     pass that finds the job placeable only on more leaves
//     (queue.NextWaitSince), not at submission; every policy's jobs keep
//     their clock the same way.
//
// # Model
//
// Nodes have GPUs only (no cores, no NUMA binding). A job's run time is
// its trace duration stretched by its placement: ×(1 + LeafPenalty·(leaves
// − 1) + SpinePenalty·(spines − 1)), where leaves and spines count the
// distinct leaf switches and spine domains its nodes span. Time limits,
// which EASY backfill needs, are the trace duration × LimitFactor (1 by
// default: users who know their run times; the stretch is not foreseen),
// or one TimeLimit for every job (users who all ask the same limit).
// Jobs that no node set of the cluster could ever hold are counted as
// unschedulable and left out.
//
// # Efficiency
//
// The loop is a heap of end, wake-up and backfill-tick events plus the
// trace's arrivals in order. One snapshot is kept for the whole run and
// updated with Take and Release; the queue policies clone it per pass, and
// the clones share its placement index. A scheduling pass runs after all
// events of one instant, only when something that could start a job
// changed since the last pass: GPUs were released, a job arrived that fits
// the free GPUs, or a topology wait ran out (a wake-up event). With one
// queue this skips only passes that would start nothing; with several,
// fair-share keys drift between passes. The waiting jobs are kept in one
// FIFO per gang shape; a pass is given, in submission order, the first
// Window (64 by default) waiting jobs of every shape that fits the free
// GPUs, plus the first waiting job of every shape that does not fit (one
// of them is the job EASY backfill reserves for). Jobs left out could not start in that pass and, under
// these policies, change no decision; the window bounds how far back
// backfill looks per shape, as Slurm's bf_max_job_test does. All policies
// get the same window.
//
// # Metrics
//
// Utilization is useful GPU time (a running job contributes GPUs ÷ its
// stretch) over capacity × makespan; busy utilization counts GPUs held,
// including stretched time and pods of incomplete gangs. Queueing delay is
// start − submit, JCT end − submit, η = Σ trace durations ÷ Σ JCT (compute
// over compute plus waiting, with topology stretch counted as waste).
// Partial-gang GPU-hours are the GPU time pods held before their gang was
// complete (zero for the gang policies by construction). A multi-node job
// is on the minimum number of leaves when it spans as few leaves as the
// idle cluster would allow.
package sim
