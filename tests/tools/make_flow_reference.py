#!/usr/bin/python3
"""References for attention rollout and attention flow (tests/tst_attentionflow.cpp), from Abnar & Zuidema 2020.

Written from the paper and the authors' attention_graph_util.py: each layer's attention combined over heads (their
mean; the maximum or minimum of any head, rows renormalised, for the other fusions), the residual added as an
identity and rows renormalised, A_aug = (A + I) / rowsum(A + I); rollout R_1 = A_aug_1, R_l = A_aug_l R_(l-1); flow the
maximum flow in the layer graph whose edge from position p of layer l to position q of layer l-1 has capacity
A_aug_l[p, q], from the output node (L, i) to each input token (0, j), computed with networkx's Edmonds-Karp as the
authors do, and normalised over j as their compute_flows does.

The attention is the one the independent PyTorch forwards of make_family_reference.py wrote (<model>_ref/layer.L.
attn.probs.npy): a causal model (llama_tiny) and a bidirectional one (bert_tiny). Needs Debian's python3-networkx:

    /usr/bin/python3 tests/tools/make_flow_reference.py

writes tests/data/flow/<model>/rollout.<fusion>.npy [L, T, T] (fusion mean, max, min) and flow.raw.npy and
flow.normalised.npy [T, T] (row i: the flow into output position i from each input token).
"""

import os

import networkx as nx
import numpy as np

DATA = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "data"))


def augmented(probs, fusion):
    """probs: [L, H, T, T] -> [L, T, T]."""
    if fusion == "mean":
        att = probs.mean(axis=1)
    else:
        att = probs.max(axis=1) if fusion == "max" else probs.min(axis=1)
        sums = att.sum(axis=-1, keepdims=True)
        att = np.divide(att, sums, out=np.zeros_like(att), where=sums > 0)
    att = att + np.eye(att.shape[-1])[None]
    return att / att.sum(axis=-1, keepdims=True)


def rollout(aug):
    joint = np.zeros(aug.shape)
    joint[0] = aug[0]
    for i in range(1, aug.shape[0]):
        joint[i] = aug[i] @ joint[i - 1]
    return joint


def flows(aug):
    layers, length, _ = aug.shape
    graph = nx.DiGraph()
    for layer in range(1, layers + 1):
        for p in range(length):
            for q in range(length):
                if aug[layer - 1, p, q] > 0:
                    graph.add_edge(layer * length + p, (layer - 1) * length + q, capacity=aug[layer - 1, p, q])
    raw = np.zeros((length, length))
    for i in range(length):
        for j in range(length):
            raw[i, j] = nx.maximum_flow_value(graph, layers * length + i, j,
                                              flow_func=nx.algorithms.flow.edmonds_karp)
    return raw, raw / raw.sum(axis=1, keepdims=True)


def make(model, layers):
    probs = np.stack([np.load(os.path.join(DATA, f"{model}_ref", f"layer.{l}.attn.probs.npy")).astype(np.float64)
                      for l in range(layers)])
    out = os.path.join(DATA, "flow", model)
    os.makedirs(out, exist_ok=True)
    for fusion in ("mean", "max", "min"):
        np.save(os.path.join(out, f"rollout.{fusion}.npy"), rollout(augmented(probs, fusion)).astype(np.float32))
    raw, normalised = flows(augmented(probs, "mean"))
    np.save(os.path.join(out, "flow.raw.npy"), raw.astype(np.float32))
    np.save(os.path.join(out, "flow.normalised.npy"), normalised.astype(np.float32))


def main():
    make("llama_tiny", 2)
    make("bert_tiny", 2)
    print("wrote rollout and flow references under " + os.path.join(DATA, "flow"))


if __name__ == "__main__":
    main()
