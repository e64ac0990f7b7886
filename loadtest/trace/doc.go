// Package trace is the job streams of the load test and the simulator: a
// reader for the Philly trace format of ../shared/traces (see its README)
// and a seeded synthetic generator (arrival rate, gang-size mix, duration
// mix, topology constraints). Both produce the same Job values, sorted by
// submission offset, so the live harness and the simulator can replay
// either.
//
// A Job is a gang of Nodes × GPUsPerNode GPUs. The Philly file gives a GPU
// count and derives nodes = ceil(gpus/8); its one job whose GPUs do not
// divide evenly (20 GPUs, 3 × 8 in the file) is kept as the file says, so
// it asks for 24 GPUs: a uniform gang is what a Lockstep job spec can
// express.
package trace
