// Package auth is Lockstep's identity plumbing for NATS: the roles, the
// subject permissions each role gets (one table, pure data), and the
// cluster authority that signs credentials with the NATS ecosystem's own
// libraries (nkeys and jwt/v2), as the `nats` CLI and nsc use them.
//
// The model is NATS's decentralized auth: an operator key signs one
// application account ("LOCKSTEP") and a system account; the account key
// signs one user JWT per identity, whose permissions come from
// Permissions. A creds file (user JWT + its seed) is what a service, node,
// CLI user or pipeline (`nats --creds FILE`) connects with. The server
// trusts the operator and resolves the two accounts from memory, so an
// embedded server needs no account server.
//
// Ownership is enforced by the server, not by services: a user may publish
// submissions only on their own subject (subjects.SubmitAs), a node may
// report only on its own (subjects.ReportFrom), and nothing but the
// services may publish proposals or write the jobs KV.
package auth
