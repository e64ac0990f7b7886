// Package rankenv is the rank environment contract: the name and meaning
// of every variable a rank of a job gets (the torchrun set, Lockstep's
// LOCKSTEP_* and the account's PATH, HOME, …), and Env, the typed form
// the node agent builds a rank's environment from.
//
// Vars is the table docs/interface.md shows ("Rank environment"); a test
// keeps the two in step. Programs that run inside a rank (`lockstep
// ckpt-done`, example trainers, tests) read the variables by the names
// declared here.
package rankenv
