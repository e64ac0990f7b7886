// Package e2e holds the compose fault tests: they bring up the docker-compose
// cluster of deploy/ (3 NATS servers, 3 etcd members, two replicas of every
// service, 8 node agents as containers), run a bounded stream of jobs, and in
// turn kill a NATS server, an etcd member, one replica of each service and a
// node agent, cut an agent off the network and pause an etcd member. After
// each fault every job must end succeeded, the invariant checker
// (`lockstep check`) must be clean and no claim may outlive its job; the
// time from each fault to the affected jobs running again is logged.
//
// The tests are behind the build tag `compose` (they need a Docker engine
// and take minutes), so `go test ./...` skips them. Run them with
// deploy/e2e.sh (`task e2e:compose`); `.ci/run` does when a Docker engine
// answers. They tear the cluster down at the end, even on failure, unless
// LOCKSTEP_E2E_KEEP=1; on failure the containers' logs are saved under
// deploy/build/e2e-logs/.
package e2e
