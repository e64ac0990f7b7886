#!/bin/bash
# One stage of a pipeline: submitted with -d afterok:PREVIOUS, and never
# two of the same name at once.
#SBATCH --job-name=pipeline
#SBATCH --dependency=singleton
#SBATCH --gpus-per-node=8
#SBATCH --no-requeue
#SBATCH --chdir=stages

stage=${1:?usage: chain.sh STAGE}
srun python "stage_$stage.py"
