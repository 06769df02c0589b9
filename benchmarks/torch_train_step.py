#!/usr/bin/env python3
"""PyTorch CPU eager training step of a GPT-2-small-shaped model, the reference for `transformer-atlas bench-train`.

Run with Debian's python3-torch:  /usr/bin/python3 benchmarks/torch_train_step.py --length 128 --repeat 10
One step is what bench-train times: the forward pass (GPT-2 small's shape, random weights, logits tied to wte),
the mean cross-entropy against the next token at every position, backward, clip_grad_norm_(1.0) and
torch.optim.AdamW (weight decay 0.01 on the matrices only) at a warm-up/cosine learning rate.
"""
import argparse
import math
import statistics
import time

import torch
import torch.nn.functional as F

from torch_forward import V, logits, make_weights


def parameters(w):
    out = [w["wte"], w["wpe"], *w["lnf"]]
    for b in w["blocks"]:
        for pair in b.values():
            out.extend(pair)
    return out


def loss_of(w, ids, targets):
    return F.cross_entropy(logits(w, ids), targets)


def learning_rate(step, peak=3e-4, floor=3e-5, warmup=2, total=11):
    if step < warmup:
        return peak * (step + 1) / warmup
    if step >= total:
        return floor
    return floor + 0.5 * (1 + math.cos(math.pi * (step - warmup) / (total - warmup))) * (peak - floor)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--length", type=int, default=128)
    ap.add_argument("--repeat", type=int, default=10)
    ap.add_argument("--threads", type=int, default=2)
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    gen = torch.Generator().manual_seed(1234)
    w = make_weights(gen, requires_grad=True)
    params = parameters(w)
    ids = torch.randint(0, V, (args.length + 1,), generator=gen)
    inputs, targets = ids[:-1], ids[1:]
    opt = torch.optim.AdamW([{"params": [p for p in params if p.dim() >= 2], "weight_decay": 0.01},
                             {"params": [p for p in params if p.dim() < 2], "weight_decay": 0.0}], lr=3e-4)
    times = {"step": [], "forward": [], "backward": [], "AdamW": []}
    losses = []
    for step in range(args.repeat + 1):  # step 0 warms up and allocates the optimiser state; not counted
        t0 = time.perf_counter()
        loss = loss_of(w, inputs, targets)
        t1 = time.perf_counter()
        loss.backward()
        t2 = time.perf_counter()
        torch.nn.utils.clip_grad_norm_(params, 1.0)
        for group in opt.param_groups:
            group["lr"] = learning_rate(step, total=args.repeat + 1)
        opt.step()
        opt.zero_grad(set_to_none=True)
        t3 = time.perf_counter()
        losses.append(loss.item())
        if step > 0:
            for key, ms in (("step", t3 - t0), ("forward", t1 - t0), ("backward", t2 - t1), ("AdamW", t3 - t2)):
                times[key].append(ms * 1000)
    print(f"torch {torch.__version__}, {args.threads} threads, {sum(p.numel() for p in params)} parameters, "
          f"{args.length} tokens, {args.repeat} steps")
    print(f"loss {losses[0]:.4f} at step 0, {losses[-1]:.4f} at step {args.repeat} (the same batch every step)")
    for key, ms in times.items():
        print(f"  {key:9s} median {statistics.median(ms):8.2f} ms  (min {min(ms):.2f}, max {max(ms):.2f})")


if __name__ == "__main__":
    main()
