// Package depend decides whether a job's dependencies (spec
// "dependencies" and "singleton", Slurm's --dependency) let it start:
// Ready, Wait (pending with reason Dependency) or Never (cancelled with
// reason DependencyNeverSatisfied). It is pure: the caller gathers the
// records of the jobs named (the placement service from its jobs KV
// follower) and gets a decision back, so it table-tests and replays.
package depend
