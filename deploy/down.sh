#!/usr/bin/env bash
# Stops the compose cluster and removes its containers, volumes and network,
# then checks that nothing of it is left. With --images, also removes the
# lockstep/* images (the next up.sh rebuilds them; binaries stay cached).
#
# Usage: deploy/down.sh [--images]
set -euo pipefail
source "$(dirname "$0")/lib.sh"

images=0
for arg in "$@"; do
  case $arg in
    --images) images=1 ;;
    -h|--help) sed -n '2,/^set -e/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) die "unknown argument $arg (see --help)" ;;
  esac
done

# A paused container (a fault test's) cannot be stopped: thaw it first.
paused=$(docker ps -q --filter "label=com.docker.compose.project=$PROJECT" --filter status=paused)
if [[ -n $paused ]]; then
  docker unpause $paused >/dev/null
fi
# No restart policy may bring a container back while compose removes it
# (a service that exits as its dependencies go would be restarted).
ids=$(docker ps -aq --filter "label=com.docker.compose.project=$PROJECT")
if [[ -n $ids ]]; then
  docker update --restart=no $ids >/dev/null
fi
if ! compose down -v --remove-orphans --timeout 10; then
  # Seen once after a failed fault test: Docker 20.10 refused to remove
  # the network ("has active endpoints") with no container left on it.
  log "compose down did not finish; removing what is left by hand"
fi
left=$(docker ps -aq --filter "label=com.docker.compose.project=$PROJECT")
if [[ -n $left ]]; then
  docker rm -fv $left >/dev/null
fi
for _ in 1 2 3 4 5; do
  docker network inspect "$NETWORK" >/dev/null 2>&1 || break
  docker network rm "$NETWORK" >/dev/null 2>&1 || sleep 1
done
vols=$(docker volume ls -q --filter "label=com.docker.compose.project=$PROJECT")
if [[ -n $vols ]]; then
  docker volume rm $vols >/dev/null
fi
if [[ $images == 1 ]]; then
  mapfile -t imgs < <(docker images --format '{{.Repository}}:{{.Tag}}' | grep '^lockstep/' || true)
  if ((${#imgs[@]})); then docker rmi "${imgs[@]}" >/dev/null; fi
fi

containers=$(docker ps -aq --filter "label=com.docker.compose.project=$PROJECT" | wc -l)
volumes=$(docker volume ls -q --filter "label=com.docker.compose.project=$PROJECT" | wc -l)
networks=$(docker network ls -q --filter name="^$NETWORK\$" | wc -l)
if ((containers + volumes + networks > 0)); then
  die "left behind: $containers containers, $volumes volumes, $networks networks"
fi
log "down: no lockstep containers, volumes or networks left"
