#!/usr/bin/env bash
# Submits docs/examples/hello.json to the running compose cluster through
# its published NATS ports, with the host-built CLI as admin (TLS and creds
# from deploy/.secrets/admin/config.yaml), and waits for it to succeed
# (exit 0) or fail (non-zero).
#
# Usage: deploy/smoke.sh [SPEC]
set -euo pipefail
source "$(dirname "$0")/lib.sh"

spec=${1:-$ROOT/docs/examples/hello.json}
[[ -x $LOCKSTEP ]] || die "$LOCKSTEP is missing: run deploy/build.sh (or deploy/up.sh) first"
started=$SECONDS
# The ranks run in containers, where the directory this script runs in (the
# CLI's default workdir) does not exist: they fall back to the attempt's own.
[[ -f $ADMIN_CONFIG ]] || die "$ADMIN_CONFIG is missing: run deploy/up.sh first"
LOCKSTEP_CONFIG=$ADMIN_CONFIG timeout 180 "$LOCKSTEP" submit "$spec" --wait
log "smoke job succeeded in $((SECONDS - started))s"
