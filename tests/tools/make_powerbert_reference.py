#!/usr/bin/python3
"""An independent PyTorch reference for PoWER-BERT's token elimination (tests/tst_tokenretention.cpp).

Goyal et al. 2020, "PoWER-BERT: Accelerating BERT Inference via Progressive Word-vector Elimination", §3: after the
self-attention of encoder layer j, the significance of word vector k is the attention it receives, summed over the
heads and over every query of that layer, sig(k) = Σ_h Σ_i A_h[i, k]; an extract layer keeps the ℓ_j most significant
word vectors and drops the others from the sequence, so the feed-forward of layer j and every later layer run on
fewer vectors. This script drops them for real: each later layer's tensors are shorter. The engine instead masks an
eliminated token as a key; the test checks that both give the same significance, the same survivors and the same
outputs at the survivors.

Convention shared with the engine (engine/tokenretention.h): the protected positions (a masked LM's targets) always go
on; the rest are ranked by significance, ties to the earlier position; nothing is eliminated after the last layer.

The forward is BERT's (modeling_bert.py, as tests/tools/make_family_reference.py writes it again): word, position and
token-type embeddings, post-LN blocks, scores / sqrt(d), no mask, exact GELU, the masked-LM head. Everything in
float64 from float32 weights. Run with Debian's interpreter:

    /usr/bin/python3 tests/tools/make_powerbert_reference.py

It rewrites tests/data/bert_power_tiny/ (a 3-layer BertForMaskedLM, F32) and tests/data/bert_power_tiny_ref/:
  input.json         {"tokens", "protect", "kept": the count after layers 0 and 1}
  sig.{j}.npy        [T] the significance at layer j over the original positions (0 for a token already gone)
  kept.{j}.npy       [T] 1 for the tokens that go on past layer j
  out.npy            [n, D] the last layer's output at the survivors, in position order
  logits.npy         [n, V] the masked-LM logits there
"""
import json
import math
import os
import sys

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from make_family_reference import (DATA, bert_weights, fresh_dir, layer_norm, write_checkpoint,  # noqa: E402
                                   write_text)

CONFIG = dict(model_type="bert", architectures=["BertForMaskedLM"], hidden_size=32, intermediate_size=48,
              num_hidden_layers=3, num_attention_heads=4, vocab_size=64, max_position_embeddings=16,
              type_vocab_size=2, layer_norm_eps=1e-12, hidden_act="gelu", position_embedding_type="absolute")
SEED = 51
TOKENS = [5, 17, 42, 8, 33, 25, 63, 11, 2, 40, 19, 7]
PROTECT = [3, 10]
KEPT = [9, 6]  # round(0.75 · 12), round(0.5 · 12): the engine's schedule 0.75, 0.5
MIN_GAP = 1e-3  # the significance between the last survivor and the first eliminated: far above float32's error


def choose(sig, alive, count):
    """Rows (indices into alive) that go on: protected first, then by significance, ties to the earlier position."""
    protected = [r for r, pos in enumerate(alive) if pos in PROTECT]
    rest = sorted((r for r, pos in enumerate(alive) if pos not in PROTECT), key=lambda r: (-sig[r].item(), alive[r]))
    chosen = protected + rest[:count - len(protected)]
    if count - len(protected) < len(rest):
        gap = sig[rest[count - len(protected) - 1]].item() - sig[rest[count - len(protected)]].item()
        assert gap > MIN_GAP, f"significance gap {gap} at the cut: choose another seed"
    return sorted(chosen)


def forward(w, tokens):
    D, H, eps = CONFIG["hidden_size"], CONFIG["num_attention_heads"], CONFIG["layer_norm_eps"]
    d, T, L = D // H, len(tokens), CONFIG["num_hidden_layers"]

    def lin(x, name):
        return x @ w[name + ".weight"].T + w[name + ".bias"]

    e = "bert.embeddings."
    x = (w[e + "word_embeddings.weight"][torch.tensor(tokens)] + w[e + "position_embeddings.weight"][:T]
         + w[e + "token_type_embeddings.weight"][torch.zeros(T, dtype=torch.long)])
    x = layer_norm(x, w, e + "LayerNorm", eps)
    alive = list(range(T))
    out = {}
    for i in range(L):
        m, n = f"bert.encoder.layer.{i}.", len(alive)
        a = m + "attention.self."
        q, k, v = (lin(x, a + name).reshape(n, H, d).transpose(0, 1) for name in ("query", "key", "value"))
        probs = torch.softmax(q @ k.transpose(1, 2) / math.sqrt(d), dim=-1)
        merged = (probs @ v).transpose(0, 1).reshape(n, D)
        x = layer_norm(x + lin(merged, m + "attention.output.dense"), w, m + "attention.output.LayerNorm", eps)
        if i + 1 < L:  # the extract layer, between the attention and the feed-forward
            sig = probs.sum(dim=(0, 1))
            rows = choose(sig, alive, KEPT[i])
            full_sig, kept = np.zeros(T, dtype=np.float32), np.zeros(T, dtype=np.float32)
            for r, pos in enumerate(alive):
                full_sig[pos] = sig[r].item()
            for r in rows:
                kept[alive[r]] = 1
            out[f"sig.{i}"], out[f"kept.{i}"] = full_sig, kept
            x, alive = x[rows], [alive[r] for r in rows]
        up = torch.nn.functional.gelu(lin(x, m + "intermediate.dense"))
        x = layer_norm(x + lin(up, m + "output.dense"), w, m + "output.LayerNorm", eps)
    out["out"] = x
    h = layer_norm(torch.nn.functional.gelu(lin(x, "cls.predictions.transform.dense")), w,
                   "cls.predictions.transform.LayerNorm", eps)
    out["logits"] = h @ w[e + "word_embeddings.weight"].T + w["cls.predictions.bias"]
    return out, alive


def main():
    torch.set_grad_enabled(False)
    model = os.path.join(DATA, "bert_power_tiny")
    ref = os.path.join(DATA, "bert_power_tiny_ref")
    fresh_dir(model)
    fresh_dir(ref)
    weights = bert_weights(CONFIG, SEED, nsp=False)
    write_text(os.path.join(model, "config.json"), json.dumps(CONFIG, indent=2) + "\n")
    write_checkpoint(model, weights, "F32", 1)
    out, alive = forward({n: t.to(torch.float64) for n, t in weights.items()}, TOKENS)
    for name, value in out.items():
        array = value if isinstance(value, np.ndarray) else value.to(torch.float32).numpy()
        np.save(os.path.join(ref, name + ".npy"), np.ascontiguousarray(array, dtype=np.float32))
    write_text(os.path.join(ref, "input.json"),
               json.dumps({"tokens": TOKENS, "protect": PROTECT, "kept": KEPT, "survivors": alive}) + "\n")
    print(f"survivors {alive}; wrote {model} and {ref}")


if __name__ == "__main__":
    main()
