#!/usr/bin/python3
"""An independent PyTorch reference for Funnel-Transformer's pooling (tests/tst_funnel.cpp).

Dai et al. 2020, "Funnel-Transformer: Filtering out Sequential Redundancy for Efficient Language Processing", §2.2:
between groups of blocks the sequence is pooled with stride 2 (mean pooling of adjacent pairs), and the first block of
the new group reads the pooled sequence as its queries and the unpooled one as its keys and values ("pool-query-only");
§2.3: for token-level tasks a decoder repeats each compressed vector over the positions it covers, adds the
full-length output of the first group, and runs its blocks at full length.

This script shortens the sequence for real: each group's tensors have T, ⌈T/2⌉, ⌈T/4⌉ … rows, pooled with
torch.nn.functional.avg_pool1d(kernel 2, stride 2, ceil_mode=True), so an odd last token is pooled alone, as Hugging
Face's FunnelModel pools. The engine keeps every tensor T long and masks the positions no longer present as keys
(model/funnel.h); the test checks that both give the same logits, the same attention at the present queries and keys,
the same layer outputs at the present positions, and the same gradients.

Conventions shared with the engine: GPT-2's pre-LN block and Conv1D layout (c_attn's columns Q | K | V, the queries
of a pooling block from ln_1 of the pooled stream and the keys and values from ln_1 of the unpooled one, the residual
added to the pooled stream); RoFormer's interleaved RoPE, a pooled token keeping the position of its first member;
no separate [CLS] (Hugging Face's separate_cls) and no truncation of the last token. Everything in float64 from float32
weights. Run with Debian's interpreter:

    /usr/bin/python3 tests/tools/make_funnel_reference.py

It rewrites tests/data/funnel/tiny/ (groups of 1, 1 and 1 layers and a 1-layer decoder, F32) and
tests/data/funnel/tiny_ref/:
  input.json        {"tokens", "targets"}
  probs.{i}.npy     [H, n_q, n_k] layer i's attention over its present queries and keys
  out.{i}.npy       [n_i, D] layer i's output at its present positions
  logits.npy        [T, V]
  loss.npy          () the mean cross-entropy over the targets that are not -1
  grad.<p>.npy      the gradient of the loss for every parameter
"""
import json
import math
import os
import sys

import numpy as np
import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from make_positions_reference import rope_interleaved  # noqa: E402
from make_reference import fresh_dir, random_weights, write_safetensors, write_text  # noqa: E402

DATA = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "data"))
BLOCKS, DECODER = [1, 1, 1], 1
CFG = dict(n_layer=sum(BLOCKS) + DECODER, n_head=4, n_embd=32, n_positions=16, vocab_size=50,
           activation_function="gelu_new", atlas_positions="rope", atlas_causal=False)
TOKENS = [3, 17, 42, 8, 0, 25, 49, 11, 17, 5, 30]  # 11: odd, so a token is pooled alone at the end
TARGETS = [-1, 9, -1, -1, 12, -1, 33, -1, -1, 5, 21]
BASE = 10000.0


def rope(x, positions):
    """RoFormer's interleaved pairs at the given positions (make_positions_reference.py writes them)."""
    return rope_interleaved(x, BASE, positions)


def pool(x):
    return F.avg_pool1d(x.T.unsqueeze(0), kernel_size=2, stride=2, ceil_mode=True).squeeze(0).T


def block(w, i, x, xpos, q_in=None, qpos=None):
    """Pre-LN GPT-2 block; q_in (pooled) gives the queries and the residual, x the keys and values."""
    D, H = CFG["n_embd"], CFG["n_head"]
    d, h = D // H, f"h.{i}."
    ln = lambda t: F.layer_norm(t, (D,), w[h + "ln_1.weight"], w[h + "ln_1.bias"], eps=1e-5)  # noqa: E731
    W, b = w[h + "attn.c_attn.weight"], w[h + "attn.c_attn.bias"]
    if q_in is None:
        q_in, qpos = x, xpos
    q = ln(q_in) @ W[:, :D] + b[:D]
    kv = ln(x) @ W[:, D:] + b[D:]
    k, v = kv[:, :D], kv[:, D:]
    heads = lambda t: t.reshape(t.shape[0], H, d).permute(1, 0, 2)  # noqa: E731
    q, k, v = rope(heads(q), qpos), rope(heads(k), xpos), heads(v)
    probs = torch.softmax(q @ k.transpose(1, 2) / math.sqrt(d), dim=-1)
    merged = (probs @ v).permute(1, 0, 2).reshape(q_in.shape[0], D)
    mid = q_in + merged @ w[h + "attn.c_proj.weight"] + w[h + "attn.c_proj.bias"]
    ln2 = F.layer_norm(mid, (D,), w[h + "ln_2.weight"], w[h + "ln_2.bias"], eps=1e-5)
    up = F.gelu(ln2 @ w[h + "mlp.c_fc.weight"] + w[h + "mlp.c_fc.bias"], approximate="tanh")
    return mid + up @ w[h + "mlp.c_proj.weight"] + w[h + "mlp.c_proj.bias"], probs


def forward(w):
    T = len(TOKENS)
    x = w["wte.weight"][torch.tensor(TOKENS)]
    pos = list(range(T))
    out, layer = {}, 0
    skip = None
    for g, count in enumerate(BLOCKS):
        for n in range(count):
            if g > 0 and n == 0:
                pooled, ppos = pool(x), pos[::2]
                x, probs = block(w, layer, x, pos, pooled, ppos)
                pos = ppos
            else:
                x, probs = block(w, layer, x, pos)
            out[f"probs.{layer}"], out[f"out.{layer}"] = probs, x
            layer += 1
        if g == 0:
            skip = x
    stride = 2 ** (len(BLOCKS) - 1)
    x = x.repeat_interleave(stride, dim=0)[:T] + skip
    pos = list(range(T))
    for n in range(DECODER):
        x, probs = block(w, layer, x, pos)
        out[f"probs.{layer}"], out[f"out.{layer}"] = probs, x
        layer += 1
    D = CFG["n_embd"]
    logits = F.layer_norm(x, (D,), w["ln_f.weight"], w["ln_f.bias"], eps=1e-5) @ w["wte.weight"].T
    out["logits"] = logits
    out["loss"] = F.cross_entropy(logits, torch.tensor(TARGETS), ignore_index=-1)
    return out


def main():
    check = pool(torch.arange(3, dtype=torch.float64)[:, None])
    assert check.flatten().tolist() == [0.5, 2.0], f"avg_pool1d's ceil_mode divisor changed: {check}"
    model, ref = os.path.join(DATA, "funnel", "tiny"), os.path.join(DATA, "funnel", "tiny_ref")
    fresh_dir(model)
    fresh_dir(ref)
    weights = random_weights(CFG, seed=77)
    config = {"model_type": "gpt2", "architectures": ["GPT2LMHeadModel"], "n_layer": CFG["n_layer"],
              "n_head": CFG["n_head"], "n_embd": CFG["n_embd"], "n_inner": None, "n_positions": CFG["n_positions"],
              "n_ctx": CFG["n_positions"], "vocab_size": CFG["vocab_size"], "layer_norm_epsilon": 1e-5,
              "activation_function": CFG["activation_function"], "atlas_positions": "rope", "atlas_rope_base": BASE,
              "atlas_causal": False, "atlas_funnel_blocks": BLOCKS, "atlas_funnel_decoder_layers": DECODER}
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
    print(f"loss {out['loss'].item():.6f}; wrote {model} and {ref}")


if __name__ == "__main__":
    main()
