#!/usr/bin/env bash
# Before/after of the whole submission path: two builds, each a dev
# cluster with its own client build, run in turn (never at once) for
# ROUNDS rounds of N sequential `lockstep submit` calls. Prints, per run:
# the time per call, the client's CPU per call, and the dev process's and
# its children's (supervisors, ranks) CPU per job, read from /proc after
# the jobs ended (the cluster's idle CPU over the loop and the 5 s after
# it included). Machines vary by the hour: compare within one run only.
#   BIN_OLD=/tmp/old BIN_CLIENT_OLD=/tmp/old-client loadtest/submit-ab.sh
# BIN and BIN_CLIENT (the "new" side) default to this checkout, built here.
set -euo pipefail
: "${BIN_OLD:?the full build to compare against}" "${BIN_CLIENT_OLD:?its client build (-tags lockstep_client)}"
unset LOCKSTEP_CONFIG
N=${N:-100}
ROUNDS=${ROUNDS:-2}
D=$(mktemp -d)
trap 'rm -rf $D' EXIT
if [[ -z ${BIN:-} ]]; then
  BIN=$D/lockstep BIN_CLIENT=$D/lockstep-client
  (cd "$(dirname "$0")/.." && CGO_ENABLED=0 go build -o "$BIN" ./cmd/lockstep &&
    CGO_ENABLED=0 go build -tags lockstep_client -o "$BIN_CLIENT" ./cmd/lockstep)
fi
: "${BIN_CLIENT:?the client build of BIN}"
echo '{"name":"s","gang":{"nodes":1,"gpusPerNode":1},"command":["true"]}' > $D/one.json

# cpu PID: the process's own CPU and its reaped children's, in clock ticks.
cpu() { awk '{print $14+$15, $16+$17}' /proc/$1/stat; }

# run LABEL DEV CLIENT
run() {
  local label=$1 dev=$2 client=$3 dir=$D/$1
  mkdir -p $dir
  # dev writes its context into the config file: a private one.
  XDG_CONFIG_HOME=$dir/config $dev dev --data-dir $dir/dev -N 32 --leaves 4 --web-listen "" --metrics-addr "" \
    --nats-listen 127.0.0.1:14222 --etcd-listen 127.0.0.1:12379 > $dir/dev.log 2>&1 &
  local pid=$!
  for _ in $(seq 1 120); do grep -q "cluster is up" $dir/dev.log && break; sleep 0.5; done
  grep -q "cluster is up" $dir/dev.log || { cat $dir/dev.log; kill $pid; exit 1; }
  export XDG_CONFIG_HOME=$dir/config
  $client submit $D/one.json > /dev/null
  sleep 5
  local own0 kids0 own1 kids1 real user sys
  read -r own0 kids0 <<< "$(cpu $pid)"
  TIMEFORMAT="%R %U %S"
  read -r real user sys < <({ time (for _ in $(seq 1 $N); do $client submit $D/one.json > /dev/null; done); } 2>&1)
  sleep 5 # the last jobs end, and their supervisors are reaped
  read -r own1 kids1 <<< "$(cpu $pid)"
  local hz; hz=$(getconf CLK_TCK)
  awk -v l=$label -v r=$real -v u=$user -v s=$sys -v n=$N -v o=$((own1-own0)) -v k=$((kids1-kids0)) -v hz=$hz 'BEGIN {
    printf "%s: %.1f ms per call, the client'"'"'s CPU %.1f ms per call; dev CPU %.1f ms per job, its children %.1f ms\n",
      l, r*1000/n, (u+s)*1000/n, o*1000/hz/n, k*1000/hz/n }'
  kill $pid; wait $pid 2>/dev/null || true
  unset XDG_CONFIG_HOME
}

for r in $(seq 1 $ROUNDS); do
  run old "$BIN_OLD" "$BIN_CLIENT_OLD"
  run new "$BIN" "$BIN_CLIENT"
done
