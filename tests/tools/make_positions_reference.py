#!/usr/bin/python3
"""Independent PyTorch references for Transformer Atlas's positional encodings (tests/tst_positions.cpp).

Each kind is written again here from its paper or its reference implementation, sharing no code with the C++
engine:
  rope       RoFormer (Su et al. 2021), interleaved pairs, as complex numbers: (x0 + i x1) * e^(i t theta_j)
  rope-half  GPT-NeoX / Hugging Face LLaMA: x * cos + rotate_half(x) * sin, with cos, sin = cat(freqs, freqs)
  alibi      Press et al. 2022: get_slopes() of the paper's code, bias -m_h |i - j| added to the scaled scores
  t5         Raffel et al. 2020: Hugging Face's T5Attention._relative_position_bucket, a [buckets, H] table
             shared by the layers, added to the scaled scores
  shaw       Shaw et al. 2018: e_ij = q_i (k_j + a_clip(j - i))^T / sqrt(d), a [2k + 1, d] table per layer
             shared by the heads
  none       no positions at all (bidirectional: permuting the input permutes the output)
  sinusoidal-scaled  Vaswani et al. 2017: the embedding multiplied by sqrt(d_model), then the sinusoidal
             encoding added (make_reference.py's sinusoidal)
The rest is GPT-2 (pre-LN, tanh GELU, tied logits) as in make_reference.py, whose file helpers are reused.
Everything runs in float64 from float32 weights; autograd gives the gradients of the mean cross-entropy.

    /usr/bin/python3 tests/tools/make_positions_reference.py

rewrites tests/data/positions/<case>/ (config.json, model.safetensors) and tests/data/positions/<case>_ref/
(trace tensors as <name>.npy, loss.npy, grad.<parameter>.npy, input.json {"tokens", "targets"}).
"""

import json
import math
import os
import sys

import numpy as np
import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import make_reference as ref  # noqa: E402  (file writing and GPT-2 weights only)

OUT = os.path.join(ref.DATA, "positions")
BASE = dict(n_layer=2, n_head=3, n_embd=24, n_positions=16, vocab_size=40, activation_function="gelu_new")
TOKENS = [3, 17, 22, 8, 0, 25, 39, 11, 5, 30]
CASES = {
    "rope": dict(atlas_positions="rope", atlas_rope_base=100.0),
    "rope-half": dict(atlas_positions="rope-half", atlas_rope_base=100.0),
    "alibi": dict(atlas_positions="alibi"),
    "t5": dict(atlas_positions="t5", atlas_relative_buckets=8, atlas_relative_max_distance=12),
    "t5-bidirectional": dict(atlas_positions="t5", atlas_relative_buckets=8, atlas_relative_max_distance=12,
                             atlas_causal=False),
    "shaw": dict(atlas_positions="shaw", atlas_relative_clip=3),
    "none": dict(atlas_positions="none", atlas_causal=False),
    "sinusoidal-scaled": dict(atlas_positions="sinusoidal", atlas_embedding_scale=math.sqrt(24)),
}


def alibi_slopes(n):
    # Press et al.'s get_slopes, as published
    def power_of_2(n):
        start = 2 ** (-2 ** -(math.log2(n) - 3))
        return [start * start ** i for i in range(n)]
    if math.log2(n).is_integer():
        return power_of_2(n)
    closest = 2 ** math.floor(math.log2(n))
    return power_of_2(closest) + alibi_slopes(2 * closest)[0::2][: n - closest]


def t5_bucket(relative_position, bidirectional, num_buckets, max_distance):
    relative_buckets = 0
    if bidirectional:
        num_buckets //= 2
        relative_buckets += (relative_position > 0).to(torch.long) * num_buckets
        relative_position = torch.abs(relative_position)
    else:
        relative_position = -torch.min(relative_position, torch.zeros_like(relative_position))
    max_exact = num_buckets // 2
    is_small = relative_position < max_exact
    large = max_exact + (torch.log(relative_position.float() / max_exact) / math.log(max_distance / max_exact)
                         * (num_buckets - max_exact)).to(torch.long)
    large = torch.min(large, torch.full_like(large, num_buckets - 1))
    return relative_buckets + torch.where(is_small, relative_position, large)


def rope_interleaved(x, base, positions=None):
    """positions: each row's position (default 0 … T − 1; a funnel's pooled token keeps its first member's)."""
    H, T, d = x.shape
    theta = base ** (-torch.arange(0, d, 2, dtype=torch.float64) / d)
    at = torch.arange(T, dtype=torch.float64) if positions is None else torch.tensor(positions, dtype=torch.float64)
    angles = at[:, None] * theta[None, :]
    z = torch.view_as_complex(x.reshape(H, T, d // 2, 2).contiguous()) * torch.polar(torch.ones_like(angles), angles)
    return torch.view_as_real(z).reshape(H, T, d)


def rope_half(x, base):
    H, T, d = x.shape
    inv_freq = 1.0 / (base ** (torch.arange(0, d, 2, dtype=torch.float64) / d))
    freqs = torch.outer(torch.arange(T, dtype=torch.float64), inv_freq)
    emb = torch.cat((freqs, freqs), dim=-1)

    def rotate_half(v):
        return torch.cat((-v[..., d // 2:], v[..., : d // 2]), dim=-1)
    return x * emb.cos() + rotate_half(x) * emb.sin()


def attention(x, w, i, cfg, trace):
    T, D = x.shape
    H = cfg["n_head"]
    d = D // H
    kind = cfg["atlas_positions"]
    causal = cfg.get("atlas_causal", True)
    h, p = f"h.{i}.", f"layer.{i}.attn."
    qkv = x @ w[h + "attn.c_attn.weight"] + w[h + "attn.c_attn.bias"]
    q, k, v = (t.reshape(T, H, d).permute(1, 0, 2) for t in qkv.split(D, dim=1))
    trace[p + "q"], trace[p + "k"] = q, k
    if kind in ("rope", "rope-half"):
        rotate = rope_interleaved if kind == "rope" else rope_half
        q, k = rotate(q, cfg["atlas_rope_base"]), rotate(k, cfg["atlas_rope_base"])
        trace[p + "q_rot"], trace[p + "k_rot"] = q, k
    scores = q @ k.transpose(1, 2) / math.sqrt(d)
    rel = torch.arange(T)[None, :] - torch.arange(T)[:, None]  # key - query
    if kind == "alibi":
        m = torch.tensor(alibi_slopes(H), dtype=torch.float64)
        bias = -m[:, None, None] * rel.abs()[None].to(torch.float64)
    elif kind == "t5":
        buckets = t5_bucket(rel, not causal, cfg["atlas_relative_buckets"], cfg["atlas_relative_max_distance"])
        bias = w["relative_attention_bias.weight"][buckets].permute(2, 0, 1)  # [H, T, T]
    elif kind == "shaw":
        clip = cfg["atlas_relative_clip"]
        a = w[h + "attn.relative_key.weight"][rel.clamp(-clip, clip) + clip]  # [T, T, d]
        bias = torch.einsum("hid,ijd->hij", q, a) / math.sqrt(d)
    else:
        bias = None
    if bias is not None:
        trace[p + "bias"] = bias
        scores = scores + bias
    trace[p + "scores"] = scores
    allowed = torch.tril(torch.ones(T, T, dtype=torch.bool)) if causal else torch.ones(T, T, dtype=torch.bool)
    probs = torch.softmax(scores.masked_fill(~allowed, float("-inf")), dim=-1)
    trace[p + "probs"] = probs
    merged = (probs @ v).permute(1, 0, 2).reshape(T, D)
    return merged @ w[h + "attn.c_proj.weight"] + w[h + "attn.c_proj.bias"]


def forward(w, cfg, tokens):
    trace = {}
    x = w["wte.weight"][torch.tensor(tokens)] * cfg.get("atlas_embedding_scale", 1.0)
    if cfg["atlas_positions"] == "sinusoidal":
        x = x + ref.sinusoidal(len(tokens), cfg["n_embd"])
    trace["input"] = x
    for i in range(cfg["n_layer"]):
        h = f"h.{i}."
        x = x + attention(ref.layer_norm(x, w, h + "ln_1"), w, i, cfg, trace)
        up = ref.layer_norm(x, w, h + "ln_2") @ w[h + "mlp.c_fc.weight"] + w[h + "mlp.c_fc.bias"]
        x = x + F.gelu(up, approximate="tanh") @ w[h + "mlp.c_proj.weight"] + w[h + "mlp.c_proj.bias"]
        trace[f"layer.{i}.out"] = x
    trace["logits"] = ref.layer_norm(x, w, "ln_f") @ w["wte.weight"].T
    return trace


def make_case(name, extra, seed):
    cfg = dict(BASE, **extra)
    weights = ref.random_weights(dict(cfg, atlas_positions="none"), seed)  # no wpe
    g = torch.Generator().manual_seed(seed + 1)
    if cfg["atlas_positions"] == "t5":
        weights["relative_attention_bias.weight"] = torch.randn(cfg["atlas_relative_buckets"], cfg["n_head"],
                                                                generator=g) * 0.5
    if cfg["atlas_positions"] == "shaw":
        d = cfg["n_embd"] // cfg["n_head"]
        for i in range(cfg["n_layer"]):
            weights[f"h.{i}.attn.relative_key.weight"] = torch.randn(2 * cfg["atlas_relative_clip"] + 1, d,
                                                                     generator=g) * 0.5
    model_dir = os.path.join(OUT, name)
    ref.fresh_dir(model_dir)
    config = ref.config_json(cfg)
    for key in extra:
        config[key] = extra[key]
    ref.write_text(os.path.join(model_dir, "config.json"), json.dumps(config, indent=2) + "\n")
    ref.write_safetensors(os.path.join(model_dir, "model.safetensors"),
                          {k: v.numpy().astype(np.float32) for k, v in weights.items()})

    w = {k: v.to(torch.float64).requires_grad_(True) for k, v in weights.items()}
    trace = forward(w, cfg, TOKENS)
    targets = TOKENS[1:] + [-1]
    loss = F.cross_entropy(trace["logits"], torch.tensor(targets), ignore_index=-1)
    loss.backward()
    out = os.path.join(OUT, name + "_ref")
    ref.fresh_dir(out)
    ref.save_trace(out, {k: v.detach() for k, v in trace.items()})
    ref.save_trace(out, {"loss": loss.detach()})
    ref.save_trace(out, {"grad." + k: v.grad for k, v in w.items()})
    ref.write_text(os.path.join(out, "input.json"), json.dumps({"tokens": TOKENS, "targets": targets}) + "\n")


def main():
    torch.manual_seed(0)
    for n, (name, extra) in enumerate(CASES.items()):
        make_case(name, extra, seed=100 + 10 * n)
    total = sum(os.path.getsize(p) for p in ref.written)
    print(f"{total} bytes in {len(ref.written)} files under {OUT}")


if __name__ == "__main__":
    main()
