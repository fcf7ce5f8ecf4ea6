#!/usr/bin/env python3
"""A PyTorch job on ProcessGroupNCCL for `make gpu-check` (steps 4, 5, 8).

Every rank all-reduces a tensor --steps times from all_reduce_step(); with
--skip R:S rank R skips step S's all-reduce and waits in wait_forever()
(the others hang in step S's all-reduce). With --fr-dump DIR each rank
writes PyTorch's own Flight Recorder dump (torch's API, pickle) to
DIR/nccl_trace_rank_<rank> after its steps, or, when it waits, after
--dump-after seconds. With --hold S each rank stays S seconds in hold()
after its steps, its communicator alive. A helper thread ("loader") sleeps in a loop so the
stacks show more than the main thread.

Ranks from torchrun's variables or RANK/WORLD_SIZE, MASTER_ADDR/PORT;
world size 1 when none is set. Exit 0 when every step completed.
"""
import argparse
import os
import sys
import threading
import time

import torch
import torch.distributed as dist


def loader():
    while True:
        time.sleep(0.05)


def all_reduce_step(t, step):
    dist.all_reduce(t)
    return t


def wait_forever(seconds):
    end = time.time() + seconds
    while time.time() < end:
        time.sleep(0.1)


def hold(seconds):
    """After the steps: the process stays, its comm alive and idle."""
    wait_forever(seconds)


def dump_fr(directory, rank):
    os.makedirs(directory, exist_ok=True)
    data = torch._C._distributed_c10d._dump_nccl_trace(True, True, False)
    path = os.path.join(directory, "nccl_trace_rank_%d" % rank)
    with open(path + ".tmp", "wb") as f:
        f.write(data)
    os.rename(path + ".tmp", path)
    print("rank %d: flight recorder dump %s (%d bytes)" % (rank, path, len(data)), flush=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=20)
    ap.add_argument("--skip", default="")
    ap.add_argument("--fr-dump", default="")
    ap.add_argument("--dump-after", type=float, default=3.0)
    ap.add_argument("--wait", type=float, default=30.0)
    ap.add_argument("--hold", type=float, default=0.0)
    args = ap.parse_args()
    rank = int(os.environ.setdefault("RANK", "0"))
    world = int(os.environ.setdefault("WORLD_SIZE", "1"))
    os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
    os.environ.setdefault("MASTER_PORT", "29533")
    skip_rank, skip_step = (int(x) for x in args.skip.split(":")) if args.skip else (-1, -1)
    torch.cuda.set_device(0)
    dist.init_process_group("nccl", rank=rank, world_size=world, device_id=torch.device("cuda", 0))
    threading.Thread(target=loader, name="loader", daemon=True).start()
    t = torch.ones(1 << 16, device="cuda")
    for step in range(args.steps):
        if rank == skip_rank and step == skip_step:
            print("rank %d: skipping step %d's all-reduce" % (rank, step), flush=True)
            if args.fr_dump:
                time.sleep(args.dump_after)
                dump_fr(args.fr_dump, rank)
            wait_forever(args.wait)
            os._exit(0)
        all_reduce_step(t, step)
        if rank != skip_rank and skip_step >= 0 and step == skip_step:
            # The all-reduce above is stuck on the GPU: dump while it waits.
            if args.fr_dump:
                time.sleep(args.dump_after)
                dump_fr(args.fr_dump, rank)
            wait_forever(args.wait)
            os._exit(0)
    torch.cuda.synchronize()
    expect = float(world ** args.steps)
    ok = abs(t[0].item() - expect) < 1e-3 * expect
    if args.fr_dump:
        dump_fr(args.fr_dump, rank)
    print("rank %d: %d all-reduces %s" % (rank, args.steps, "ok" if ok else "WRONG"), flush=True)
    if args.hold > 0:
        print("rank %d: holding %.0f s (pid %d)" % (rank, args.hold, os.getpid()), flush=True)
        hold(args.hold)
    dist.destroy_process_group()
    return 0 if ok else 3


if __name__ == "__main__":
    sys.exit(main())
