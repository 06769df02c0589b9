#!/usr/bin/python3
"""PyTorch references for direct logit attribution (tests/tst_logitattribution.cpp), from its definition.

Elhage et al. 2021 split the residual stream the unembedding reads into what each component wrote; with the final
norm's scale frozen at its value at the position (TransformerLens's apply_ln_to_stack: each part centred as LayerNorm
centres their sum, divided by the whole stream's sigma or rms), the logit is a sum of parts:
    z = sum over parts of w . N(part) + w . beta,   w = W_U[target] - W_U[contrast] (times d_model^-0.5 for T5's
    tied head)
A head's part is its context through its columns of the output projection, C_h @ W_o[:, h d:(h+1) d].T; the
projection's bias is a part of its own; each feed-forward is one part. OLMo 2 and Gemma 2 normalise each sub-layer's
output before its residual add: that RMSNorm is frozen the same way at the position (its rms of the sub-layer's
output). Gemma 2's soft-capped logits are attributed before the cap (head.logits).

Each family's names are its modeling file's (o_proj, attention.dense, SelfAttention.o, EncDecAttention.o; model.norm,
gpt_neox.final_layer_norm, decoder.final_layer_norm). The streams and contexts come from the independent forwards of
make_family_reference.py (same weights, same input); everything here is computed in float64.

    /usr/bin/python3 tests/tools/make_dla_reference.py

writes tests/data/dla/<model>.json for llama_tiny, neox_tiny, olmo2_tiny, gemma2_tiny and t5_tiny.
"""

import json
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import make_family_reference as fam  # noqa: E402

OUT = os.path.join(fam.DATA, "dla")
# (model, position, target, contrast): a contrast of None attributes the target's logit alone.
CASES = {
    "llama_tiny": [(-1, 5, 7), (2, 40, None)],
    "neox_tiny": [(-1, 11, 3), (4, 0, None)],
    "olmo2_tiny": [(-1, 9, 60)],
    "gemma2_tiny": [(-1, 12, 30), (3, 1, None)],
    "t5_tiny": [(-1, 8, 2), (5, 44, None)],
}


def frozen(x, gamma, beta, eps, centre):
    """The norm with its scale frozen at the stream row x: v -> gamma * (v - mean(v)) / sigma(x) (+ beta apart)."""
    if centre:
        inv = 1.0 / torch.sqrt(((x - x.mean()) ** 2).mean() + eps)
        return (lambda v: gamma * (v - v.mean()) * inv), beta
    inv = 1.0 / torch.sqrt((x ** 2).mean() + eps)
    return (lambda v: gamma * v * inv), beta


def family(cfg, w):
    """Names and norms of each family: o-projection weight/bias names per layer and site, the final norm."""
    kind = cfg["model_type"]
    d64 = {n: t.to(torch.float64) for n, t in w.items()}
    if kind in ("llama", "olmo2", "gemma2"):
        gemma = kind == "gemma2"
        eps = cfg["rms_norm_eps"]
        norm_w = d64["model.norm.weight"] + (1.0 if gemma else 0.0)
        unembed = d64["model.embed_tokens.weight"] if cfg.get("tie_word_embeddings", gemma) else d64["lm_head.weight"]
        out_norm = None
        if kind in ("olmo2", "gemma2"):
            out_norm = lambda i: d64[f"model.layers.{i}.post_attention_layernorm.weight"] + (1.0 if gemma else 0.0)
        return dict(prefix="", layers=cfg["num_hidden_layers"], eps=eps, centre=False, final_w=norm_w, final_b=None,
                    unembed=unembed, scale=1.0,
                    sites=[("attn.", lambda i: f"model.layers.{i}.self_attn.o_proj", out_norm)])
    if kind == "gpt_neox":
        return dict(prefix="", layers=cfg["num_hidden_layers"], eps=cfg["layer_norm_eps"], centre=True,
                    final_w=d64["gpt_neox.final_layer_norm.weight"], final_b=d64["gpt_neox.final_layer_norm.bias"],
                    unembed=d64["embed_out.weight"], scale=1.0,
                    sites=[("attn.", lambda i: f"gpt_neox.layers.{i}.attention.dense", None)])
    if kind == "t5":
        tied = cfg["tie_word_embeddings"]
        return dict(prefix="dec.", layers=cfg["num_decoder_layers"], eps=cfg["layer_norm_epsilon"], centre=False,
                    final_w=d64["decoder.final_layer_norm.weight"], final_b=None,
                    unembed=d64["shared.weight"] if tied else d64["lm_head.weight"],
                    scale=cfg["d_model"] ** -0.5 if tied else 1.0,
                    sites=[("attn.", lambda i: f"decoder.block.{i}.layer.0.SelfAttention.o", None),
                           ("cross.", lambda i: f"decoder.block.{i}.layer.1.EncDecAttention.o", None)])
    raise ValueError(kind)


def attribute(cfg, w, trace, position, target, contrast):
    f = family(cfg, w)
    d64 = {n: t.to(torch.float64) for n, t in w.items()}
    tr = {n: t.to(torch.float64) for n, t in trace.items()}
    pre, L, eps = f["prefix"], f["layers"], f["eps"]
    T = tr[pre + "input"].shape[0]
    t = T - 1 if position < 0 else position
    last = tr[pre + f"layer.{L - 1}.out"][t]
    N, beta = frozen(last, f["final_w"], f["final_b"], eps, f["centre"])
    wdir = f["unembed"][target] - (f["unembed"][contrast] if contrast is not None else 0.0)
    wdir = wdir * f["scale"]

    def dla(v):
        return float(wdir @ N(v))

    result = {"position": position, "target": target, "contrast": -1 if contrast is None else contrast,
              "embedding": dla(tr[pre + "input"][t])}
    total = result["embedding"]
    for site, _, _ in f["sites"]:
        result[site + "heads"] = []
    result["bias"], result["mlp"] = [], []
    for i in range(L):
        p = pre + f"layer.{i}."
        bias_total = 0.0
        for site, name, out_norm in f["sites"]:
            context = tr[p + site + "context"][:, t, :]  # [H, d]
            H, d = context.shape
            W = d64[name(i) + ".weight"]  # [D, H d]
            b = d64.get(name(i) + ".bias", torch.zeros(W.shape[0], dtype=torch.float64))
            parts = [context[h] @ W[:, h * d:(h + 1) * d].T for h in range(H)]
            if out_norm is not None:
                n, _ = frozen(tr[p + site + "out"][t], out_norm(i), None, eps, False)
                parts, b = [n(v) for v in parts], n(b)
            heads = [dla(v) for v in parts]
            result[site + "heads"].append(heads)
            bias_total += dla(b)
            total += sum(heads)
        result["bias"].append(bias_total)
        total += bias_total
        mlp = tr[p + ("mlp.out_norm" if p + "mlp.out_norm" in tr else "mlp.down")][t]
        result["mlp"].append(dla(mlp))
        total += result["mlp"][-1]
    result["norm_shift"] = float(wdir @ beta) if beta is not None else 0.0
    total += result["norm_shift"]
    logits = tr["head.logits"] if "head.logits" in tr else tr["logits"]
    model = float(logits[t, target] - (logits[t, contrast] if contrast is not None else 0.0))
    # The parts sum to the model's own logit: the decomposition is exact, not an approximation.
    assert abs(total - model) < 1e-9 * max(1.0, abs(model)), (total, model)
    result["logit"] = model
    return result


def make(name):
    spec = fam.MODELS[name]
    cfg = spec["config"]
    kind = cfg["model_type"]
    weights = fam.t5_weights(cfg, spec["seed"]) if kind == "t5" else fam.random_weights(cfg, spec["seed"])
    w = {n: fam.stored_bytes(t, spec["dtype"])[1] for n, t in weights.items()}
    # The forward in float64 on the stored weights, so that the only rounding left is the engine's.
    w64 = {n: t.to(torch.float64) for n, t in w.items()}
    if kind == "t5":
        trace = fam.t5_forward(w64, cfg, fam.T5_SOURCE, fam.T5_DECODER)
    else:
        trace = fam.forward(w64, cfg, fam.TOKENS)
    return [attribute(cfg, w64, trace, *case) for case in CASES[name]]


def main():
    torch.set_grad_enabled(False)
    os.makedirs(OUT, exist_ok=True)
    for name in CASES:
        with open(os.path.join(OUT, name + ".json"), "w") as f:
            json.dump(make(name), f, indent=1)
            f.write("\n")
    print(f"wrote direct logit attribution references under {OUT}")


if __name__ == "__main__":
    main()
