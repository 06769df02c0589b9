#!/usr/bin/python3
"""Independent PyTorch references for Transformer Atlas's training code (tests/tst_backprop.cpp, tst_adamw.cpp).

Gradients: the model files that make_reference.py wrote (tests/data/gpt2_tiny, tests/data/variant) are read
back here (a small safetensors reader), the forward pass is written again with torch.nn.functional (Conv1D
layout y = x W + b, c_attn columns Q | K | V, scores Q K^T / sqrt(d) then the mask, LayerNorm before
(pre-LN) or after (post-LN) each residual add, logits tied to wte), and autograd differentiates the mean
cross-entropy F.cross_entropy(logits, targets, ignore_index=-1). Everything runs in float64 from the float32
weights and is saved as float32. A query row with no allowed key (causal + padding at position 0) has all-zero
probabilities, as in the engine, and no gradient.

AdamW: torch.optim.AdamW (decay only on the rank-2 tensors), torch.nn.utils.clip_grad_norm_ and a linear
warm-up + cosine schedule, for a few steps on a small parameter set with fixed gradients.

Run it from anywhere with Debian's interpreter, which has python3-torch and numpy:

    /usr/bin/python3 tests/tools/make_grad_reference.py

It is deterministic and rewrites, under tests/data/:
  gpt2_tiny_grads/                 loss.npy (shape ()), grad.<parameter>.npy for every parameter, input.json
                                   {"tokens", "padding", "targets"} for gpt2_tiny (pre-LN, learned, tanh GELU)
  gpt2_tiny_grads/gelu_erf_padded/ the same weights run with activation "gelu" (erf) and padding [0, 4]:
                                   query 0 then has no key at all
  gpt2_tiny_grads/reversible/      the same weights run as a reversible model (atlas_reversible): two streams
                                   starting as the embedding, Y1 = X1 + Attn(LN1(X2)), Y2 = X2 + MLP(LN2(Y1)),
                                   their mean before ln_f
  variant_grads/                   the same for variant (post-LN, sinusoidal, ReLU, bidirectional, padding)
  adamw_ref/                       init.<p>.npy, grad.<step>.<p>.npy, param.<step>.<p>.npy, steps.json
"""

import json
import math
import os
import sys
import shutil
import struct

import numpy as np
import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from make_entmax_reference import entmax15, sparsemax  # noqa: E402  (written there from the papers)

DATA = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "data"))

# Repeated tokens (17, 3) make the embedding's scatter-add accumulate; -1 targets are left out of the loss.
GPT2_CASE = dict(tokens=[3, 17, 42, 8, 17, 25, 49, 3, 11, 0], padding=[],
                 targets=[17, 42, 8, -1, 25, 49, 3, 11, 0, -1])
ERF_CASE = dict(tokens=GPT2_CASE["tokens"], padding=[0, 4], targets=[-1, 42, 8, 17, -1, 49, 3, 11, 0, 7],
                activation="gelu")
REVERSIBLE_CASE = dict(tokens=GPT2_CASE["tokens"], padding=[], targets=GPT2_CASE["targets"], reversible=True)
# Sparse normalisers in place of softmax (atlas_attention_normaliser), through their closed forms
# (make_entmax_reference.py: sort-based sparsemax and 1.5-entmax, differentiable on their support).
SPARSEMAX_CASE = dict(tokens=GPT2_CASE["tokens"], padding=[0, 4], targets=ERF_CASE["targets"], normaliser="sparsemax")
ENTMAX15_CASE = dict(tokens=GPT2_CASE["tokens"], padding=[], targets=GPT2_CASE["targets"], normaliser="entmax15")
VARIANT_CASE = dict(tokens=[1, 5, 9, 2, 7, 0, 0], padding=[5, 6], targets=[5, 9, 2, 7, -1, -1, -1])

written = []


# ---------------------------------------------------------------------------------------------- files

def read_safetensors(path):
    with open(path, "rb") as f:
        n = struct.unpack("<Q", f.read(8))[0]
        header = json.loads(f.read(n))
        data = f.read()
    dtypes = {"F32": np.float32, "F16": np.float16}
    out = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        begin, end = info["data_offsets"]
        arr = np.frombuffer(data[begin:end], dtype=np.dtype(dtypes[info["dtype"]]).newbyteorder("<"))
        out[name] = torch.from_numpy(arr.reshape(info["shape"]).astype(np.float32))
    return out


def load_model(name):
    directory = os.path.join(DATA, name)
    with open(os.path.join(directory, "config.json"), encoding="utf-8") as f:
        cfg = json.load(f)
    return cfg, read_safetensors(os.path.join(directory, "model.safetensors"))


def save_npy(path, array):
    np.save(path, np.asarray(array, dtype=np.float32).copy(order="C"))
    written.append(path)


def write_text(path, text):
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)
    written.append(path)


def fresh_dir(directory):
    if os.path.isdir(directory):
        shutil.rmtree(directory)
    os.makedirs(directory)


# ---------------------------------------------------------------------------------------------- forward

def positions(w, cfg, T):
    D = cfg["n_embd"]
    if cfg.get("atlas_positions", "learned") == "learned":
        return w["wpe.weight"][:T]
    t = torch.arange(T, dtype=torch.float64)[:, None]
    i = torch.arange(0, D, 2, dtype=torch.float64)[None, :]
    angle = t / torch.pow(10000.0, i / D)
    pe = torch.zeros(T, D, dtype=torch.float64)
    pe[:, 0::2] = torch.sin(angle)
    pe[:, 1::2] = torch.cos(angle)[:, : D // 2]
    return pe


def attention(x, w, h, cfg, allowed):
    T, D = x.shape
    H = cfg["n_head"]
    d = D // H
    qkv = F.linear(x, w[h + "attn.c_attn.weight"].t(), w[h + "attn.c_attn.bias"])  # (T, 3D)
    q, k, v = (t.view(T, H, d).transpose(0, 1) for t in qkv.split(D, dim=1))  # (H, T, d)
    scores = torch.matmul(q, k.transpose(1, 2)) / math.sqrt(d)  # (H, T, T)
    masked = scores.masked_fill(~allowed, float("-inf"))
    empty = ~allowed.any(dim=-1, keepdim=True)  # (T, 1): a query with no key gets all-zero weights
    if cfg.get("atlas_attention_normaliser", "softmax") == "softmax":
        probs = F.softmax(masked.masked_fill(empty, 0.0), dim=-1).masked_fill(empty, 0.0)
    else:
        rowwise = sparsemax if cfg["atlas_attention_normaliser"] == "sparsemax" else entmax15
        rows = []
        for hh in range(H):
            for t in range(T):
                row = torch.zeros(T, dtype=scores.dtype)
                if allowed[t].any():
                    row = row.index_put((allowed[t].nonzero().flatten(),), rowwise(scores[hh, t][allowed[t]]))
                rows.append(row)
        probs = torch.stack(rows).view(H, T, T)
    context = torch.matmul(probs, v).transpose(0, 1).reshape(T, D)
    return F.linear(context, w[h + "attn.c_proj.weight"].t(), w[h + "attn.c_proj.bias"])


def mlp(x, w, h, cfg):
    up = F.linear(x, w[h + "mlp.c_fc.weight"].t(), w[h + "mlp.c_fc.bias"])
    act = {"relu": F.relu, "gelu_new": lambda u: F.gelu(u, approximate="tanh"), "gelu": F.gelu}
    return F.linear(act[cfg["activation_function"]](up), w[h + "mlp.c_proj.weight"].t(), w[h + "mlp.c_proj.bias"])


def layer_norm(x, w, name):
    return F.layer_norm(x, (x.shape[-1],), w[name + ".weight"], w[name + ".bias"], eps=1e-5)


def loss_of(w, cfg, tokens, padding, targets):
    T = len(tokens)
    x = w["wte.weight"][torch.tensor(tokens)] + positions(w, cfg, T)
    allowed = torch.ones(T, T, dtype=torch.bool)
    if cfg.get("atlas_causal", True):
        allowed = torch.tril(allowed)
    allowed[:, list(padding)] = False
    if cfg.get("atlas_reversible", False):
        x1, x2 = x, x
        for i in range(cfg["n_layer"]):
            h = f"h.{i}."
            x1 = x1 + attention(layer_norm(x2, w, h + "ln_1"), w, h, cfg, allowed)
            x2 = x2 + mlp(layer_norm(x1, w, h + "ln_2"), w, h, cfg)
        x = (x1 + x2) / 2
    for i in range(0 if cfg.get("atlas_reversible", False) else cfg["n_layer"]):
        h = f"h.{i}."
        if cfg.get("atlas_layer_norm", "pre") == "pre":
            x = x + attention(layer_norm(x, w, h + "ln_1"), w, h, cfg, allowed)
            x = x + mlp(layer_norm(x, w, h + "ln_2"), w, h, cfg)
        else:
            x = layer_norm(x + attention(x, w, h, cfg, allowed), w, h + "ln_1")
            x = layer_norm(x + mlp(x, w, h, cfg), w, h + "ln_2")
    logits = layer_norm(x, w, "ln_f") @ w["wte.weight"].t()
    return F.cross_entropy(logits, torch.tensor(targets), ignore_index=-1)


def make_grads(model, case, directory):
    cfg, weights = load_model(model)
    if "activation" in case:
        cfg = dict(cfg, activation_function=case["activation"])
    if case.get("reversible"):
        cfg = dict(cfg, atlas_reversible=True)
    if "normaliser" in case:
        cfg = dict(cfg, atlas_attention_normaliser=case["normaliser"])
    w = {k: v.to(torch.float64).requires_grad_(True) for k, v in weights.items()}
    loss = loss_of(w, cfg, case["tokens"], case["padding"], case["targets"])
    loss.backward()
    fresh_dir(directory)
    save_npy(os.path.join(directory, "loss.npy"), loss.detach().numpy())
    for name, p in w.items():
        save_npy(os.path.join(directory, f"grad.{name}.npy"), p.grad.numpy())
    write_text(os.path.join(directory, "input.json"), json.dumps(case) + "\n")


# ---------------------------------------------------------------------------------------------- AdamW

ADAMW = dict(lr=0.1, betas=(0.9, 0.95), eps=1e-8, weight_decay=0.1, max_norm=1.0)
SCHEDULE = dict(peak=0.1, floor=0.01, warmup=2, total=5)
GRAD_SCALES = [0.1, 3.0, 0.05, 2.0, 0.1, 5.0]  # some steps under the clipping norm of 1, some over


def learning_rate(step):
    s = SCHEDULE
    if step < s["warmup"]:
        return s["peak"] * (step + 1) / s["warmup"]
    if step >= s["total"]:
        return s["floor"]
    ratio = (step - s["warmup"]) / (s["total"] - s["warmup"])
    return s["floor"] + 0.5 * (1.0 + math.cos(math.pi * ratio)) * (s["peak"] - s["floor"])


def make_adamw(directory):
    g = torch.Generator().manual_seed(99)
    shapes = {"emb.weight": (5, 3), "fc.weight": (3, 4), "fc.bias": (4,), "ln.weight": (3,)}
    params = {n: torch.nn.Parameter(torch.randn(*s, generator=g)) for n, s in shapes.items()}
    fresh_dir(directory)
    for n, p in params.items():
        save_npy(os.path.join(directory, f"init.{n}.npy"), p.detach().numpy())
    decay = [p for n, p in params.items() if p.dim() >= 2]
    no_decay = [p for n, p in params.items() if p.dim() < 2]
    opt = torch.optim.AdamW([{"params": decay, "weight_decay": ADAMW["weight_decay"]},
                             {"params": no_decay, "weight_decay": 0.0}],
                            lr=ADAMW["lr"], betas=ADAMW["betas"], eps=ADAMW["eps"])
    lrs, norms = [], []
    for step, scale in enumerate(GRAD_SCALES):
        for n, p in params.items():
            p.grad = torch.randn(*shapes[n], generator=g) * scale
            save_npy(os.path.join(directory, f"grad.{step}.{n}.npy"), p.grad.numpy())
        norms.append(float(torch.nn.utils.clip_grad_norm_(list(params.values()), ADAMW["max_norm"])))
        lrs.append(learning_rate(step))
        for group in opt.param_groups:
            group["lr"] = lrs[-1]
        opt.step()
        for n, p in params.items():
            save_npy(os.path.join(directory, f"param.{step}.{n}.npy"), p.detach().numpy())
    steps = dict(names=list(shapes), options=ADAMW, schedule=SCHEDULE, lr=lrs, norm=norms)
    write_text(os.path.join(directory, "steps.json"), json.dumps(steps, indent=1) + "\n")


def main():
    torch.manual_seed(0)
    make_grads("gpt2_tiny", GPT2_CASE, os.path.join(DATA, "gpt2_tiny_grads"))
    make_grads("gpt2_tiny", ERF_CASE, os.path.join(DATA, "gpt2_tiny_grads", "gelu_erf_padded"))
    make_grads("gpt2_tiny", REVERSIBLE_CASE, os.path.join(DATA, "gpt2_tiny_grads", "reversible"))
    make_grads("gpt2_tiny", SPARSEMAX_CASE, os.path.join(DATA, "gpt2_tiny_grads", "sparsemax"))
    make_grads("gpt2_tiny", ENTMAX15_CASE, os.path.join(DATA, "gpt2_tiny_grads", "entmax15"))
    make_grads("variant", VARIANT_CASE, os.path.join(DATA, "variant_grads"))
    make_adamw(os.path.join(DATA, "adamw_ref"))
    total = 0
    for path in written:
        total += os.path.getsize(path)
    print(f"{total:8d}  bytes in {len(written)} files under {DATA}")


if __name__ == "__main__":
    main()
