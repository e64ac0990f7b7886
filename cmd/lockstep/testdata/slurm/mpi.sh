#!/bin/sh
# MPI style: one task per GPU, every task its own process.
#SBATCH -J allreduce-bench
#SBATCH -N 2
#SBATCH -n 16
#SBATCH --gpus-per-node=8
#SBATCH -c 8
#SBATCH --gpu-bind=closest
#SBATCH -t 30
#SBATCH -o bench-%j.out
#SBATCH --export=NONE,NCCL_DEBUG=WARN

srun --kill-on-bad-exit=1 ./all_reduce_perf -b 8 -e 8G -f 2 -g 1
