#!/bin/sh
# A demo trainer for Lockstep's checkpoint draining, in plain sh (no Go, no
# Lockstep client). Each rank counts steps; on the checkpoint signal it saves
# its step counter under $LOCKSTEP_CHECKPOINT_DIR, acknowledges by writing
# `step=N path=DIR` to the file named by $LOCKSTEP_CHECKPOINT_ACK, and exits.
# When requeued it resumes from $LOCKSTEP_RESUME_FROM.
#
#   TOTAL_STEPS   steps to run (default 200)
#   STEP_SECONDS  time per step (default 0.05)
#
# Every step is appended to $DIR/steps-rank-$RANK.log as "step attempt", so
# a test can check each step ran exactly once across preemptions.
set -u
# Install the handler first: a signal that arrives before it would kill us.
asked=0
trap 'asked=1' USR1

dir="${LOCKSTEP_CHECKPOINT_DIR:-./checkpoints}"
mkdir -p "$dir"
total="${TOTAL_STEPS:-200}"
pause="${STEP_SECONDS:-0.05}"
ckpt="$dir/rank-$RANK.step"

step=0
if [ -n "${LOCKSTEP_RESUME_FROM:-}" ] && [ -f "$LOCKSTEP_RESUME_FROM/rank-$RANK.step" ]; then
  step=$(cat "$LOCKSTEP_RESUME_FROM/rank-$RANK.step")
  echo "rank $RANK resuming from step $step (restart $LOCKSTEP_RESTART_COUNT)"
fi

while [ "$step" -lt "$total" ]; do
  if [ "$asked" = 1 ]; then
    # Save atomically, then acknowledge: the scheduler frees the GPUs now.
    echo "$step" > "$ckpt.tmp" && mv "$ckpt.tmp" "$ckpt"
    echo "step=$step path=$dir" > "$LOCKSTEP_CHECKPOINT_ACK"
    echo "rank $RANK checkpointed at step $step"
    exit 0
  fi
  step=$((step + 1))
  echo "$step $LOCKSTEP_ATTEMPT" >> "$dir/steps-rank-$RANK.log"
  sleep "$pause"
done
echo "rank $RANK done after $step steps"
