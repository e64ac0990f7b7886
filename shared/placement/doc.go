// Package placement decides where a gang runs. Place is a pure function
// over a Snapshot: no I/O, no clock, no global randomness, so the placement
// service, `lockstep submit --test-only` and the simulator all run the same
// code and a decision can be replayed from its JSON input.
package placement
