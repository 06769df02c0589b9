#!/usr/bin/python3
"""PyTorch references for the head classes (tests/tst_headclasses.cpp), from their definitions.

The model reads n distinct random tokens and then the same n again (TransformerLens's repeated-tokens test). With A a
head's attention probabilities, every score but copying is a mean over queries i:
  previous token  A[i, i-1], i >= 1          first token  A[i, 0], i >= 1      self  A[i, i], i >= 1
  local           sum of A[i, j] over |i - j| <= 3, i >= 1
  induction       A[i, i-n+1], i = n .. 2n-2 (the token after the earlier copy of x_i)
  duplicate token A[i, i-n],   i = n .. 2n-1 (the earlier copy of x_i)
Copying (Elhage et al. 2021): sum Re(l) / sum |l| over the eigenvalues l of the head's OV circuit from token to token,
W_E W_V,h W_O,h W_U^T, computed here on the V x V matrix itself (the engine uses the d x d matrix with the same nonzero
eigenvalues). Each family's names are its modeling file's: q/k/v_proj and o_proj (Llama, Qwen2, Gemma 2; a K/V head
serves H/Hkv query heads), GPT-NeoX's query_key_value (per head [q k v] side by side) and attention.dense.

The attention comes from the independent forwards of make_family_reference.py, in float64 on the stored weights.

    /usr/bin/python3 tests/tools/make_head_classes_reference.py

writes tests/data/head_classes/<model>.json for llama_tiny, qwen2_tiny, neox_tiny and gemma2_tiny.
"""

import json
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import make_family_reference as fam  # noqa: E402

OUT = os.path.join(fam.DATA, "head_classes")
MODELS = ("llama_tiny", "qwen2_tiny", "neox_tiny", "gemma2_tiny")
HALF = 12
CLASSES = ("previous-token", "induction", "duplicate-token", "first-token", "self", "local", "copying")


def ov_matrices(cfg, w, layer):
    """Per query head h: W_V,h [D, d] and W_O,h [d, D] in the row-vector convention x W."""
    kind = cfg["model_type"]
    D, H = cfg["hidden_size"], cfg["num_attention_heads"]
    d = cfg.get("head_dim", D // H)
    if kind == "gpt_neox":
        qkv = w[f"gpt_neox.layers.{layer}.attention.query_key_value.weight"]  # [3 H d, D], per head [q k v]
        dense = w[f"gpt_neox.layers.{layer}.attention.dense.weight"]  # [D, H d]
        return [(qkv[h * 3 * d + 2 * d:(h + 1) * 3 * d].T, dense[:, h * d:(h + 1) * d].T) for h in range(H)]
    Hkv = cfg.get("num_key_value_heads", H)
    v = w[f"model.layers.{layer}.self_attn.v_proj.weight"]  # [Hkv d, D]
    o = w[f"model.layers.{layer}.self_attn.o_proj.weight"]  # [D, H d]
    return [(v[(h // (H // Hkv)) * d:(h // (H // Hkv) + 1) * d].T, o[:, h * d:(h + 1) * d].T) for h in range(H)]


def unembedding(cfg, w):
    kind = cfg["model_type"]
    if kind == "gpt_neox":
        return w["gpt_neox.embed_in.weight"], w["embed_out.weight"]
    tied = cfg.get("tie_word_embeddings", kind == "gemma2")
    return w["model.embed_tokens.weight"], (w["model.embed_tokens.weight"] if tied else w["lm_head.weight"])


def make(name, seed):
    spec = fam.MODELS[name]
    cfg = spec["config"]
    weights = fam.random_weights(cfg, spec["seed"])
    w = {n: fam.stored_bytes(t, spec["dtype"])[1].to(torch.float64) for n, t in weights.items()}
    g = torch.Generator().manual_seed(seed)
    first = torch.randperm(cfg["vocab_size"], generator=g)[:HALF].tolist()
    tokens = first + first
    trace = fam.forward(w, cfg, tokens)
    n, T, L = HALF, 2 * HALF, cfg["num_hidden_layers"]
    W_E, W_U = unembedding(cfg, w)
    scores = {k: [] for k in CLASSES}
    for layer in range(L):
        A = trace[f"layer.{layer}.attn.probs"]  # [H, T, T]
        rows = {k: [] for k in CLASSES}
        for h, (W_V, W_O) in enumerate(ov_matrices(cfg, w, layer)):
            a = A[h]
            rows["previous-token"].append(float(sum(a[i, i - 1] for i in range(1, T)) / (T - 1)))
            rows["first-token"].append(float(sum(a[i, 0] for i in range(1, T)) / (T - 1)))
            rows["self"].append(float(sum(a[i, i] for i in range(1, T)) / (T - 1)))
            rows["local"].append(float(sum(a[i, max(0, i - 3):i + 4].sum() for i in range(1, T)) / (T - 1)))
            rows["induction"].append(float(sum(a[i, i - n + 1] for i in range(n, T - 1)) / (n - 1)))
            rows["duplicate-token"].append(float(sum(a[i, i - n] for i in range(n, T)) / n))
            full = W_E @ W_V @ W_O @ W_U.T  # V x V
            lam = torch.linalg.eigvals(full)
            rows["copying"].append(float(lam.real.sum() / lam.abs().sum()))
        for k in CLASSES:
            scores[k].append(rows[k])
    return {"tokens": tokens, "half": n, "scores": scores}


def main():
    torch.set_grad_enabled(False)
    os.makedirs(OUT, exist_ok=True)
    for i, name in enumerate(MODELS):
        with open(os.path.join(OUT, name + ".json"), "w") as f:
            json.dump(make(name, 100 + i), f, indent=1)
            f.write("\n")
    print(f"wrote head-class references under {OUT}")


if __name__ == "__main__":
    main()
