#!/usr/bin/python3
"""The PyTorch side of the activation-patching benchmark (docs/benchmarks.md): a residual-stream sweep on GPT-2
small's shape (12 layers, 12 heads, 768 wide, 50257 tokens; random weights) at 32 tokens, 12 x 32 patched forward
passes, as TransformerLens-style tools run it: each patch a whole forward pass of the corrupted input with a hook that
writes the clean stream entering block l at position t. The forward is GPT-2's (pre-LN, tanh GELU, tied head),
in float32, two threads.

    OPENBLAS_NUM_THREADS=1 /usr/bin/python3 benchmarks/patching_vs_torch.py [--repeat 3]

prints the median time of the whole sweep. Compare with
    transformer-atlas patch --shape gpt2-small --tokens <the same 32 ids> --corrupted-tokens <...> --target '#11'
"""

import argparse
import math
import time

import torch

L, H, D, V, T = 12, 12, 768, 50257, 32


def weights(seed):
    g = torch.Generator().manual_seed(seed)

    def normal(*shape):
        return torch.randn(*shape, generator=g) * 0.02

    w = {"wte": normal(V, D), "wpe": normal(1024, D)}
    for i in range(L):
        w[f"{i}.ln1"] = (torch.ones(D), torch.zeros(D))
        w[f"{i}.ln2"] = (torch.ones(D), torch.zeros(D))
        w[f"{i}.attn"] = (normal(D, 3 * D), torch.zeros(3 * D))
        w[f"{i}.proj"] = (normal(D, D), torch.zeros(D))
        w[f"{i}.fc"] = (normal(D, 4 * D), torch.zeros(4 * D))
        w[f"{i}.out"] = (normal(4 * D, D), torch.zeros(D))
    w["lnf"] = (torch.ones(D), torch.zeros(D))
    return w


def forward(w, tokens, hook=None):
    """Returns the logits and the stream entering each block; hook(layer, x) may replace that stream."""
    x = w["wte"][tokens] + w["wpe"][: len(tokens)]
    streams = []
    mask = torch.full((T, T), float("-inf")).triu(1)
    for i in range(L):
        if hook is not None:
            x = hook(i, x)
        streams.append(x)
        h = torch.nn.functional.layer_norm(x, (D,), *w[f"{i}.ln1"])
        q, k, v = (h @ w[f"{i}.attn"][0] + w[f"{i}.attn"][1]).split(D, dim=1)
        q, k, v = (t.reshape(T, H, D // H).transpose(0, 1) for t in (q, k, v))
        a = torch.softmax(q @ k.transpose(1, 2) / math.sqrt(D // H) + mask, dim=-1)
        x = x + (a @ v).transpose(0, 1).reshape(T, D) @ w[f"{i}.proj"][0] + w[f"{i}.proj"][1]
        h = torch.nn.functional.layer_norm(x, (D,), *w[f"{i}.ln2"])
        u = torch.nn.functional.gelu(h @ w[f"{i}.fc"][0] + w[f"{i}.fc"][1], approximate="tanh")
        x = x + u @ w[f"{i}.out"][0] + w[f"{i}.out"][1]
    return torch.nn.functional.layer_norm(x, (D,), *w["lnf"]) @ w["wte"].T, streams


def sweep(w, clean, corrupted):
    _, clean_streams = forward(w, clean)
    out = torch.zeros(L, T)
    for layer in range(L):
        for t in range(T):
            def hook(i, x, layer=layer, t=t):
                if i != layer:
                    return x
                x = x.clone()
                x[t] = clean_streams[i][t]
                return x
            logits, _ = forward(w, corrupted, hook)
            out[layer, t] = logits[-1, 11] - logits[-1, 12]
    return out


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    torch.set_num_threads(2)
    torch.set_grad_enabled(False)
    w = weights(1234)
    clean = torch.arange(100, 100 + T)
    corrupted = clean.clone()
    corrupted[5] = 999
    times = []
    for _ in range(args.repeat):
        start = time.perf_counter()
        sweep(w, clean, corrupted)
        times.append(time.perf_counter() - start)
    times.sort()
    print(f"PyTorch {torch.__version__}: {L} x {T} patched forwards, median {times[len(times) // 2]:.3f} s "
          f"(min {times[0]:.3f}, max {times[-1]:.3f}) over {args.repeat}")


if __name__ == "__main__":
    main()
