// Package embedded starts NATS (with JetStream) and etcd inside the current
// process. `lockstep dev`, the load-test harness and shared/plumbing/testenv use it;
// production runs against external clusters instead.
package embedded
