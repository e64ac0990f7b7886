#!/usr/bin/env bash
# Builds the images (build.sh), makes the cluster's CA and credentials once
# (secrets.sh, into deploy/.secrets/), starts the compose cluster and waits
# until every container is healthy: NATS and etcd first (the services wait
# for them through depends_on), then every service and all 8 agents
# registered.
#
# Usage: deploy/up.sh [--no-build] [--no-jaeger] [--no-prometheus] [--timeout SECONDS]
set -euo pipefail
source "$(dirname "$0")/lib.sh"

build=1 timeout=240 build_args=() services=()
while (($#)); do
  case $1 in
    --no-build) build=0 ;;
    --no-jaeger) build_args+=(--no-jaeger) ;;
    --no-prometheus) build_args+=(--no-prometheus) ;;
    --timeout) timeout=$2; shift ;;
    -h|--help) sed -n '2,/^set -e/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) die "unknown argument $1 (see --help)" ;;
  esac
  shift
done
# Every service but those left out (nothing depends on jaeger or prometheus).
skip=()
[[ " ${build_args[*]-} " == *" --no-jaeger "* ]] && skip+=(-e jaeger)
[[ " ${build_args[*]-} " == *" --no-prometheus "* ]] && skip+=(-e prometheus)
if ((${#skip[@]})); then
  mapfile -t services < <(compose config --services | grep -vx "${skip[@]}")
fi

started=$SECONDS
if [[ $build == 1 ]]; then
  "$DEPLOY/build.sh" ${build_args[@]+"${build_args[@]}"}
fi
"$DEPLOY/secrets.sh"
# etcd first: its users and roles exist and its auth is on before any
# service or agent connects, so no node ever writes outside its own keys.
log "docker compose up: etcd"
compose up -d --remove-orphans etcd-1 etcd-2 etcd-3
deadline=$((SECONDS + timeout))
until "$LOCKSTEP" auth etcd-rbac --etcd "$ETCD_HOST_URLS" --ca "$SECRETS/admin/ca.crt" \
    --etcd-root "$SECRETS/admin/admin" admin=admin admission=admission placement=placement gang=gang drain=drain \
    node-01=node node-02=node node-03=node node-04=node node-05=node node-06=node node-07=node node-08=node \
    >/dev/null 2>"$BUILD/etcd-rbac.err"; do
  if ((SECONDS > deadline)); then
    cat "$BUILD/etcd-rbac.err" >&2
    die "etcd's users and roles not set up after ${timeout}s"
  fi
  sleep 2
done
log "etcd auth on: every identity held to its role"
log "docker compose up"
compose up -d --remove-orphans ${services[@]+"${services[@]}"}

# Wait for every container of the project to report healthy.
deadline=$((SECONDS + timeout))
while :; do
  mapfile -t ids < <(compose ps -q)
  pending=()
  for id in "${ids[@]}"; do
    st=$(docker inspect -f '{{.Name}} {{.State.Status}} {{if .State.Health}}{{.State.Health.Status}}{{else}}no-healthcheck{{end}}' "$id")
    read -r name state health <<<"$st"
    if [[ $state != running || ($health != healthy && $health != no-healthcheck) ]]; then
      pending+=("${name#/}:$state/$health")
    fi
  done
  if ((${#ids[@]} > 0 && ${#pending[@]} == 0)); then
    break
  fi
  if ((SECONDS > deadline)); then
    log "not healthy after ${timeout}s: ${pending[*]}"
    for p in "${pending[@]}"; do
      name=${p%%:*}
      log "--- $name: last health check / log lines"
      docker inspect -f '{{if .State.Health}}{{range .State.Health.Log}}{{.Output}}{{end}}{{end}}' "$name" | tail -3 >&2 || true
      docker logs --tail 5 "$name" 2>&1 | sed 's/^/    /' >&2 || true
    done
    exit 1
  fi
  sleep 1
done
log "cluster healthy: ${#ids[@]} containers, $((SECONDS - started))s"
cat >&2 <<MSG
  NATS:      $NATS_HOST_URLS (TLS, creds)
  etcd:      $ETCD_HOST_URLS (client certificate)
  Jaeger UI: http://127.0.0.1:16686
  Prometheus: http://127.0.0.1:19090/api/v1/alerts (API only)
  admin:     export LOCKSTEP_CONFIG=$ADMIN_CONFIG
  try:       LOCKSTEP_CONFIG=$ADMIN_CONFIG $LOCKSTEP submit docs/examples/hello.json --wait
MSG
