#!/usr/bin/python3
"""A GPT-2 whose weights are set by hand so that each head is a known kind, for the head classes' and the circuits'
tests (tests/tst_headclasses.cpp, tests/tst_circuits.cpp): the "model with a known induction head" of issue 64.

Two layers of two heads, a feed-forward that writes nothing (4 wide, its weights zero), V = 16 tokens, a context of 32. The residual stream
is made of one-hot codes written as pairs (+1, -1), so that every vector has mean 0 and LayerNorm only scales it:
  TOK   dims [0, 2V)           the token at this position
  POS   dims [2V, 2V + 2P)     the position
  PREV  dims [2V + 2P, 4V + 2P) the token at the position before, written by head 0.0
The heads, each with scores far apart enough (30 and more) that its softmax is one-hot to float precision:
  0.0  previous token   query "position p", key "position p - 1"; it copies the token it reads into PREV
  0.1  self             query and key "position p"; it writes nothing
  1.0  induction        query TOK, key PREV: it attends to the token after the earlier copy of the current one, and
                        writes that token into TOK three times over, so that the model predicts it (K-composition
                        with 0.0). Position 0's PREV holds its own token (0.0 can only read itself there), so the
                        query's bias and position 0's key push that key down.
  1.1  duplicate token  query and key TOK, less the query's own position: the earlier copy of the current token; it
                        writes nothing
Logits are tied to the embeddings (GPT-2), so the token head 1.0 writes is the one predicted.

    /usr/bin/python3 tests/tools/make_induction_model.py

writes tests/data/induction_tiny/ (config.json, model.safetensors) and checks the attention with make_reference.py's
independent forward.
"""

import json
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import make_reference as ref  # noqa: E402

V, P, H = 16, 32, 2
TOK, POS, PREV = 0, 2 * V, 2 * V + 2 * P
D = 4 * V + 2 * P  # 128
d = D // H  # 64 per head
INNER = 4
CFG = dict(n_layer=2, n_head=H, n_embd=D, n_positions=P, vocab_size=V, activation_function="gelu_new")


def pair(vector, dim, value=1.0):
    vector[dim] += value
    vector[dim + 1] -= value


def weights():
    w = {"wte.weight": torch.zeros(V, D), "wpe.weight": torch.zeros(P, D)}
    for t in range(V):
        pair(w["wte.weight"][t], TOK + 2 * t)
    for p in range(P):
        pair(w["wpe.weight"][p], POS + 2 * p)
    for i in range(2):
        h = f"h.{i}."
        for ln in ("ln_1", "ln_2"):
            w[h + ln + ".weight"] = torch.ones(D)
            w[h + ln + ".bias"] = torch.zeros(D)
        w[h + "attn.c_attn.weight"] = torch.zeros(D, 3 * D)  # columns: Q | K | V, head h at [h·d, (h+1)·d)
        w[h + "attn.c_attn.bias"] = torch.zeros(3 * D)
        w[h + "attn.c_proj.weight"] = torch.zeros(D, D)
        w[h + "attn.c_proj.bias"] = torch.zeros(D)
        w[h + "mlp.c_fc.weight"] = torch.zeros(D, INNER)
        w[h + "mlp.c_fc.bias"] = torch.zeros(INNER)
        w[h + "mlp.c_proj.weight"] = torch.zeros(INNER, D)
        w[h + "mlp.c_proj.bias"] = torch.zeros(D)
    w["ln_f.weight"], w["ln_f.bias"] = torch.ones(D), torch.zeros(D)

    def q(layer, head, row, col, value):
        w[f"h.{layer}.attn.c_attn.weight"][row, head * d + col] = value

    def k(layer, head, row, col, value):
        w[f"h.{layer}.attn.c_attn.weight"][row, D + head * d + col] = value

    def v(layer, head, row, col, value):
        w[f"h.{layer}.attn.c_attn.weight"][row, 2 * D + head * d + col] = value

    # LayerNorm scales a vector of n pairs to entries of ±sqrt(D / 2n): 5.66 in layer 0 (token and position), 4.62 in
    # layer 1 (and the previous token). A score is q·k / sqrt(d) = q·k / 8.
    b = 3.0  # layer 0: 3 · 3 · 5.66² / 8 = 36
    for p in range(P):
        q(0, 0, POS + 2 * p, p, b)
        if p + 1 < d:
            k(0, 0, POS + 2 * p, p + 1, b)
        q(0, 1, POS + 2 * p, p, b)
        k(0, 1, POS + 2 * p, p, b)
    layer0_scale = (D / 4) ** 0.5
    for t in range(V):
        v(0, 0, TOK + 2 * t, t, 1.0)
        pair(w["h.0.attn.c_proj.weight"][t], PREV + 2 * t, 1.0 / layer0_scale)  # head 0.0's context row t
    a = 4.0  # layer 1: 4 · 4 · 4.62² / 8 = 42.7
    layer1_scale = (D / 6) ** 0.5
    for t in range(V):
        q(1, 0, TOK + 2 * t, t, a)
        k(1, 0, PREV + 2 * t, t, a)
        v(1, 0, TOK + 2 * t, t, 1.0)
        pair(w["h.1.attn.c_proj.weight"][t], TOK + 2 * t, 3.0 / layer1_scale)
        q(1, 1, TOK + 2 * t, t, a)
        k(1, 1, TOK + 2 * t, t, a)
    for p in range(P):
        q(1, 1, POS + 2 * p, V + p, a)
        k(1, 1, POS + 2 * p, V + p, -a)
    w["h.1.attn.c_attn.bias"][0 * d + V] = -40.0  # head 1.0's query: position 0's key scores −40 · 4.62 / 8 lower
    k(1, 0, POS + 0, V, 1.0)
    return w


def check(w):
    """The independent forward on a repeated sequence: each head attends where its kind says."""
    n = 12
    tokens = list(torch.randperm(V, generator=torch.Generator().manual_seed(3))[:n].tolist()) * 2
    trace = ref.forward(w, CFG, tokens)
    T = len(tokens)
    worst = 1.0
    for i in range(1, T):
        worst = min(worst, trace["layer.0.attn.probs"][0, i, i - 1].item(), trace["layer.0.attn.probs"][1, i, i].item())
    for i in range(n, T):
        if i <= T - 2:
            worst = min(worst, trace["layer.1.attn.probs"][0, i, i - n + 1].item())
        worst = min(worst, trace["layer.1.attn.probs"][1, i, i - n].item())
        assert trace["logits"][i].argmax().item() == tokens[i - n + 1] or i == T - 1 and \
            trace["logits"][i].argmax().item() == tokens[0], i
    assert worst > 1 - 1e-9, worst
    print(f"every head attends where its kind says (worst weight 1 - {1 - worst:.1e}); the model predicts the repeat")


def main():
    w = weights()
    check(w)
    directory = os.path.join(ref.DATA, "induction_tiny")
    ref.fresh_dir(directory)
    ref.write_model(directory, CFG, w)
    config = os.path.join(directory, "config.json")  # make_reference writes n_inner null: 4 · n_embd
    with open(config, encoding="utf-8") as f:
        text = json.load(f)
    text["n_inner"] = INNER
    with open(config, "w", encoding="utf-8") as f:
        f.write(json.dumps(text, indent=2) + "\n")
    for path in ref.written:
        print("wrote", os.path.relpath(path, ref.DATA))


if __name__ == "__main__":
    main()
