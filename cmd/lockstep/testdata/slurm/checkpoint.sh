#!/bin/bash
# Checkpointing: USR1 to the batch shell 120 s before the time limit;
# the trap saves and the job is requeued to resume.
#SBATCH --job-name=ckpt-train
#SBATCH --nodes=2
#SBATCH --gpus-per-node=8
#SBATCH --ntasks-per-node=8
#SBATCH --time=04:00:00
#SBATCH --signal=B:USR1@120
#SBATCH --requeue
#SBATCH --open-mode=append

save_and_requeue() {
  echo "checkpoint requested at $(date)"
  kill -USR1 "$train_pid"
  wait "$train_pid"
}
trap save_and_requeue USR1
srun python train.py --resume-from latest &
train_pid=$!
wait "$train_pid"
