#!/usr/bin/env python3
"""PyTorch CPU eager forward of a GPT-2-small-shaped model, the reference for `transformer-atlas bench`.

Run with Debian's python3-torch:  /usr/bin/python3 benchmarks/torch_forward.py --length 128 --repeat 10
The model is GPT-2 small's shape (12 layers, 768 wide, 12 heads, vocabulary 50257) with random weights,
written with torch.nn.functional exactly as Hugging Face's GPT-2 computes it.
"""
import argparse
import math
import statistics
import time

import torch
import torch.nn.functional as F

L, H, D, V, P = 12, 12, 768, 50257, 1024


def make_weights(gen, requires_grad=False):
    def n(*shape):
        return (torch.randn(*shape, generator=gen) * 0.02).requires_grad_(requires_grad)

    def ones():
        return torch.ones(D, requires_grad=requires_grad)

    def zeros(size=D):
        return torch.zeros(size, requires_grad=requires_grad)

    w = {"wte": n(V, D), "wpe": n(P, D), "lnf": (ones(), zeros()), "blocks": []}
    for _ in range(L):
        w["blocks"].append({
            "ln1": (ones(), zeros()), "attn": (n(D, 3 * D), zeros(3 * D)),
            "proj": (n(D, D), zeros()), "ln2": (ones(), zeros()),
            "fc": (n(D, 4 * D), zeros(4 * D)), "fcproj": (n(4 * D, D), zeros()),
        })
    return w


def logits(w, ids):
    """GPT-2's forward pass up to the logits (tied to wte), as Hugging Face computes it."""
    T = ids.shape[0]
    x = w["wte"][ids] + w["wpe"][:T]
    mask = torch.ones(T, T, dtype=torch.bool).tril()
    for b in w["blocks"]:
        h = F.layer_norm(x, (D,), *b["ln1"], eps=1e-5)
        qkv = torch.addmm(b["attn"][1], h, b["attn"][0])
        q, k, v = (t.view(T, H, D // H).transpose(0, 1) for t in qkv.split(D, dim=1))
        s = (q @ k.transpose(1, 2)) / math.sqrt(D // H)
        a = torch.softmax(s.masked_fill(~mask, float("-inf")), dim=-1)
        c = (a @ v).transpose(0, 1).reshape(T, D)
        x = x + torch.addmm(b["proj"][1], c, b["proj"][0])
        h = F.layer_norm(x, (D,), *b["ln2"], eps=1e-5)
        u = F.gelu(torch.addmm(b["fc"][1], h, b["fc"][0]), approximate="tanh")
        x = x + torch.addmm(b["fcproj"][1], u, b["fcproj"][0])
    x = F.layer_norm(x, (D,), *w["lnf"], eps=1e-5)
    return x @ w["wte"].t()


def forward(w, ids):
    return torch.softmax(logits(w, ids), dim=-1)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--length", type=int, default=128)
    ap.add_argument("--repeat", type=int, default=10)
    ap.add_argument("--threads", type=int, default=2)
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    gen = torch.Generator().manual_seed(1234)
    w = make_weights(gen)
    ids = torch.randint(0, V, (args.length,), generator=gen)
    times = []
    with torch.inference_mode():
        forward(w, ids)  # warm-up
        for _ in range(args.repeat):
            t0 = time.perf_counter()
            forward(w, ids)
            times.append((time.perf_counter() - t0) * 1000)
    print(f"torch {torch.__version__}, {args.threads} threads, BLAS: "
          f"{'openblas' if 'openblas' in torch.__config__.show().lower() else 'see torch.__config__.show()'}")
    print(f"GPT-2 small shape, {args.length} tokens: median {statistics.median(times):.2f} ms "
          f"(min {min(times):.2f}, max {max(times):.2f}) over {args.repeat} runs")


if __name__ == "__main__":
    main()
