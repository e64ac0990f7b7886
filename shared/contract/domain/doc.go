// Package domain holds Lockstep's pure data types: jobs and their states,
// nodes, placements, allocations and the work items services exchange.
// It imports nothing that does I/O, so decision logic and the simulator can
// use it freely.
package domain
