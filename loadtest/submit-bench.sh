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
# The CPU of this shell's reaped children (the calls), in microseconds:
# with the cluster's, what the calls' wall time has to share the cores with.
# (`times` is read in this shell, not in a command substitution's.)
callscpu() { awk 'NR==2 { for (i = 1; i <= 2; i++) { split($i, t, /[ms]/); us += (t[1]*60 + t[2]) * 1000000 } } END { printf "%d", us }' "$1"; }
# timed_calls LABEL CMD...: N sequential runs of CMD; wall, the calls' own
# CPU and the cluster's per call, and how many of the machine's cores they
# kept busy together.
timed_calls() {
  local label=$1; shift
  local cpu0 c0 t0 t1 c1 own kids own1 kids1 hz
  cpu0=$(devcpu); times > "$D/times0"; t0=$(date +%s%N)
  for i in $(seq 1 $N); do "$@" >/dev/null; done
  t1=$(date +%s%N); times > "$D/times1"
  c0=$(callscpu "$D/times0"); c1=$(callscpu "$D/times1")
  read -r own kids <<< "$cpu0"; read -r own1 kids1 <<< "$(devcpu)"; hz=$(getconf CLK_TCK)
  local wall=$(( (t1-t0)/1000 )) calls=$(( c1-c0 )) cluster=$(( ((own1-own)+(kids1-kids))*1000000/hz ))
  echo "$label: $(( wall/N )) us per call; the call's own CPU $(( calls/N )) us; $(devcpu_since "$cpu0"); cores busy $(awk -v a=$calls -v b=$cluster -v w=$wall 'BEGIN { printf "%.2f", (a+b)/w }') of $(nproc)"
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
timed_calls "sequential submit, client build" $BIN_CLIENT submit $D/one.json
fi
if [[ -n ${BIN_OLD:-} ]]; then
t0=$(date +%s%N); for i in $(seq 1 $N); do $BIN_OLD submit $D/one.json >/dev/null; done; t1=$(date +%s%N)
echo "sequential submit, before (polled verdict): $(( (t1-t0)/N/1000 )) us per call"
fi
timed_calls "sequential submit" $BIN submit $D/one.json
t0=$(date +%s%N); $BIN submit $D/sweep >/dev/null 2>$D/sweep.err; t1=$(date +%s%N)
echo "submit DIR of $N: $(( (t1-t0)/N/1000 )) us per job (whole call $(( (t1-t0)/1000000 )) ms); $(cat $D/sweep.err)"
t0=$(date +%s%N); for i in $(seq 1 $N); do echo "$SPEC"; done | $BIN submit - >/dev/null 2>$D/stream.err; t1=$(date +%s%N)
echo "submit - (stream of $N): $(( (t1-t0)/N/1000 )) us per job; $(cat $D/stream.err)"
