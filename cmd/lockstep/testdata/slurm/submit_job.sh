#!/bin/bash
#SBATCH --job-name=llama-train
#SBATCH --nodes=2
#SBATCH --ntasks-per-node=8
#SBATCH --gpus-per-node=8
#SBATCH --cpus-per-task=12
#SBATCH --gpu-bind=closest
#SBATCH --switches=1@00:15:00
#SBATCH --output=/mnt/nvme/logs/%j.out
export MASTER_ADDR=$(scontrol show hostnames "$SLURM_JOB_NODELIST" | head -n 1)
export MASTER_PORT=29500
export NCCL_DEBUG=INFO
export NCCL_IB_DISABLE=0
export NCCL_NET_GDR_LEVEL=5
# 2. Launch PyTorch distributed run with precise CPU and GPU affinity
srun --kill-on-bad-exit=1 \
  python -m torch.distributed.run \
  --nnodes=2 \
  --nproc_per_node=8 \
  --rdzv_id=$SLURM_JOB_ID \
  --rdzv_backend=c10d \
  --rdzv_endpoint=$MASTER_ADDR:$MASTER_PORT \
  /opt/train/pretrain_llama.py --config /opt/train/config.yaml
# 3. Inspect Slurm job status and hardware node placement
squeue -u $USER -o "%.18i %.9P %.8j %.8u %.2t %.10M %.6D %R"
