#!/usr/bin/python3
"""A PyTorch reference for activation patching per head (tests/tst_activationpatching.cpp).

Written from the definition (Meng et al. 2022; Wang et al. 2022): run the clean input and keep each head's output
(its context C_h = A_h V_h, before o_proj); run the corrupted input with head h of layer l's context replaced by the
clean one at every position, everything after it computed again; the metric is logit(target) - logit(contrast) at the
last position, and recovered = (m_patched - m_corrupted) / (m_clean - m_corrupted).

The forward is Hugging Face's LlamaForCausalLM as make_family_reference.py writes it (RMSNorm, rotate-half RoPE with
llama3 scaling, grouped-query attention, q/k/v/o and MLP biases, SwiGLU, an untied lm_head), on the llama_tiny
checkpoint's weights, with a hook on each head's context. Run with Debian's interpreter:

    /usr/bin/python3 tests/tools/make_patching_reference.py

writes tests/data/patching/llama_tiny/input.json (clean, corrupted, target, contrast) and recovered.npy [L, H].
"""

import json
import math
import os
import sys

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import make_family_reference as fam  # noqa: E402

CLEAN = [3, 17, 42, 8, 0, 25, 63, 11]
CORRUPTED = [3, 17, 42, 9, 0, 25, 63, 11]  # one token changed
TARGET, CONTRAST = 5, 40


def forward(w, cfg, tokens, contexts=None, patch=None):
    """The Llama forward; returns (logits, each layer's [H, T, d] context). patch=(layer, head) writes the head's
    context from `contexts` (the clean run's) before o_proj reads it."""
    T = len(tokens)
    D, H, Hkv = cfg["hidden_size"], cfg["num_attention_heads"], cfg["num_key_value_heads"]
    d, eps = D // H, cfg["rms_norm_eps"]
    freqs = torch.arange(T, dtype=torch.float32)[:, None] * fam.inverse_frequencies(cfg, d)[None, :]
    emb = torch.cat((freqs, freqs), dim=-1)
    cos, sin = emb.cos().to(torch.float64), emb.sin().to(torch.float64)
    allowed = torch.tril(torch.ones(T, T, dtype=torch.bool))

    def lin(x, name):
        y = x @ w[name + ".weight"].T
        return y + w[name + ".bias"] if name + ".bias" in w else y

    x = w["model.embed_tokens.weight"][torch.tensor(tokens)]
    kept = []
    for i in range(cfg["num_hidden_layers"]):
        m = f"model.layers.{i}."
        h = fam.rms_norm(x, w[m + "input_layernorm.weight"], eps)
        q = lin(h, m + "self_attn.q_proj").reshape(T, H, d).transpose(0, 1)
        k = lin(h, m + "self_attn.k_proj").reshape(T, Hkv, d).transpose(0, 1).repeat_interleave(H // Hkv, dim=0)
        v = lin(h, m + "self_attn.v_proj").reshape(T, Hkv, d).transpose(0, 1).repeat_interleave(H // Hkv, dim=0)
        q = q * cos + fam.rotate_half(q) * sin
        k = k * cos + fam.rotate_half(k) * sin
        scores = (q @ k.transpose(1, 2)) / math.sqrt(d)
        scores = scores.masked_fill(~allowed, float("-inf"))
        context = torch.softmax(scores, dim=-1) @ v  # [H, T, d]
        if patch is not None and patch[0] == i:
            context = context.clone()
            context[patch[1]] = contexts[i][patch[1]]
        kept.append(context)
        mid = x + lin(context.transpose(0, 1).reshape(T, H * d), m + "self_attn.o_proj")
        h2 = fam.rms_norm(mid, w[m + "post_attention_layernorm.weight"], eps)
        x = mid + lin(torch.nn.functional.silu(lin(h2, m + "mlp.gate_proj")) * lin(h2, m + "mlp.up_proj"),
                      m + "mlp.down_proj")
    head = w["model.embed_tokens.weight"] if cfg["tie_word_embeddings"] else w["lm_head.weight"]
    return fam.rms_norm(x, w["model.norm.weight"], eps) @ head.T, kept


def main():
    torch.set_grad_enabled(False)
    spec = fam.MODELS["llama_tiny"]
    cfg = spec["config"]
    w = {n: fam.stored_bytes(t, spec["dtype"])[1] for n, t in fam.random_weights(cfg, spec["seed"]).items()}

    def metric(logits):
        return float(logits[-1, TARGET] - logits[-1, CONTRAST])

    clean_logits, contexts = forward(w, cfg, CLEAN)
    corrupted_logits, _ = forward(w, cfg, CORRUPTED)
    clean, corrupted = metric(clean_logits), metric(corrupted_logits)
    L, H = cfg["num_hidden_layers"], cfg["num_attention_heads"]
    recovered = np.zeros((L, H))
    for layer in range(L):
        for head in range(H):
            patched, _ = forward(w, cfg, CORRUPTED, contexts, (layer, head))
            recovered[layer, head] = (metric(patched) - corrupted) / (clean - corrupted)
    out = os.path.join(fam.DATA, "patching", "llama_tiny")
    os.makedirs(out, exist_ok=True)
    with open(os.path.join(out, "input.json"), "w") as f:
        json.dump({"clean": CLEAN, "corrupted": CORRUPTED, "target": TARGET, "contrast": CONTRAST,
                   "clean_metric": clean, "corrupted_metric": corrupted}, f, indent=1)
        f.write("\n")
    np.save(os.path.join(out, "recovered.npy"), recovered.astype(np.float32))
    print(f"clean {clean:.4f} corrupted {corrupted:.4f}; wrote {out}")


if __name__ == "__main__":
    main()
