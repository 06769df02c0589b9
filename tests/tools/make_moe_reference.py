#!/usr/bin/python3
"""Independent PyTorch references for Transformer Atlas's Switch Transformer layers (tests/tst_moe.cpp).

The router is written again here the way the Switch Transformer code does it (Fedus et al. 2021; Mesh
TensorFlow, Hugging Face's SwitchTop1Router), sharing no code with the C++ engine:
  logits = x W_r, probs = softmax(logits); each token's top-k experts by probability;
  a token's place in its expert's buffer is a cumulative sum of one-hot choices over the sequence, the k-th choices
  queued after every kept choice of a lower rank (GShard); a place beyond capacity = ceil(factor * T / E) drops it;
  out = sum over kept choices of probs[expert] * FFN_expert(x);
  aux = E * sum_i f_i P_i (f_i: share of tokens whose top-1 is i, without gradient; P_i: mean probability);
  z = mean_t logsumexp(logits_t)^2.
The loss differentiated is cross-entropy + alpha * sum(aux) + beta * sum(z) over the expert layers. The rest is
GPT-2 (pre-LN, learned positions, tanh GELU, tied logits). Everything runs in float64 from float32 weights.

    /usr/bin/python3 tests/tools/make_moe_reference.py

rewrites tests/data/moe/<case>/ (config.json, model.safetensors) and tests/data/moe/<case>_ref/ (trace tensors as
<name>.npy, loss.npy, router_loss.npy, grad.<parameter>.npy, input.json {"tokens", "targets"}).
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

OUT = os.path.join(ref.DATA, "moe")
BASE = dict(n_layer=2, n_head=2, n_embd=16, n_positions=16, vocab_size=30, activation_function="gelu_new")
TOKENS = [3, 17, 22, 8, 0, 25, 29, 11, 5, 14, 3, 9]
CASES = {
    # top-1, every layer, a tight capacity: ceil(1.0 * 12 / 4) = 3
    "switch": dict(atlas_experts=4, atlas_expert_top_k=1, atlas_capacity_factor=1.0,
                   atlas_router_aux_loss_coef=0.1, atlas_router_z_loss_coef=0.01),
    # top-2 in layer 1 only (layer 0 dense): ceil(1.5 * 12 / 3) = 6
    "top2": dict(atlas_experts=3, atlas_expert_top_k=2, atlas_capacity_factor=1.5, atlas_moe_layers=[1],
                 atlas_router_aux_loss_coef=0.05, atlas_router_z_loss_coef=0.02),
}


def is_moe(cfg, i):
    return "atlas_moe_layers" not in cfg or i in cfg["atlas_moe_layers"]


def ffn(x, w, prefix):
    up = x @ w[prefix + "c_fc.weight"] + w[prefix + "c_fc.bias"]
    return F.gelu(up, approximate="tanh") @ w[prefix + "c_proj.weight"] + w[prefix + "c_proj.bias"]


def switch(x, w, i, cfg, trace, losses):
    T = x.shape[0]
    E, K = cfg["atlas_experts"], cfg["atlas_expert_top_k"]
    capacity = math.ceil(cfg["atlas_capacity_factor"] * T / E)
    p = f"layer.{i}."
    logits = x @ w[f"h.{i}.mlp.router.weight"]
    probs = torch.softmax(logits, dim=-1)
    top = torch.topk(probs, K, dim=-1).indices  # [T, K], falling probability
    choice = torch.full((T, K), -1, dtype=torch.long)
    kept_before = torch.zeros(E, dtype=torch.long)  # kept choices of lower ranks per expert
    for r in range(K):
        onehot = F.one_hot(top[:, r], E)  # [T, E]
        place = torch.cumsum(onehot, dim=0) + kept_before[None, :]  # 1-based place in the buffer
        keep = (onehot * (place <= capacity)).sum(dim=1).bool()
        choice[:, r] = torch.where(keep, top[:, r], torch.full_like(top[:, r], -1))
        kept_before += (onehot * keep[:, None]).sum(dim=0)
    gate = torch.where(choice >= 0, probs.gather(1, choice.clamp(min=0)), torch.zeros(T, K, dtype=probs.dtype))
    out = torch.zeros_like(x)
    for e in range(E):
        mask = (choice == e)  # [T, K]
        weight = (gate * mask).sum(dim=1, keepdim=True)  # [T, 1]
        if mask.any():
            out = out + weight * ffn(x, w, f"h.{i}.mlp.experts.{e}.")
    f = F.one_hot(probs.argmax(dim=-1), E).to(probs.dtype).mean(dim=0)
    aux = E * (f.detach() * probs.mean(dim=0)).sum()
    z = (torch.logsumexp(logits, dim=-1) ** 2).mean()
    trace.update({p + "router.logits": logits, p + "router.probs": probs, p + "router.choice": choice.double(),
                  p + "router.gate": gate, p + "router.expert": choice[:, 0].double(),
                  p + "router.capacity": torch.tensor(float(capacity)), p + "router.aux_loss": aux,
                  p + "router.z_loss": z, p + "mlp.down": out})
    losses.append(cfg["atlas_router_aux_loss_coef"] * aux + cfg["atlas_router_z_loss_coef"] * z)
    return out


def attention(x, w, i, cfg):
    T, D = x.shape
    H = cfg["n_head"]
    d = D // H
    h = f"h.{i}."
    qkv = x @ w[h + "attn.c_attn.weight"] + w[h + "attn.c_attn.bias"]
    q, k, v = (t.reshape(T, H, d).permute(1, 0, 2) for t in qkv.split(D, dim=1))
    scores = q @ k.transpose(1, 2) / math.sqrt(d)
    allowed = torch.tril(torch.ones(T, T, dtype=torch.bool))
    probs = torch.softmax(scores.masked_fill(~allowed, float("-inf")), dim=-1)
    merged = (probs @ v).permute(1, 0, 2).reshape(T, D)
    return merged @ w[h + "attn.c_proj.weight"] + w[h + "attn.c_proj.bias"]


def forward(w, cfg, tokens):
    trace, losses = {}, []
    x = w["wte.weight"][torch.tensor(tokens)] + w["wpe.weight"][: len(tokens)]
    for i in range(cfg["n_layer"]):
        h = f"h.{i}."
        x = x + attention(ref.layer_norm(x, w, h + "ln_1"), w, i, cfg)
        ln2 = ref.layer_norm(x, w, h + "ln_2")
        x = x + (switch(ln2, w, i, cfg, trace, losses) if is_moe(cfg, i) else ffn(ln2, w, h + "mlp."))
        trace[f"layer.{i}.out"] = x
    trace["logits"] = ref.layer_norm(x, w, "ln_f") @ w["wte.weight"].T
    return trace, sum(losses)


def make_case(name, extra, seed):
    cfg = dict(BASE, **extra)
    weights = ref.random_weights(cfg, seed)
    g = torch.Generator().manual_seed(seed + 1)
    D, E = cfg["n_embd"], cfg["atlas_experts"]
    for i in range(cfg["n_layer"]):
        if not is_moe(cfg, i):
            continue
        h = f"h.{i}.mlp."
        for part in ("c_fc.weight", "c_fc.bias", "c_proj.weight", "c_proj.bias"):
            del weights[h + part]
        weights[h + "router.weight"] = torch.randn(D, E, generator=g) * 0.8
        for e in range(E):
            x = f"{h}experts.{e}."
            weights[x + "c_fc.weight"] = torch.randn(D, 4 * D, generator=g) * 0.2
            weights[x + "c_fc.bias"] = torch.randn(4 * D, generator=g) * 0.1
            weights[x + "c_proj.weight"] = torch.randn(4 * D, D, generator=g) * 0.2
            weights[x + "c_proj.bias"] = torch.randn(D, generator=g) * 0.1
    model_dir = os.path.join(OUT, name)
    ref.fresh_dir(model_dir)
    config = ref.config_json(cfg)
    config.update(extra)
    ref.write_text(os.path.join(model_dir, "config.json"), json.dumps(config, indent=2) + "\n")
    ref.write_safetensors(os.path.join(model_dir, "model.safetensors"),
                          {k: v.numpy().astype(np.float32) for k, v in weights.items()})

    w = {k: v.to(torch.float64).requires_grad_(True) for k, v in weights.items()}
    trace, router_loss = forward(w, cfg, TOKENS)
    targets = TOKENS[1:] + [-1]
    loss = F.cross_entropy(trace["logits"], torch.tensor(targets), ignore_index=-1)
    (loss + router_loss).backward()
    dropped = sum(int((v < 0).sum()) for k, v in trace.items() if k.endswith("router.choice"))
    assert dropped > 0, f"{name}: no token dropped, the case would not test the capacity"
    out = os.path.join(OUT, name + "_ref")
    ref.fresh_dir(out)
    ref.save_trace(out, {k: v.detach() for k, v in trace.items()})
    ref.save_trace(out, {"loss": loss.detach(), "router_loss": router_loss.detach()})
    ref.save_trace(out, {"grad." + k: v.grad for k, v in w.items()})
    ref.write_text(os.path.join(out, "input.json"), json.dumps({"tokens": TOKENS, "targets": targets}) + "\n")
    print(f"{name}: {dropped} dropped choices")


def main():
    for n, (name, extra) in enumerate(CASES.items()):
        make_case(name, extra, seed=300 + 10 * n)
    total = sum(os.path.getsize(p) for p in ref.written)
    print(f"{total} bytes in {len(ref.written)} files under {OUT}")


if __name__ == "__main__":
    main()
