#!/usr/bin/python3
"""PyTorch references for circuit analysis (tests/tst_circuits.cpp), each from its definition.

The residual graph (Elhage et al. 2021): senders write into the stream (the embedding, each head's context through
its columns of o_proj, each MLP); receivers read it (each query head's queries, each K/V head's keys and values, each
MLP, the final norm). Every receiver gets its own copy of the stream it reads, so that what reaches it can differ from
what reaches the others.

- Path patching (Wang et al. 2022), in the app's direction (the corrupted run is the base, clean values are patched
  in): pass 1 runs the corrupted input with the sender's output clean and every other head's output frozen at its
  corrupted value, the MLPs recomputed (through_mlps) or frozen too, and keeps the stream each receiver reads; pass 2
  runs the corrupted input with the receiver reading that stream. The metric is logit(target) - logit(contrast) at
  the last position.
- Edge attribution patching (Syed et al. 2023): score(u -> v) = (a_u(clean) - a_u(corrupted)) . dM/dx_v, the
  gradient taken by autograd at each receiver's own copy of the stream, in the corrupted run. EAP-IG (Hanna et al.
  2024): the gradient averaged over runs whose embedding is corrupted + alpha (clean - corrupted), alpha = (k - 1/2)/m
  for k = 1 .. m (the midpoint rule).

The forwards are Hugging Face's LlamaForCausalLM, Gemma2ForCausalLM and Olmo2ForCausalLM as make_family_reference.py
writes them, in float64 on llama_tiny's, gemma2_tiny's and olmo2_tiny's weights:
- Llama: RMSNorm, rotate-half RoPE, grouped-query attention with 4 query and 2 K/V heads, q/k/v/o biases, SwiGLU;
- Gemma 2: the embedding times sqrt(D), (1 + w) RMSNorms before and after each sub-layer (the "sandwich"), head_dim 12
  in a model 32 wide, query_pre_attn_scalar, soft-capped scores and logits, a sliding window on even layers, GeGLU.
  The norm after the attention reads the heads' summed output, so a head's own output is not what reaches the
  stream. The convention chosen (the app's, analysis/residualgraph.h): with the sum's scale taken from the run, the
  norm is linear, and head h writes (1 + w) * o_h / rms(sum of the o's), o_h its context times its columns of
  o_proj; the heads' writes add up to the norm's output. Path patching freezes o_h (before the norm), and the norm is
  recomputed on the mix. A feed-forward writes its normed output.
- OLMo 2: no norm before the sub-layers, which read the stream itself; q_norm and k_norm over the whole projections
  (all heads together); the norm after each sub-layer as in Gemma 2, with w in place of 1 + w.

    /usr/bin/python3 tests/tools/make_circuits_reference.py

writes tests/data/circuits/llama_tiny.json, gemma2_tiny.json and olmo2_tiny.json.
"""

import json
import math
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import make_family_reference as fam  # noqa: E402

CLEAN = [3, 17, 42, 8, 0, 25, 63, 11]
CORRUPTED = [3, 17, 42, 9, 0, 25, 63, 11]
TARGET, CONTRAST = 5, 40
# (sender, receiver, through_mlps) for path patching, by the app's names.
PATHS = [("a0.1", "a1.2.q", True), ("a0.1", "a1.2.q", False), ("a0.3", "a1.1.k", True), ("a0.0", "a1.0.v", True),
         ("embed", "a1.3.q", True), ("m0", "logits", True), ("a0.2", "logits", True), ("a0.2", "logits", False)]
IG_STEPS = 4


class Model:
    def __init__(self, w, cfg):
        self.w, self.cfg = w, cfg
        self.D, self.H, self.Hkv = cfg["hidden_size"], cfg["num_attention_heads"], cfg["num_key_value_heads"]
        self.d, self.eps, self.L = self.D // self.H, cfg["rms_norm_eps"], cfg["num_hidden_layers"]

    def lin(self, x, name, rows=None):
        weight, bias = self.w[name + ".weight"], self.w.get(name + ".bias")
        if rows is not None:
            weight = weight[rows[0]:rows[1]]
            bias = bias[rows[0]:rows[1]] if bias is not None else None
        y = x @ weight.T
        return y + bias if bias is not None else y

    def rope(self, T):
        """cos and sin [T, d] of rotate-half RoPE, in float32 as the modeling files compute them."""
        freqs = torch.arange(T, dtype=torch.float32)[:, None] * fam.inverse_frequencies(self.cfg, self.d)[None, :]
        emb = torch.cat((freqs, freqs), dim=-1)
        return emb.cos().to(torch.float64), emb.sin().to(torch.float64)

    @staticmethod
    def hooks(reads, writes, keep):
        """read(name, x): the stream receiver `name` reads, shown to `keep`; writes(name, out): what a sender writes."""
        reads = reads or (lambda name, x: x)

        def read(name, x):
            if keep:
                keep(name, x)
            return reads(name, x)
        return read, writes or (lambda name, out: out)

    def graph(self):
        """Senders and receivers in the app's order; edges receiver by receiver, senders in stream order."""
        senders, receivers, edges = ["embed"], [], []
        stream = [0]

        def receive(name, src):
            for s in src:
                edges.append((s, len(receivers)))
            receivers.append(name)

        for l in range(self.L):
            for port, count in (("q", self.H), ("k", self.Hkv), ("v", self.Hkv)):
                for h in range(count):
                    receive(f"a{l}.{h}.{port}", stream)
            heads = list(range(len(senders), len(senders) + self.H))
            senders += [f"a{l}.{h}" for h in range(self.H)]
            receive(f"m{l}", stream + heads)
            senders.append(f"m{l}")
            stream = stream + heads + [len(senders) - 1]
        receive("logits", stream)
        return senders, receivers, edges

    def forward(self, tokens, reads=None, writes=None, embedding=None, keep=None):
        """Returns (logits, outputs): outputs[sender] is what it wrote [T, D].
        reads(name, x) -> the stream receiver `name` reads (x is the stream at that point);
        writes(name, out) -> what sender `name` writes (out is what it computed);
        keep(name, x) is called with each receiver's stream."""
        w, T, D, H, Hkv, d = self.w, len(tokens), self.D, self.H, self.Hkv, self.d
        cos, sin = self.rope(T)
        allowed = torch.tril(torch.ones(T, T, dtype=torch.bool))
        read, writes = self.hooks(reads, writes, keep)
        outputs = {}

        x = w["model.embed_tokens.weight"][torch.tensor(tokens)] if embedding is None else embedding
        x = writes("embed", x)
        outputs["embed"] = x
        for i in range(self.L):
            m = f"model.layers.{i}."
            norm = w[m + "input_layernorm.weight"]

            def project(which, h):
                own = read(f"a{i}.{h}.{which}", x)
                hn = fam.rms_norm(own, norm, self.eps)
                return self.lin(hn, m + f"self_attn.{which}_proj", (h * d, (h + 1) * d))

            q = torch.stack([project("q", h) for h in range(H)])
            k = torch.stack([project("k", h) for h in range(Hkv)]).repeat_interleave(H // Hkv, dim=0)
            v = torch.stack([project("v", h) for h in range(Hkv)]).repeat_interleave(H // Hkv, dim=0)
            q = q * cos + fam.rotate_half(q) * sin
            k = k * cos + fam.rotate_half(k) * sin
            scores = ((q @ k.transpose(1, 2)) / math.sqrt(d)).masked_fill(~allowed, float("-inf"))
            context = torch.softmax(scores, dim=-1) @ v  # [H, T, d]
            o = w[m + "self_attn.o_proj.weight"]
            attn = w[m + "self_attn.o_proj.bias"] if m + "self_attn.o_proj.bias" in w else torch.zeros(D)
            attn = attn.expand(T, D)
            for h in range(H):
                out = writes(f"a{i}.{h}", context[h] @ o[:, h * d:(h + 1) * d].T)
                outputs[f"a{i}.{h}"] = out
                attn = attn + out
            mid = x + attn
            h2 = fam.rms_norm(read(f"m{i}", mid), w[m + "post_attention_layernorm.weight"], self.eps)
            mlp = self.lin(torch.nn.functional.silu(self.lin(h2, m + "mlp.gate_proj")) * self.lin(h2, m + "mlp.up_proj"),
                           m + "mlp.down_proj")
            mlp = writes(f"m{i}", mlp)
            outputs[f"m{i}"] = mlp
            x = mid + mlp
        head = w["model.embed_tokens.weight"] if self.cfg["tie_word_embeddings"] else w["lm_head.weight"]
        self.computed = outputs  # what path patching freezes: here what each sender writes
        return fam.rms_norm(read("logits", x), w["model.norm.weight"], self.eps) @ head.T, outputs


class Gemma2(Model):
    def __init__(self, w, cfg):
        super().__init__(w, cfg)
        self.d = cfg["head_dim"]

    def norm(self, x, name):  # Gemma2RMSNorm: x / sqrt(mean(x^2) + eps) * (1 + w)
        return (x / torch.sqrt(x.pow(2).mean(-1, keepdim=True) + self.eps)) * (1.0 + self.w[name + ".weight"])

    def forward(self, tokens, reads=None, writes=None, embedding=None, keep=None):
        w, cfg, T, D, H, Hkv, d = self.w, self.cfg, len(tokens), self.D, self.H, self.Hkv, self.d
        cos, sin = self.rope(T)
        causal = torch.tril(torch.ones(T, T, dtype=torch.bool))
        in_window = causal & (torch.arange(T)[None, :] > torch.arange(T)[:, None] - cfg["sliding_window"])
        cap = cfg["attn_logit_softcapping"]
        read, writes = self.hooks(reads, writes, keep)
        outputs = {}

        if embedding is None:
            x = w["model.embed_tokens.weight"][torch.tensor(tokens)]
            x = x * torch.tensor(D**0.5, dtype=torch.float32).to(x.dtype)  # Gemma2Model's normalizer
        else:
            x = embedding
        x = writes("embed", x)
        outputs["embed"] = x
        computed = dict(outputs)  # what path patching freezes: a head's output before the norm after the attention
        for i in range(self.L):
            m = f"model.layers.{i}."

            def project(which, h):
                own = self.norm(read(f"a{i}.{h}.{which}", x), m + "input_layernorm")
                return self.lin(own, m + f"self_attn.{which}_proj", (h * d, (h + 1) * d))

            q = torch.stack([project("q", h) for h in range(H)])
            k = torch.stack([project("k", h) for h in range(Hkv)]).repeat_interleave(H // Hkv, dim=0)
            v = torch.stack([project("v", h) for h in range(Hkv)]).repeat_interleave(H // Hkv, dim=0)
            q = q * cos + fam.rotate_half(q) * sin
            k = k * cos + fam.rotate_half(k) * sin
            scores = (q @ k.transpose(1, 2)) * cfg["query_pre_attn_scalar"] ** -0.5
            scores = cap * torch.tanh(scores / cap)
            allowed = in_window if i % 2 == 0 else causal  # Gemma2Attention: sliding unless layer_idx % 2
            context = torch.softmax(scores.masked_fill(~allowed, float("-inf")), dim=-1) @ v  # [H, T, d]
            o = w[m + "self_attn.o_proj.weight"]
            own = [writes(f"a{i}.{h}", context[h] @ o[:, h * d:(h + 1) * d].T) for h in range(H)]
            total = sum(own)
            scale = (1.0 + w[m + "post_attention_layernorm.weight"]) / torch.sqrt(
                total.pow(2).mean(-1, keepdim=True) + self.eps)
            for h in range(H):
                outputs[f"a{i}.{h}"] = own[h] * scale
                computed[f"a{i}.{h}"] = own[h]
            mid = x + total * scale
            h2 = self.norm(read(f"m{i}", mid), m + "pre_feedforward_layernorm")
            mlp = self.lin(fam.gelu_tanh(self.lin(h2, m + "mlp.gate_proj")) * self.lin(h2, m + "mlp.up_proj"),
                           m + "mlp.down_proj")
            mlp = writes(f"m{i}", self.norm(mlp, m + "post_feedforward_layernorm"))
            outputs[f"m{i}"] = computed[f"m{i}"] = mlp
            x = mid + mlp
        self.computed = computed
        logits = self.norm(read("logits", x), "model.norm") @ w["model.embed_tokens.weight"].T
        final = cfg["final_logit_softcapping"]
        return final * torch.tanh(logits / final), outputs


class Olmo2(Model):
    """Olmo2ForCausalLM: no norm before the sub-layers, which read the stream itself (each receiver its own copy);
    q_norm and k_norm over the whole projections, so that each query head's projection, read from its own copy, is
    normalised with the others'; an RMSNorm on each sub-layer's output before its add (a head writes its share, as in
    Gemma 2)."""

    def forward(self, tokens, reads=None, writes=None, embedding=None, keep=None):
        w, T, D, H, Hkv, d, eps = self.w, len(tokens), self.D, self.H, self.Hkv, self.d, self.eps
        cos, sin = self.rope(T)
        allowed = torch.tril(torch.ones(T, T, dtype=torch.bool))
        read, writes = self.hooks(reads, writes, keep)
        outputs = {}

        x = w["model.embed_tokens.weight"][torch.tensor(tokens)] if embedding is None else embedding
        x = writes("embed", x)
        outputs["embed"] = x
        computed = dict(outputs)
        for i in range(self.L):
            m = f"model.layers.{i}."

            def project(which, h):
                return self.lin(read(f"a{i}.{h}.{which}", x), m + f"self_attn.{which}_proj", (h * d, (h + 1) * d))

            q = torch.cat([project("q", h) for h in range(H)], dim=1)  # [T, H·d], as q_proj writes it
            k = torch.cat([project("k", h) for h in range(Hkv)], dim=1)
            v = torch.stack([project("v", h) for h in range(Hkv)]).repeat_interleave(H // Hkv, dim=0)
            q = fam.rms_norm(q, w[m + "self_attn.q_norm.weight"], eps).reshape(T, H, d).transpose(0, 1)
            k = fam.rms_norm(k, w[m + "self_attn.k_norm.weight"], eps).reshape(T, Hkv, d).transpose(0, 1)
            k = k.repeat_interleave(H // Hkv, dim=0)
            q = q * cos + fam.rotate_half(q) * sin
            k = k * cos + fam.rotate_half(k) * sin
            scores = ((q @ k.transpose(1, 2)) / math.sqrt(d)).masked_fill(~allowed, float("-inf"))
            context = torch.softmax(scores, dim=-1) @ v
            o = w[m + "self_attn.o_proj.weight"]
            own = [writes(f"a{i}.{h}", context[h] @ o[:, h * d:(h + 1) * d].T) for h in range(H)]
            total = sum(own)
            scale = w[m + "post_attention_layernorm.weight"] / torch.sqrt(total.pow(2).mean(-1, keepdim=True) + eps)
            for h in range(H):
                outputs[f"a{i}.{h}"] = own[h] * scale
                computed[f"a{i}.{h}"] = own[h]
            mid = x + total * scale
            h2 = read(f"m{i}", mid)
            mlp = self.lin(torch.nn.functional.silu(self.lin(h2, m + "mlp.gate_proj")) * self.lin(h2, m + "mlp.up_proj"),
                           m + "mlp.down_proj")
            mlp = writes(f"m{i}", fam.rms_norm(mlp, w[m + "post_feedforward_layernorm.weight"], eps))
            outputs[f"m{i}"] = computed[f"m{i}"] = mlp
            x = mid + mlp
        self.computed = computed
        head = w["model.embed_tokens.weight"] if self.cfg["tie_word_embeddings"] else w["lm_head.weight"]
        return fam.rms_norm(read("logits", x), w["model.norm.weight"], eps) @ head.T, outputs


def metric(logits):
    return logits[-1, TARGET] - logits[-1, CONTRAST]


def main():
    for name, kind in (("llama_tiny", Model), ("gemma2_tiny", Gemma2), ("olmo2_tiny", Olmo2)):
        write_reference(name, kind)


def write_reference(name, kind):
    spec = fam.MODELS[name]
    cfg = spec["config"]
    w = {n: fam.stored_bytes(t, spec["dtype"])[1] for n, t in fam.random_weights(cfg, spec["seed"]).items()}
    model = kind(w, cfg)
    senders, receivers, edges = model.graph()
    with torch.no_grad():
        clean_logits, clean_out = model.forward(CLEAN)
        clean_computed = model.computed
        corrupted_logits, corrupted_out = model.forward(CORRUPTED)
        corrupted_computed = model.computed
    clean, corrupted = float(metric(clean_logits)), float(metric(corrupted_logits))
    family = fam.forward(w, cfg, CLEAN)["logits"]  # the per-receiver forward is the family's forward
    assert torch.allclose(clean_logits, family, atol=1e-12), (clean_logits - family).abs().max()

    paths = []
    for sender, receiver, through_mlps in PATHS:
        def freeze(name, out):
            if name == sender:
                return clean_computed[name]
            if name.startswith("a") or (name.startswith("m") and not through_mlps):
                return corrupted_computed[name]
            return out
        kept = {}
        with torch.no_grad():
            model.forward(CORRUPTED, writes=freeze, keep=lambda name, x: kept.setdefault(name, x.clone()))
            logits, _ = model.forward(CORRUPTED, reads=lambda name, x: kept[name] if name == receiver else x)
        paths.append({"sender": sender, "receiver": receiver, "through_mlps": through_mlps,
                      "metric": float(metric(logits))})

    def gradients(embedding):
        """dM/dx_v for every receiver, each through its own copy of the stream."""
        leaves = {}

        def reads(name, x):
            leaves[name] = torch.zeros_like(x, requires_grad=True)
            return x + leaves[name]
        logits, _ = model.forward(CORRUPTED, reads=reads, embedding=embedding)
        metric(logits).backward()
        return {name: leaf.grad for name, leaf in leaves.items()}

    delta = {s: clean_out[s] - corrupted_out[s] for s in senders}

    def scores(grads):
        return [float((delta[senders[s]] * grads[receivers[r]]).sum()) for s, r in edges]

    eap = scores(gradients(None))
    e_clean, e_corrupted = clean_out["embed"], corrupted_out["embed"]
    summed = None
    for k in range(1, IG_STEPS + 1):
        alpha = (k - 0.5) / IG_STEPS
        g = gradients(e_corrupted + alpha * (e_clean - e_corrupted))
        summed = g if summed is None else {n: summed[n] + g[n] for n in g}
    ig = scores({n: t / IG_STEPS for n, t in summed.items()})

    out = os.path.join(fam.DATA, "circuits")
    os.makedirs(out, exist_ok=True)
    path = os.path.join(out, name + ".json")
    with open(path, "w") as f:
        json.dump({"clean": CLEAN, "corrupted": CORRUPTED, "target": TARGET, "contrast": CONTRAST,
                   "clean_metric": clean, "corrupted_metric": corrupted,
                   "senders": senders, "receivers": receivers, "edges": edges,
                   "paths": paths, "eap": eap, "eap_ig_steps": IG_STEPS, "eap_ig": ig}, f, indent=1)
        f.write("\n")
    print(f"clean {clean:.4f} corrupted {corrupted:.4f}; {len(edges)} edges; wrote {path}")


if __name__ == "__main__":
    main()
