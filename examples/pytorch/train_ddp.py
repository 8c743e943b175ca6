#!/usr/bin/env python3
"""A minimal DDP job in the shape spindle-run expects (docs/training-guide.md).

Every process all-reduces its gradients with the others (gloo, CPU), checkpoints every --checkpoint-every steps
into --checkpoint-dir (rank 0 writes, atomically: a temporary file renamed over the last), and on start resumes
from the newest checkpoint there. The run is deterministic: the data of step s depends only on s and the rank, so
a run that is killed and resumed ends with the same weights as one that was never interrupted.

    torchrun --nnodes=1 --nproc-per-node=2 train_ddp.py --steps 20 --checkpoint-dir /tmp/ckpt --out /tmp/w.txt
"""
import argparse
import os

import torch
import torch.distributed as dist


def checkpoint_path(directory):
    return os.path.join(directory, "checkpoint.pt")


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--steps", type=int, default=20)
    p.add_argument("--checkpoint-dir", required=True)
    p.add_argument("--checkpoint-every", type=int, default=5)
    p.add_argument("--out", help="rank 0 writes the final weights here, one number per line")
    p.add_argument("--fail-at-step", type=int, default=-1, help="rank 1 exits 1 before this step (tests)")
    args = p.parse_args()

    dist.init_process_group("gloo")
    rank, world = dist.get_rank(), dist.get_world_size()
    torch.manual_seed(0)
    model = torch.nn.Linear(4, 1)
    ddp = torch.nn.parallel.DistributedDataParallel(model)
    opt = torch.optim.SGD(ddp.parameters(), lr=0.05)

    start = 0
    path = checkpoint_path(args.checkpoint_dir)
    if os.path.exists(path):
        state = torch.load(path)
        model.load_state_dict(state["model"])
        opt.load_state_dict(state["opt"])
        start = state["step"]
    print(f"rank {rank}/{world}: starting at step {start}", flush=True)

    for step in range(start, args.steps):
        if step == args.fail_at_step and rank == 1:
            print(f"rank {rank}: failing before step {step}", flush=True)
            os._exit(1)
        g = torch.Generator().manual_seed(step * 1000 + rank)
        x = torch.randn(8, 4, generator=g)
        y = x.sum(dim=1, keepdim=True)
        opt.zero_grad()
        torch.nn.functional.mse_loss(ddp(x), y).backward()  # DDP all-reduces the gradients here
        opt.step()
        done = step + 1
        if done % args.checkpoint_every == 0 and rank == 0:
            os.makedirs(args.checkpoint_dir, exist_ok=True)
            tmp = path + ".tmp"
            torch.save({"model": model.state_dict(), "opt": opt.state_dict(), "step": done}, tmp)
            os.replace(tmp, path)
            print(f"rank 0: checkpoint at step {done}", flush=True)

    if rank == 0 and args.out:
        with open(args.out, "w") as f:
            for v in torch.cat([t.detach().flatten() for t in model.parameters()]).tolist():
                f.write(f"{v:.9f}\n")
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
