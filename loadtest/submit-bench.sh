#!/usr/bin/env bash
# 200 sequential `lockstep submit` calls vs one `lockstep submit DIR` of 200
# specs, against one dev cluster, in the same run.
# BIN is the binary to measure (default: built here, static, as released);
# BIN_OLD, when set, another one measured the same way first.
# BIN_CLIENT is the client build (-tags lockstep_client) measured beside
# it (default: built here too; none when BIN is given).
#   loadtest/submit-bench.sh                 # this checkout
#   BIN_OLD=/tmp/lockstep-old loadtest/submit-bench.sh
set -euo pipefail
D=$(mktemp -d)
# dev writes its context into the config file and makes it current: a
# private one, so the developer's own stays as it is.
export XDG_CONFIG_HOME=$D/config
unset LOCKSTEP_CONFIG
if [[ -z ${BIN:-} ]]; then
  BIN=$D/lockstep
  (cd "$(dirname "$0")/.." && CGO_ENABLED=0 go build -o "$BIN" ./cmd/lockstep)
  if [[ -z ${BIN_CLIENT:-} ]]; then
    BIN_CLIENT=$D/lockstep-client
    (cd "$(dirname "$0")/.." && CGO_ENABLED=0 go build -tags lockstep_client -o "$BIN_CLIENT" ./cmd/lockstep)
  fi
fi
$BIN dev --data-dir $D/dev -N 32 --leaves 4 --web-listen "" --metrics-addr "" --nats-listen 127.0.0.1:14222 --etcd-listen 127.0.0.1:12379 > $D/dev.log 2>&1 &
DEV=$!
trap 'kill $DEV; wait $DEV 2>/dev/null || true; rm -rf $D' EXIT
for i in $(seq 1 120); do grep -q "cluster is up" $D/dev.log && break; sleep 0.5; done
grep -q "cluster is up" $D/dev.log || { cat $D/dev.log; exit 1; }
# The cluster's CPU while the calls run, competing with them on this
# machine: the dev process's own (utime+stime) and its reaped children's
# (the ranks and their supervisors), in clock ticks.
devcpu() { awk '{print $14+$15, $16+$17}' /proc/$DEV/stat; }
devcpu_since() {
  read -r own kids <<< "$1"; read -r own1 kids1 <<< "$(devcpu)"; hz=$(getconf CLK_TCK)
  echo "cluster CPU $(( (own1-own)*1000000/hz/N )) us per job, its children $(( (kids1-kids)*1000000/hz/N )) us (jobs still running excluded)"
}
SPEC='{"name":"s","gang":{"nodes":1,"gpusPerNode":1},"command":["true"]}'
echo "$SPEC" > $D/one.json
mkdir $D/sweep
for i in $(seq 1 200); do echo "$SPEC" > $D/sweep/s$i.json; done
N=200
t0=$(date +%s%N); for i in $(seq 1 $N); do /bin/true; done; t1=$(date +%s%N)
echo "the loop itself (/bin/true): $(( (t1-t0)/N/1000 )) us per call"
t0=$(date +%s%N); for i in $(seq 1 $N); do $BIN --help >/dev/null; done; t1=$(date +%s%N)
echo "startup floor (lockstep --help): $(( (t1-t0)/N/1000 )) us per call"
if [[ -n ${BIN_CLIENT:-} ]]; then
t0=$(date +%s%N); for i in $(seq 1 $N); do $BIN_CLIENT --help >/dev/null; done; t1=$(date +%s%N)
echo "startup floor, client build: $(( (t1-t0)/N/1000 )) us per call"
cpu0=$(devcpu); t0=$(date +%s%N); for i in $(seq 1 $N); do $BIN_CLIENT submit $D/one.json >/dev/null; done; t1=$(date +%s%N)
echo "sequential submit, client build: $(( (t1-t0)/N/1000 )) us per call; $(devcpu_since "$cpu0")"
fi
if [[ -n ${BIN_OLD:-} ]]; then
t0=$(date +%s%N); for i in $(seq 1 $N); do $BIN_OLD submit $D/one.json >/dev/null; done; t1=$(date +%s%N)
echo "sequential submit, before (polled verdict): $(( (t1-t0)/N/1000 )) us per call"
fi
cpu0=$(devcpu); t0=$(date +%s%N); for i in $(seq 1 $N); do $BIN submit $D/one.json >/dev/null; done; t1=$(date +%s%N)
echo "sequential submit: $(( (t1-t0)/N/1000 )) us per call; $(devcpu_since "$cpu0")"
t0=$(date +%s%N); $BIN submit $D/sweep >/dev/null 2>$D/sweep.err; t1=$(date +%s%N)
echo "submit DIR of $N: $(( (t1-t0)/N/1000 )) us per job (whole call $(( (t1-t0)/1000000 )) ms); $(cat $D/sweep.err)"
t0=$(date +%s%N); for i in $(seq 1 $N); do echo "$SPEC"; done | $BIN submit - >/dev/null 2>$D/stream.err; t1=$(date +%s%N)
echo "submit - (stream of $N): $(( (t1-t0)/N/1000 )) us per job; $(cat $D/stream.err)"
