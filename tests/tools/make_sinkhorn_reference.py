#!/usr/bin/python3
"""An independent PyTorch reference for Sparse Sinkhorn attention (tests/tst_sinkhorn.cpp).

Tay et al. 2020, "Sparse Sinkhorn Attention", §3: the sequence is cut into blocks of b tokens; a meta sorting network
reads each block's sum (ψ_P, block-wise pooling) through a two-layer feed-forward network and gives, for every block,
a score for each place it may be sorted to: R = ReLU(P W_fc + b_fc) W_proj + b_proj. Sinkhorn's balancing (Mena et al.
2018) makes R / τ a nearly doubly stochastic matrix S by normalising its rows and then its columns k times in log
space. The sorted keys and values of block I are Σ_J S_IJ K_J and Σ_J S_IJ V_J; each query of block I attends, in one
softmax, to the sorted block's b keys and to its own block's b keys (the paper's mixture with local attention).

Conventions where sources differ, shared with the engine (model/sinkhorn.h):
- the sorting network's logits are left unbounded (the paper puts σ after F_P; a ReLU there would give every
  negative score no gradient);
- one sort per layer, shared by the heads, from the LN₁ output the queries, keys and values read;
- a short last block is padded with zero keys and values, which the local half masks and the sorted half mixes in
  as zeros; row I of S reads the first N = ⌈T / b⌉ outputs of the network (it has ⌈n_positions / b⌉);
- no Gumbel noise here (inference); the engine adds it in training only.

This script builds the sorted keys and values explicitly, block by block; the engine instead mixes the full score
matrix with S (the same numbers by linearity). Everything in float64 from float32 weights. Run with Debian's
interpreter:

    /usr/bin/python3 tests/tools/make_sinkhorn_reference.py

It rewrites tests/data/sinkhorn/tiny/ (2 layers, blocks of 4, F32) and tests/data/sinkhorn/tiny_ref/:
  input.json         {"tokens", "targets"}
  sort.{i}.npy       [N, N] layer i's S
  block_probs.{i}.npy [H, T, 2b] each query's weights over the sorted block's keys, then its own block's
  probs.{i}.npy      [H, T, T] the weight of each value in each query's context
  out.{i}.npy        [T, D] layer i's output
  logits.npy         [T, V]
  loss.npy           () the mean cross-entropy over the targets that are not -1
  grad.<p>.npy       the gradient of the loss for every parameter
"""
import json
import math
import os
import sys

import numpy as np
import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from make_reference import fresh_dir, random_weights, write_safetensors, write_text  # noqa: E402

DATA = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "data"))
BLOCK, ITERATIONS, TAU = 4, 7, 0.75
CFG = dict(n_layer=2, n_head=4, n_embd=32, n_positions=16, vocab_size=50, activation_function="gelu_new",
           atlas_causal=False)
TOKENS = [3, 17, 42, 8, 0, 25, 49, 11, 17, 5, 30]  # 11: three blocks, the last one token short
TARGETS = [-1, 9, -1, -1, 12, -1, 33, -1, -1, 5, 21]


def sinkhorn(logits):
    z = logits / TAU
    for _ in range(ITERATIONS):
        z = z - torch.logsumexp(z, dim=1, keepdim=True)
        z = z - torch.logsumexp(z, dim=0, keepdim=True)
    return torch.exp(z)


def block(w, i, x):
    D, H, b = CFG["n_embd"], CFG["n_head"], BLOCK
    d, h, T = D // H, f"h.{i}.", x.shape[0]
    N = -(-T // b)
    ln1 = F.layer_norm(x, (D,), w[h + "ln_1.weight"], w[h + "ln_1.bias"], eps=1e-5)
    # the sorting network
    padded = torch.cat([ln1, ln1.new_zeros(N * b - T, D)])
    pooled = padded.reshape(N, b, D).sum(dim=1)
    hidden = torch.relu(pooled @ w[h + "attn.sort.c_fc.weight"] + w[h + "attn.sort.c_fc.bias"])
    logits = hidden @ w[h + "attn.sort.c_proj.weight"][:, :N] + w[h + "attn.sort.c_proj.bias"][:N]
    S = sinkhorn(logits)
    # attention over the sorted block and the own block
    qkv = ln1 @ w[h + "attn.c_attn.weight"] + w[h + "attn.c_attn.bias"]
    q, k, v = (t.reshape(T, H, d).permute(1, 0, 2) for t in qkv.split(D, dim=1))  # [H, T, d]
    pad = lambda t: torch.cat([t, t.new_zeros(H, N * b - T, d)], dim=1).reshape(H, N, b, d)  # noqa: E731
    kb, vb, qb = pad(k), pad(v), pad(q)
    ks, vs = torch.einsum("IJ,hJrc->hIrc", S, kb), torch.einsum("IJ,hJrc->hIrc", S, vb)
    keys, values = torch.cat([ks, kb], dim=2), torch.cat([vs, vb], dim=2)  # [H, N, 2b, d]
    scores = torch.einsum("hIqc,hIrc->hIqr", qb, keys) / math.sqrt(d)  # [H, N, b, 2b]
    present = torch.arange(N * b).reshape(N, b) < T
    local_mask = torch.cat([torch.ones(N, b, dtype=torch.bool), present], dim=1)  # [N, 2b]
    scores = scores.masked_fill(~local_mask[None, :, None, :], float("-inf"))
    weights = torch.softmax(scores, dim=-1)
    context = torch.einsum("hIqr,hIrc->hIqc", weights, values).reshape(H, N * b, d)[:, :T]
    block_probs = weights.reshape(H, N * b, 2 * b)[:, :T]
    # the weight of each value in each context: a_r S_IJ for key J·b + r, plus c_r for the own block's
    eye = torch.eye(N, dtype=S.dtype)
    eff = torch.einsum("hIqr,IJ->hIqJr", weights[..., :b], S) + torch.einsum("hIqr,IJ->hIqJr", weights[..., b:], eye)
    probs = eff.reshape(H, N * b, N * b)[:, :T, :T]
    merged = context.permute(1, 0, 2).reshape(T, D)
    mid = x + merged @ w[h + "attn.c_proj.weight"] + w[h + "attn.c_proj.bias"]
    ln2 = F.layer_norm(mid, (D,), w[h + "ln_2.weight"], w[h + "ln_2.bias"], eps=1e-5)
    up = F.gelu(ln2 @ w[h + "mlp.c_fc.weight"] + w[h + "mlp.c_fc.bias"], approximate="tanh")
    out = mid + up @ w[h + "mlp.c_proj.weight"] + w[h + "mlp.c_proj.bias"]
    return out, {"sort": S, "block_probs": block_probs, "probs": probs}


def forward(w):
    T = len(TOKENS)
    x = w["wte.weight"][torch.tensor(TOKENS)] + w["wpe.weight"][:T]
    out = {}
    for i in range(CFG["n_layer"]):
        x, parts = block(w, i, x)
        for name, value in parts.items():
            out[f"{name}.{i}"] = value
        out[f"out.{i}"] = x
    D = CFG["n_embd"]
    logits = F.layer_norm(x, (D,), w["ln_f.weight"], w["ln_f.bias"], eps=1e-5) @ w["wte.weight"].T
    out["logits"] = logits
    out["loss"] = F.cross_entropy(logits, torch.tensor(TARGETS), ignore_index=-1)
    return out


def main():
    model, ref = os.path.join(DATA, "sinkhorn", "tiny"), os.path.join(DATA, "sinkhorn", "tiny_ref")
    fresh_dir(model)
    fresh_dir(ref)
    weights = random_weights(CFG, seed=78)
    g = torch.Generator().manual_seed(79)
    D, N = CFG["n_embd"], -(-CFG["n_positions"] // BLOCK)
    for i in range(CFG["n_layer"]):
        h = f"h.{i}.attn.sort."
        weights[h + "c_fc.weight"] = torch.randn(D, D, generator=g) * 0.2
        weights[h + "c_fc.bias"] = torch.randn(D, generator=g) * 0.1
        weights[h + "c_proj.weight"] = torch.randn(D, N, generator=g) * 0.2
        weights[h + "c_proj.bias"] = torch.randn(N, generator=g) * 0.1
    config = {"model_type": "gpt2", "architectures": ["GPT2LMHeadModel"], "n_layer": CFG["n_layer"],
              "n_head": CFG["n_head"], "n_embd": D, "n_inner": None, "n_positions": CFG["n_positions"],
              "n_ctx": CFG["n_positions"], "vocab_size": CFG["vocab_size"], "layer_norm_epsilon": 1e-5,
              "activation_function": CFG["activation_function"], "atlas_causal": False,
              "atlas_sinkhorn_block": BLOCK, "atlas_sinkhorn_iterations": ITERATIONS,
              "atlas_sinkhorn_temperature": TAU}
    write_text(os.path.join(model, "config.json"), json.dumps(config, indent=2) + "\n")
    write_safetensors(os.path.join(model, "model.safetensors"), {k: v.numpy() for k, v in weights.items()})
    w = {k: v.to(torch.float64).requires_grad_() for k, v in weights.items()}
    out = forward(w)
    out["loss"].backward()
    for name, value in out.items():
        np.save(os.path.join(ref, name + ".npy"), value.detach().to(torch.float32).numpy().copy(order="C"))
    for name, p in w.items():
        np.save(os.path.join(ref, "grad." + name + ".npy"), p.grad.to(torch.float32).numpy().copy(order="C"))
    write_text(os.path.join(ref, "input.json"), json.dumps({"tokens": TOKENS, "targets": TARGETS}) + "\n")
    S = out["sort.0"].detach()
    print(f"loss {out['loss'].item():.6f}; layer 0's S rows sum {S.sum(1).tolist()}, max {S.max().item():.3f}")
    print(f"wrote {model} and {ref}")


if __name__ == "__main__":
    main()
