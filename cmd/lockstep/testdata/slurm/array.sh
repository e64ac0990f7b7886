#!/bin/bash
# A sweep: 16 tasks, at most 4 running at once.
#SBATCH --job-name=sweep
#SBATCH --array=0-15%4
#SBATCH --gpus-per-node=1
#SBATCH --time=01:00:00
#SBATCH --output=sweep/%A_%a.out
#SBATCH --priority=10 --nice=5

lr=$(python -c "print(10 ** (-5 + $SLURM_ARRAY_TASK_ID / 4))")
srun python finetune.py --lr "$lr" --seed "$SLURM_ARRAY_TASK_ID"
