#!/usr/bin/env bash
# Before/after of the live harness: two or more builds, each running the
# same `lockstep loadtest` in turn (never at once), alternating, for
# ROUNDS rounds; then each build's means and their ratio to the first's.
# One run's p99 swings by 2-3 x on this machine, and its speed by more
# over a day: compare builds within one run of this script only.
#   loadtest/live-ab.sh /tmp/lockstep-old .      # "." builds this checkout
#   RATE=800 ROUNDS=4 loadtest/live-ab.sh /tmp/a /tmp/b /tmp/c
# RATE (500), ROUNDS (3), SPAN (15s) and FLAGS (--insecure --durations
# 500ms:1 --raw-txns 0) shape each run; OUT keeps the reports (a
# temporary folder by default). Build the other side as "." is built:
#   git worktree add /tmp/before REV && (cd /tmp/before &&
#     CGO_ENABLED=0 go build -o /tmp/lockstep-before ./cmd/lockstep)
set -euo pipefail
export LC_ALL=C # the decimal point of printf and awk
(($# >= 2)) || { sed -n '2,13p' "$0"; exit 2; }
RATE=${RATE:-500} ROUNDS=${ROUNDS:-3} SPAN=${SPAN:-15s}
FLAGS=${FLAGS-"--insecure --durations 500ms:1 --raw-txns 0"}
D=$(mktemp -d)
trap 'rm -rf "$D"' EXIT
OUT=${OUT:-$D/reports}
mkdir -p "$OUT"
bins=()
for b in "$@"; do
  if [[ $b == . ]]; then
    (cd "$(dirname "$0")/.." && CGO_ENABLED=0 go build -o "$D/lockstep-here" ./cmd/lockstep)
    b=$D/lockstep-here
  fi
  [[ -f $b && -x $b ]] || { echo "$b: not an executable file" >&2; exit 2; }
  bins+=("$b")
done

# A run without figures (a p99 of NaN, an external cluster's unmeasured
# CPU) ends the comparison with its log rather than silently.
fail() { echo "$dir: $1" >&2; tail -5 "$dir.log" >&2; exit 1; }

# One line per run: build index, round, running/s, p99 ms, CPU s, jobs.
for r in $(seq 1 "$ROUNDS"); do
  for i in "${!bins[@]}"; do
    dir=$OUT/b$i-r$r
    # shellcheck disable=SC2086 # FLAGS is a list of flags
    "${bins[$i]}" loadtest $FLAGS --rate "$RATE" --span "$SPAN" --out "$dir" > "$dir.log" 2>&1 ||
      { cat "$dir.log" >&2; exit 1; }
    line=$(grep -o '^[0-9,]* jobs at .* p99 [0-9,]* ms' "$dir.log") || fail "no result line"
    jobs=$(sed -E 's/^([0-9,]*) jobs.*/\1/; s/,//g' <<< "$line")
    rate=$(sed -E 's/.*offered: ([0-9.]*) running.*/\1/' <<< "$line")
    p99=$(sed -E 's/.*p99 ([0-9,]*) ms/\1/; s/,//g' <<< "$line")
    cpu=$(grep -o 'during the load: [0-9.]* CPU s' "$dir/summary.md" | grep -o '[0-9.]*') || fail "no process CPU (embedded runs only)"
    echo "$i $r $rate $p99 $cpu $jobs" >> "$D/runs"
    printf 'round %d  %-28s %7s running/s  p99 %6s ms  %5s CPU s  %.2f ms CPU/job\n' \
      "$r" "$(basename "${bins[$i]}")" "$rate" "$p99" "$cpu" "$(awk -v c="$cpu" -v j="$jobs" 'BEGIN { print c * 1000 / j }')"
  done
done

echo
echo "means over $ROUNDS rounds at $RATE/s offered, ratio to the first build:"
awk -v names="$(for b in "${bins[@]}"; do basename "$b"; done | paste -sd' ')" '
  { n[$1]++; rate[$1] += $3; p99[$1] += $4; cpu[$1] += $5 / $6 * 1000 }
  END {
    split(names, name, " ")
    for (i = 0; i in n; i++) {
      r = rate[i] / n[i]; p = p99[i] / n[i]; c = cpu[i] / n[i]
      if (i == 0) { r0 = r; p0 = p; c0 = c }
      printf "  %-28s %7.1f running/s (%.2f x)  p99 %6.0f ms (%.2f x)  %.2f ms CPU/job (%.2f x)\n",
        name[i + 1], r, r / r0, p, p / p0, c, c / c0
    }
  }' "$D/runs"
