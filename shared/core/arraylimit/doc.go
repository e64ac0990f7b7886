// Package arraylimit decides which pending tasks of a job array its
// concurrency limit (spec array.maxConcurrent, Slurm's --array=...%N)
// lets the queue consider: at most the limit of an array's tasks are
// placed (reserved, running, or proposed) at once; the other pending ones
// wait with reason JobArrayTaskLimit. It is pure, like depend: placement
// gathers the tasks from the job records it follows and applies the
// answer.
package arraylimit
