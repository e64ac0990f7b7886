# Sourced by the scripts in deploy/: where things are, how to call compose,
# and how the host reaches the cluster.

DEPLOY=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(dirname "$DEPLOY")
BUILD=${LOCKSTEP_BUILD_DIR:-$DEPLOY/build}
# The host-side CLI, built by build.sh (the same static binary as the images').
LOCKSTEP=$BUILD/bin/lockstep

# The compose project: containers are lockstep-<service>, the network is
# lockstep-net, volumes are lockstep_<name>.
PROJECT=lockstep
NETWORK=lockstep-net

# Published on the host's loopback only (see docker-compose.yml); both over
# TLS, NATS with creds and etcd with a client certificate.
NATS_HOST_URLS=nats://127.0.0.1:14222,nats://127.0.0.1:14223,nats://127.0.0.1:14224
ETCD_HOST_URLS=https://127.0.0.1:12379,https://127.0.0.1:12380,https://127.0.0.1:12381
# The cluster's authority, CA and every identity's credentials (secrets.sh);
# admin's config file points the host's CLI at the cluster.
SECRETS=$DEPLOY/.secrets
ADMIN_CONFIG=$SECRETS/admin/config.yaml

log() { printf '%s %s\n' "$(date +%H:%M:%S)" "$*" >&2; }
die() { log "error: $*"; exit 1; }

# compose runs `docker compose` (v2) if present, else docker-compose (v1).
compose() {
  if docker compose version >/dev/null 2>&1; then
    docker compose -p "$PROJECT" -f "$DEPLOY/docker-compose.yml" "$@"
  elif command -v docker-compose >/dev/null 2>&1; then
    docker-compose -p "$PROJECT" -f "$DEPLOY/docker-compose.yml" "$@"
  else
    die "neither 'docker compose' nor 'docker-compose' is installed"
  fi
}
