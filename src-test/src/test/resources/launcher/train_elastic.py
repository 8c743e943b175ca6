#!/usr/bin/env python3
"""An elastic DDP job for spindle-run --min-workers (docs/training-guide.md, "Elastic jobs").

What makes it elastic is its data: each step trains on one global batch derived from the step number alone, split
evenly across however many processes run now. DDP averages the processes' gradients, so every step follows the
gradient of the whole global batch at every world size, and a job that grows and shrinks ends with the weights of a
job that never changed size -- up to the order in which floating-point numbers are added, which differs between
world sizes (float64 keeps that difference near 1e-15).

spindle-run restarts the workers at each new size; this script resumes from its checkpoint each time it starts.
Rank 0 checkpoints every --checkpoint-every steps and whenever the ApplicationMaster's answer to a progress report
asks for it ("checkpoint <notice>": Spindle wants workers back; "checkpoint grow": more workers arrived), once per
request, and reports where. Outside spindle-run (no SPINDLE_PROGRESS_URL) it trains on its own:

    torchrun --nnodes=1 --nproc_per_node=4 train_elastic.py --steps 40 --checkpoint-dir /tmp/ckpt --out /tmp/w.txt
"""
import argparse
import os
import time
import urllib.parse
import urllib.request

import torch
import torch.distributed as dist


# ---- spindle-run's worker protocol (as in examples/pytorch/train_ddp.py) ----

def _am(endpoint, **params):
    """GETs ENDPOINT of the ApplicationMaster with this worker's attempt and rank; None outside spindle-run or on
    error."""
    base = os.environ.get("SPINDLE_PROGRESS_URL")
    if not base:
        return None
    url = urllib.parse.urlsplit(base)
    query = urllib.parse.parse_qs(url.query)
    query.update({k: [str(v)] for k, v in params.items()})
    target = url._replace(path=endpoint, query=urllib.parse.urlencode(query, doseq=True)).geturl()
    try:
        with urllib.request.urlopen(target, timeout=5) as reply:
            return reply.read().decode().strip()
    except OSError:
        return None


def checkpoint_request(step):
    """Reports STEP; the checkpoint the ApplicationMaster asks for ("checkpoint <notice>", "checkpoint grow"), or
    None."""
    answer = _am("/progress", step=step)
    return answer if answer is not None and answer.startswith("checkpoint") else None


def report_checkpoint(step, path):
    _am("/checkpointed", step=step, path=path)


# ---- the training ----

def main():
    p = argparse.ArgumentParser()
    p.add_argument("--steps", type=int, default=40)
    p.add_argument("--global-batch", type=int, default=48, help="samples per step, split across the processes")
    p.add_argument("--checkpoint-dir", required=True)
    p.add_argument("--checkpoint-every", type=int, default=10)
    p.add_argument("--step-seconds", type=float, default=0.0, help="sleep per step, to stand for real work")
    p.add_argument("--out", help="rank 0 writes the final weights here, one number per line")
    p.add_argument("--events", help="rank 0 appends what happens (start, each step, checkpoints) to this file")
    p.add_argument("--hold-at", type=int, default=-1, help="tests: wait after this many steps until --release exists")
    p.add_argument("--release", help="tests: the file that ends the wait of --hold-at")
    args = p.parse_args()

    dist.init_process_group("gloo")
    rank, world = dist.get_rank(), dist.get_world_size()
    if args.global_batch % world:
        raise SystemExit(f"--global-batch {args.global_batch} does not split evenly across {world} processes")
    share = args.global_batch // world
    reporter = int(os.environ.get("LOCAL_RANK", "0")) == 0  # one heartbeat per worker container
    attempt = os.environ.get("SPINDLE_RUN_ATTEMPT", "-")

    def event(line):
        if rank == 0 and args.events:
            with open(args.events, "a") as f:
                f.write(line + "\n")

    torch.manual_seed(0)
    model = torch.nn.Linear(4, 1).double()
    ddp = torch.nn.parallel.DistributedDataParallel(model)
    opt = torch.optim.SGD(ddp.parameters(), lr=0.05)
    path = os.path.join(args.checkpoint_dir, "checkpoint.pt")

    def checkpoint(done, asked):
        os.makedirs(args.checkpoint_dir, exist_ok=True)
        tmp = path + ".tmp"
        torch.save({"model": model.state_dict(), "opt": opt.state_dict(), "step": done}, tmp)
        os.replace(tmp, path)
        event(f"checkpoint step={done}{' asked' if asked else ''}")
        print(f"rank 0: checkpoint at step {done}{' (asked)' if asked else ''}", flush=True)
        report_checkpoint(done, path)

    start = 0
    if os.path.exists(path):
        state = torch.load(path)
        model.load_state_dict(state["model"])
        opt.load_state_dict(state["opt"])
        start = state["step"]
    event(f"start attempt={attempt} step={start} world={world}")
    print(f"rank {rank}/{world}: starting at step {start}", flush=True)

    answered = None  # the checkpoint request already answered: each is answered once

    def hold(done):
        """A test's stand-in for a long job: waits, still reporting and checkpointing when asked, until released."""
        nonlocal answered
        while not os.path.exists(args.release):
            request = checkpoint_request(done) if reporter else None
            if rank == 0 and request and request != answered:
                checkpoint(done, True)
                answered = request
            time.sleep(0.2)

    for step in range(start, args.steps):
        if args.release and 0 <= args.hold_at <= step:
            hold(step)
        g = torch.Generator().manual_seed(step)
        x = torch.randn(args.global_batch, 4, generator=g, dtype=torch.float64)
        y = x.sum(dim=1, keepdim=True)
        mine = slice(rank * share, (rank + 1) * share)
        opt.zero_grad()
        torch.nn.functional.mse_loss(ddp(x[mine]), y[mine]).backward()  # DDP averages the gradients here
        opt.step()
        done = step + 1
        event(f"step {done}")
        request = checkpoint_request(done) if reporter else None
        if rank == 0 and (done % args.checkpoint_every == 0 or (request and request != answered)):
            checkpoint(done, request is not None and done % args.checkpoint_every != 0)
            answered = request or answered
        if args.step_seconds:
            time.sleep(args.step_seconds)

    if rank == 0 and args.out:
        with open(args.out, "w") as f:
            for v in torch.cat([t.detach().flatten() for t in model.parameters()]).tolist():
                f.write(f"{v!r}\n")
    event(f"done step={args.steps}")
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
