#!/usr/bin/python3
"""Independent PyTorch reference for Transformer Atlas's engine parity test (tests/tst_engine_parity.cpp).

This script shares no code with the C++ engine: it writes the GPT-2 forward pass again with
torch.nn.functional, following Hugging Face's modeling_gpt2.py (Conv1D layout y = x W + b, c_attn columns
Q | K | V, scores Q K^T / sqrt(d) before the causal mask, tanh GELU, final LayerNorm, logits tied to wte),
and writes the safetensors files by hand (8-byte little-endian header length, JSON header padded with
spaces to a multiple of 8, raw little-endian data). Every tensor is computed in float64 from the float32
weights and saved as float32, so the reference is at least as precise as the engine it checks.

Run it from anywhere with Debian's interpreter, which has python3-torch and numpy:

    /usr/bin/python3 tests/tools/make_reference.py

It is deterministic (fixed seeds) and rewrites, under tests/data/:
  gpt2_tiny/           config.json + model.safetensors (F32), a tiny random GPT-2
  gpt2_tiny_prefixed/  the same weights under "transformer." with the legacy attn.bias / attn.masked_bias
  gpt2_tiny_f16/       the same weights stored as F16
  gpt2_tiny_ref/       every trace tensor of docs/trace-names.md as <name>.npy, plus tokens.json
  gpt2_tiny_f16_ref/   logits.npy and next_probs.npy computed from the float16-rounded weights
  variant/             post-LN, sinusoidal positions, ReLU, bidirectional model
  variant_ref/         its trace tensors, plus input.json {"tokens": [...], "padding": [...]}
  gpt2_tiny_ablated_ref/zero/, mean/
                       gpt2_tiny with heads 0.1 and 1.3 switched off (their context zeroed, or replaced by its mean
                       over the input's positions): attn.merged of both layers, logits, next_probs
"""

import json
import math
import os
import shutil
import struct

import numpy as np
import torch
import torch.nn.functional as F

DATA = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "data"))

GPT2_TINY = dict(n_layer=2, n_head=4, n_embd=32, n_positions=16, vocab_size=50,
                 activation_function="gelu_new")
GPT2_TOKENS = [3, 17, 42, 8, 0, 25, 49, 11]

VARIANT = dict(n_layer=2, n_head=2, n_embd=16, n_positions=12, vocab_size=30,
               activation_function="relu", atlas_layer_norm="post", atlas_positions="sinusoidal",
               atlas_causal=False)
VARIANT_TOKENS = [1, 5, 9, 2, 7, 0, 0]
VARIANT_PADDING = [5, 6]

written = []


# ---------------------------------------------------------------------------------------------- files

def config_json(cfg):
    out = {
        "architectures": ["GPT2LMHeadModel"],
        "model_type": "gpt2",
        "n_layer": cfg["n_layer"],
        "n_head": cfg["n_head"],
        "n_embd": cfg["n_embd"],
        "n_inner": None,
        "n_positions": cfg["n_positions"],
        "n_ctx": cfg["n_positions"],
        "vocab_size": cfg["vocab_size"],
        "layer_norm_epsilon": 1e-5,
        "activation_function": cfg["activation_function"],
    }
    for key in ("atlas_layer_norm", "atlas_positions", "atlas_causal"):
        if key in cfg:
            out[key] = cfg[key]
    return out


def write_text(path, text):
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)
    written.append(path)


def write_safetensors(path, tensors):
    """tensors: {name: np.ndarray of float32 or float16}, written in sorted order."""
    dtypes = {np.dtype(np.float32): "F32", np.dtype(np.float16): "F16"}
    header = {"__metadata__": {"format": "pt"}}
    blobs = []
    offset = 0
    for name in sorted(tensors):
        arr = np.asarray(tensors[name]).copy(order="C")  # keeps rank 0 (ascontiguousarray would not)
        raw = arr.astype(arr.dtype.newbyteorder("<"), copy=False).tobytes(order="C")
        header[name] = {"dtype": dtypes[arr.dtype], "shape": list(arr.shape),
                        "data_offsets": [offset, offset + len(raw)]}
        blobs.append(raw)
        offset += len(raw)
    text = json.dumps(header, separators=(",", ":")).encode("utf-8")
    text += b" " * ((8 - len(text) % 8) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)))
        f.write(text)
        for raw in blobs:
            f.write(raw)
    written.append(path)


def write_model(directory, cfg, weights, prefix="", extra=None, dtype=np.float32):
    os.makedirs(directory, exist_ok=True)
    write_text(os.path.join(directory, "config.json"), json.dumps(config_json(cfg), indent=2) + "\n")
    tensors = {prefix + k: v.numpy().astype(dtype) for k, v in weights.items()}
    tensors.update(extra or {})
    write_safetensors(os.path.join(directory, "model.safetensors"), tensors)


def fresh_dir(directory):
    if os.path.isdir(directory):
        shutil.rmtree(directory)
    os.makedirs(directory)


def save_trace(directory, trace, names=None):
    for name, t in trace.items():
        if names is not None and name not in names:
            continue
        path = os.path.join(directory, name + ".npy")
        np.save(path, t.numpy().astype(np.float32).copy(order="C"))
        written.append(path)


# ---------------------------------------------------------------------------------------------- weights

def random_weights(cfg, seed):
    """GPT-2 parameter names and Conv1D shapes; std 0.2 so attention is far from uniform."""
    g = torch.Generator().manual_seed(seed)
    D, V, P = cfg["n_embd"], cfg["vocab_size"], cfg["n_positions"]
    Fd = 4 * D

    def normal(*shape, std=0.2):
        return torch.randn(*shape, generator=g, dtype=torch.float32) * std

    def ln(name, w):
        w[name + ".weight"] = 1.0 + normal(D, std=0.1)
        w[name + ".bias"] = normal(D, std=0.1)

    w = {"wte.weight": normal(V, D)}
    if cfg.get("atlas_positions", "learned") == "learned":
        w["wpe.weight"] = normal(P, D)
    for i in range(cfg["n_layer"]):
        h = f"h.{i}."
        ln(h + "ln_1", w)
        w[h + "attn.c_attn.weight"] = normal(D, 3 * D)
        w[h + "attn.c_attn.bias"] = normal(3 * D, std=0.1)
        w[h + "attn.c_proj.weight"] = normal(D, D)
        w[h + "attn.c_proj.bias"] = normal(D, std=0.1)
        ln(h + "ln_2", w)
        w[h + "mlp.c_fc.weight"] = normal(D, Fd)
        w[h + "mlp.c_fc.bias"] = normal(Fd, std=0.1)
        w[h + "mlp.c_proj.weight"] = normal(Fd, D)
        w[h + "mlp.c_proj.bias"] = normal(D, std=0.1)
    ln("ln_f", w)
    return w


# ---------------------------------------------------------------------------------------------- forward

def sinusoidal(T, D):
    pe = torch.zeros(T, D, dtype=torch.float64)
    for t in range(T):
        for i in range(0, D, 2):
            angle = t / (10000.0 ** (i / D))  # i = 2k, so the exponent is 2k/D
            pe[t, i] = math.sin(angle)
            if i + 1 < D:
                pe[t, i + 1] = math.cos(angle)
    return pe


def allowed_mask(T, causal, padding):
    """[T, T] bool: query i may attend key j (j <= i when causal) and key j is not padding."""
    allowed = torch.ones(T, T, dtype=torch.bool)
    if causal:
        allowed = torch.tril(allowed)
    for j in padding:
        allowed[:, j] = False
    return allowed


def attention(x, w, h, cfg, allowed, trace, ablation=None):
    # x is (T, D), already normalised for pre-LN
    T, D = x.shape
    H = cfg["n_head"]
    d = D // H
    qkv = x @ w[h + "attn.c_attn.weight"] + w[h + "attn.c_attn.bias"]  # (T, 3D)
    q, k, v = qkv.split(D, dim=1)
    q, k, v = (t.reshape(T, H, d).permute(1, 0, 2).contiguous() for t in (q, k, v))  # (H, T, d)
    scores = q @ k.transpose(1, 2) / math.sqrt(d)  # (H, T, T)
    masked = scores.masked_fill(~allowed, float("-inf"))
    probs = torch.softmax(masked, dim=-1)
    probs = torch.where(allowed.any(dim=-1, keepdim=True), probs, torch.zeros_like(probs))  # empty rows
    context = probs @ v  # (H, T, d)
    kept = context.clone()
    for head, replacement in (ablation or {}).get(int(h.split('.')[1]), {}).items():
        kept[head] = replacement  # zeros, or the head's mean context broadcast over positions
    merged = kept.permute(1, 0, 2).reshape(T, D)
    out = merged @ w[h + "attn.c_proj.weight"] + w[h + "attn.c_proj.bias"]
    p = f"layer.{h.split('.')[1]}.attn."
    for name, t in (("qkv", qkv), ("q", q), ("k", k), ("v", v), ("scores", scores), ("masked", masked),
                    ("probs", probs), ("context", context), ("merged", merged), ("out", out)):
        trace[p + name] = t
    return out


def mlp(x, w, h, cfg, trace, p):
    up = x @ w[h + "mlp.c_fc.weight"] + w[h + "mlp.c_fc.bias"]  # (T, F)
    if cfg["activation_function"] == "relu":
        act = F.relu(up)
    else:
        act = F.gelu(up, approximate="tanh")
    down = act @ w[h + "mlp.c_proj.weight"] + w[h + "mlp.c_proj.bias"]  # (T, D)
    trace[p + "mlp.up"], trace[p + "mlp.act"], trace[p + "mlp.down"] = up, act, down
    return down


def layer_norm(x, w, name):
    D = x.shape[-1]
    return F.layer_norm(x, (D,), w[name + ".weight"], w[name + ".bias"], eps=1e-5)


def block(x, w, i, cfg, allowed, trace, ablation=None):
    h, p = f"h.{i}.", f"layer.{i}."
    if cfg.get("atlas_layer_norm", "pre") == "pre":
        ln1 = layer_norm(x, w, h + "ln_1")
        trace[p + "ln_1"] = ln1
        mid = x + attention(ln1, w, h, cfg, allowed, trace, ablation)
        trace[p + "mid"] = mid
        ln2 = layer_norm(mid, w, h + "ln_2")
        trace[p + "ln_2"] = ln2
        out = mid + mlp(ln2, w, h, cfg, trace, p)
    else:
        mid = x + attention(x, w, h, cfg, allowed, trace, ablation)
        trace[p + "mid"] = mid
        ln1 = layer_norm(mid, w, h + "ln_1")
        trace[p + "ln_1"] = ln1
        resid = ln1 + mlp(ln1, w, h, cfg, trace, p)
        trace[p + "resid"] = resid
        out = layer_norm(resid, w, h + "ln_2")
    trace[p + "out"] = out
    return out


def forward(weights, cfg, tokens, padding=(), ablation=None):
    """Returns {trace name: float64 tensor} in program order. ablation: {layer: {head: (T, d) replacement}}."""
    w = {k: v.to(torch.float64) for k, v in weights.items()}
    T, D = len(tokens), cfg["n_embd"]
    trace = {}
    ids = torch.tensor(tokens, dtype=torch.long)
    trace["embed"] = w["wte.weight"][ids]
    if cfg.get("atlas_positions", "learned") == "learned":
        trace["pos.encoding"] = w["wpe.weight"][:T]
    else:
        trace["pos.encoding"] = sinusoidal(T, D)
    x = trace["embed"] + trace["pos.encoding"]
    trace["input"] = x
    allowed = allowed_mask(T, cfg.get("atlas_causal", True), padding)
    for i in range(cfg["n_layer"]):
        x = block(x, w, i, cfg, allowed, trace, ablation)
    trace["ln_f"] = layer_norm(x, w, "ln_f")
    trace["logits"] = trace["ln_f"] @ w["wte.weight"].T  # (T, V)
    trace["next_probs"] = torch.softmax(trace["logits"], dim=-1)
    return trace


# ---------------------------------------------------------------------------------------------- fixtures

def make_gpt2_tiny():
    cfg = GPT2_TINY
    w = random_weights(cfg, seed=1234)
    write_model(os.path.join(DATA, "gpt2_tiny"), cfg, w)

    P = cfg["n_positions"]
    legacy = {}
    for i in range(cfg["n_layer"]):
        legacy[f"transformer.h.{i}.attn.bias"] = np.tril(np.ones((P, P), np.float32)).reshape(1, 1, P, P)
        legacy[f"transformer.h.{i}.attn.masked_bias"] = np.array(-1e4, np.float32)
    write_model(os.path.join(DATA, "gpt2_tiny_prefixed"), cfg, w, prefix="transformer.", extra=legacy)

    write_model(os.path.join(DATA, "gpt2_tiny_f16"), cfg, w, dtype=np.float16)

    ref = os.path.join(DATA, "gpt2_tiny_ref")
    fresh_dir(ref)
    save_trace(ref, forward(w, cfg, GPT2_TOKENS))
    write_text(os.path.join(ref, "tokens.json"), json.dumps(GPT2_TOKENS) + "\n")

    w16 = {k: v.to(torch.float16).to(torch.float32) for k, v in w.items()}
    ref16 = os.path.join(DATA, "gpt2_tiny_f16_ref")
    fresh_dir(ref16)
    save_trace(ref16, forward(w16, cfg, GPT2_TOKENS), names={"logits", "next_probs"})


ABLATED_HEADS = [(0, 1), (1, 3)]


def make_gpt2_tiny_ablated():
    """Head ablation (Michel et al. 2019): the listed heads' context replaced before the merge."""
    cfg = GPT2_TINY
    w = random_weights(cfg, seed=1234)
    T, d = len(GPT2_TOKENS), cfg["n_embd"] // cfg["n_head"]
    whole = forward(w, cfg, GPT2_TOKENS)
    names = {"logits", "next_probs"} | {f"layer.{i}.attn.merged" for i in range(cfg["n_layer"])}
    for mode in ("zero", "mean"):
        ablation = {}
        for layer, head in ABLATED_HEADS:
            context = whole[f"layer.{layer}.attn.context"][head]  # (T, d)
            value = torch.zeros(T, d, dtype=torch.float64) if mode == "zero" else context.mean(dim=0).expand(T, d)
            ablation.setdefault(layer, {})[head] = value
        ref = os.path.join(DATA, "gpt2_tiny_ablated_ref", mode)
        fresh_dir(ref)
        save_trace(ref, forward(w, cfg, GPT2_TOKENS, ablation=ablation), names=names)


def make_variant():
    cfg = VARIANT
    w = random_weights(cfg, seed=5678)
    write_model(os.path.join(DATA, "variant"), cfg, w)
    ref = os.path.join(DATA, "variant_ref")
    fresh_dir(ref)
    save_trace(ref, forward(w, cfg, VARIANT_TOKENS, VARIANT_PADDING))
    write_text(os.path.join(ref, "input.json"),
               json.dumps({"tokens": VARIANT_TOKENS, "padding": VARIANT_PADDING}) + "\n")


def main():
    torch.manual_seed(0)  # the weights use their own seeded generators; this pins anything else
    make_gpt2_tiny()
    make_gpt2_tiny_ablated()
    make_variant()
    total = 0
    for path in written:
        size = os.path.getsize(path)
        total += size
        print(f"{size:8d}  {os.path.relpath(path, DATA)}")
    print(f"{total:8d}  bytes in {len(written)} files under {DATA}")


if __name__ == "__main__":
    main()
