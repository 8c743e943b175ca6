#!/usr/bin/env python3
"""A minimal DDP job in the shape spindle-run expects (docs/training-guide.md).

Every process all-reduces its gradients with the others (gloo, CPU), checkpoints every --checkpoint-every steps
into --checkpoint-dir (rank 0 writes, atomically: a temporary file renamed over the last), and on start resumes
from the checkpoint there. The run is deterministic: the data of step s depends only on s and the rank, so a run
that is killed or preempted and resumed ends with the same weights as one that was never interrupted.

Under spindle-run each worker's first process reports every step to the ApplicationMaster (the hang detector's
heartbeat); when Spindle needs the GPUs back, the answer is "checkpoint", and rank 0 writes a checkpoint at once and
says where, so the job loses nothing when it is reclaimed. Outside spindle-run (no SPINDLE_PROGRESS_URL) it trains
on its own:

    torchrun --nnodes=1 --nproc_per_node=2 train_ddp.py --steps 20 --checkpoint-dir /tmp/ckpt --out /tmp/w.txt
"""
import argparse
import os
import time
import urllib.parse
import urllib.request

import torch
import torch.distributed as dist


# ---- spindle-run's worker protocol: HTTP GETs to the ApplicationMaster; copy these into any script. ----

def _am(endpoint, **params):
    """GETs ENDPOINT of the ApplicationMaster with this worker's attempt and rank; None outside spindle-run or on error."""
    base = os.environ.get("SPINDLE_PROGRESS_URL")  # http://am-host:port/progress?attempt=A&rank=R
    if not base:
        return None
    url = urllib.parse.urlsplit(base)
    query = urllib.parse.parse_qs(url.query)
    query.update({k: [str(v)] for k, v in params.items()})
    target = url._replace(path=endpoint, query=urllib.parse.urlencode(query, doseq=True)).geturl()
    try:
        with urllib.request.urlopen(target, timeout=5) as reply:
            return reply.read().decode()
    except OSError:
        return None  # a missed report is not a failure; a long silence is (--hang-timeout)


def report_progress(step):
    """Reports STEP; True when Spindle asks the job to checkpoint now (it is about to take the GPUs back)."""
    answer = _am("/progress", step=step)
    return answer is not None and answer.startswith("checkpoint")


def report_checkpoint(step, path, write_seconds=None):
    """Tells spindle-run (and through it Spindle) that the checkpoint of STEP is complete at PATH, written in
    WRITE_SECONDS: Spindle advises the checkpoint interval (SPINDLE_CHECKPOINT_INTERVAL_SECONDS) from it."""
    if write_seconds is None:
        _am("/checkpointed", step=step, path=path)
    else:
        _am("/checkpointed", step=step, path=path, write_seconds=f"{write_seconds:.3f}")


# ---- the training ----

def main():
    p = argparse.ArgumentParser()
    p.add_argument("--steps", type=int, default=20)
    p.add_argument("--checkpoint-dir", required=True)
    p.add_argument("--checkpoint-every", type=int, default=5)
    p.add_argument("--step-seconds", type=float, default=0.0, help="sleep per step, to stand for real work")
    p.add_argument("--out", help="rank 0 writes the final weights here, one number per line")
    p.add_argument("--events", help="rank 0 appends what happens (start, each step, checkpoints) to this file")
    args = p.parse_args()

    dist.init_process_group("gloo")
    rank, world = dist.get_rank(), dist.get_world_size()
    reporter = int(os.environ.get("LOCAL_RANK", "0")) == 0  # one heartbeat per worker container
    attempt = os.environ.get("SPINDLE_RUN_ATTEMPT", "-")

    def event(line):
        if rank == 0 and args.events:
            with open(args.events, "a") as f:
                f.write(line + "\n")

    torch.manual_seed(0)
    model = torch.nn.Linear(4, 1)
    ddp = torch.nn.parallel.DistributedDataParallel(model)
    opt = torch.optim.SGD(ddp.parameters(), lr=0.05)

    path = os.path.join(args.checkpoint_dir, "checkpoint.pt")

    def checkpoint(done, asked):
        os.makedirs(args.checkpoint_dir, exist_ok=True)
        began = time.monotonic()
        tmp = path + ".tmp"
        torch.save({"model": model.state_dict(), "opt": opt.state_dict(), "step": done}, tmp)
        os.replace(tmp, path)
        written_in = time.monotonic() - began
        event(f"checkpoint step={done}{' asked' if asked else ''}")
        print(f"rank 0: checkpoint at step {done}{' (asked by Spindle)' if asked else ''}", flush=True)
        report_checkpoint(done, path, written_in)

    start = 0
    if os.path.exists(path):
        state = torch.load(path)
        model.load_state_dict(state["model"])
        opt.load_state_dict(state["opt"])
        start = state["step"]
    event(f"start attempt={attempt} step={start} world={world}")
    print(f"rank {rank}/{world}: starting at step {start}", flush=True)

    asked_at = -1
    for step in range(start, args.steps):
        g = torch.Generator().manual_seed(step * 1000 + rank)
        x = torch.randn(8, 4, generator=g)
        y = x.sum(dim=1, keepdim=True)
        opt.zero_grad()
        torch.nn.functional.mse_loss(ddp(x), y).backward()  # DDP all-reduces the gradients here
        opt.step()
        done = step + 1
        event(f"step {done}")
        asked = reporter and report_progress(done)
        if rank == 0 and (done % args.checkpoint_every == 0 or (asked and asked_at < 0)):
            checkpoint(done, asked and done % args.checkpoint_every != 0)
            asked_at = done if asked else asked_at
        if args.step_seconds:
            time.sleep(args.step_seconds)

    if rank == 0 and args.out:
        with open(args.out, "w") as f:
            for v in torch.cat([t.detach().flatten() for t in model.parameters()]).tolist():
                f.write(f"{v:.9f}\n")
    event(f"done step={args.steps}")
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
