#!/usr/bin/env bash
# Runs the compose fault tests (deploy/e2e, build tag `compose`): builds the
# images, brings the cluster up, injects faults (containers killed, cut off
# the network, paused) during a bounded stream of jobs, checks the invariants
# after each, and always takes the cluster down. Extra arguments go to
# `go test` (e.g. -run 'TestCompose/agent').
set -euo pipefail
source "$(dirname "$0")/lib.sh"

cd "$ROOT"
exec go test -tags compose -count=1 -timeout 30m -v ./deploy/e2e/ "$@"
