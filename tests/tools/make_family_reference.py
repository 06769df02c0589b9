#!/usr/bin/python3
"""Independent PyTorch references for the Llama-family checkpoints (tests/tst_engine_parity.cpp).

This script shares no code with the C++ engine. It writes the forward pass of Hugging Face's modeling_llama.py,
modeling_mistral.py and modeling_qwen2.py again with plain torch operations:
  - RMSNorm: w * x / sqrt(mean(x^2) + eps);
  - q_proj, k_proj, v_proj and o_proj as nn.Linear (y = x W^T + b), with the biases each family has;
  - rotary embeddings in the rotate-half convention. inv_freq = 1 / theta^(arange(0, d, 2) / d) is computed in
    float32, as LlamaRotaryEmbedding does, and rope_scaling follows _compute_linear_scaling_parameters and
    _compute_llama3_parameters;
  - repeat_kv for grouped-query attention: query head h reads K/V head h // (H / Hkv);
  - scores Q K^T / sqrt(d), the causal mask (and Mistral's sliding window: key j is masked when j <= i - window),
    softmax, probs V, o_proj;
  - SwiGLU: down_proj(silu(gate_proj(x)) * up_proj(x));
  - the final norm, then lm_head, or the embedding when tie_word_embeddings.
Everything is computed in float64 from the weights as stored (rounded to BF16 or F16 where the file holds those), and
saved as float32 .npy under the engine's trace names (docs/trace-names.md).

Run it with Debian's interpreter, which has python3-torch and numpy:

    /usr/bin/python3 tests/tools/make_family_reference.py

It is deterministic (fixed seeds) and rewrites, under tests/data/:
  llama_tiny/       llama: GQA (4 query heads, 2 K/V heads), attention_bias and mlp_bias, untied lm_head,
                    llama3 rope_scaling whose bands all hold a frequency; F32, one model.safetensors, "model." keys
  qwen2_tiny/       qwen2: multi-query attention (1 K/V head), q/k/v biases only, tied embeddings, rope_theta 1e6,
                    linear rope_scaling (factor 2); BF16, in two shards named by model.safetensors.index.json
  mistral_tiny/     mistral: GQA, no biases, untied, sliding_window 4 over 8 tokens; F16
  <name>_ref/       every trace tensor as <trace name>.npy, and tokens.json
"""

import json
import math
import os
import shutil
import struct

import numpy as np
import torch

DATA = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "data"))
TOKENS = [3, 17, 42, 8, 0, 25, 63, 11]

MODELS = {
    "llama_tiny": dict(
        config=dict(model_type="llama", architectures=["LlamaForCausalLM"], hidden_size=32, intermediate_size=48,
                    num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2, vocab_size=64,
                    max_position_embeddings=128, rms_norm_eps=1e-5, rope_theta=10000.0, hidden_act="silu",
                    tie_word_embeddings=False, attention_bias=True, mlp_bias=True,
                    rope_scaling=dict(rope_type="llama3", factor=8.0, low_freq_factor=1.0, high_freq_factor=4.0,
                                      original_max_position_embeddings=64)),
        dtype="F32", shards=1, seed=31),
    "qwen2_tiny": dict(
        config=dict(model_type="qwen2", architectures=["Qwen2ForCausalLM"], hidden_size=32, intermediate_size=40,
                    num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=1, vocab_size=64,
                    max_position_embeddings=256, rms_norm_eps=1e-6, rope_theta=1000000.0, hidden_act="silu",
                    tie_word_embeddings=True, use_sliding_window=False,
                    rope_scaling=dict(type="linear", factor=2.0)),
        dtype="BF16", shards=2, seed=32),
    "mistral_tiny": dict(
        config=dict(model_type="mistral", architectures=["MistralForCausalLM"], hidden_size=32,
                    intermediate_size=56, num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2,
                    vocab_size=64, max_position_embeddings=64, rms_norm_eps=1e-5, rope_theta=10000.0,
                    hidden_act="silu", tie_word_embeddings=False, sliding_window=4),
        dtype="F16", shards=1, seed=33),
}

written = []


# ---------------------------------------------------------------------------------------------- files

def write_text(path, text):
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)
    written.append(path)


def stored_bytes(t, dtype):
    """The little-endian bytes of float32 tensor t stored as dtype, and t rounded as the file holds it."""
    if dtype == "F32":
        a = t.to(torch.float32)
        return a.numpy().astype("<f4").tobytes(), a.to(torch.float64)
    if dtype == "F16":
        a = t.to(torch.float16)
        return a.numpy().astype("<f2").tobytes(), a.to(torch.float64)
    a = t.to(torch.bfloat16)  # numpy has no bfloat16: its bits, as int16
    return a.view(torch.int16).numpy().astype("<i2").tobytes(), a.to(torch.float64)


def write_safetensors(path, tensors, dtype):
    """tensors: {name: float32 torch tensor}, written in sorted order as dtype."""
    header = {"__metadata__": {"format": "pt"}}
    blobs = []
    offset = 0
    for name in sorted(tensors):
        raw, _ = stored_bytes(tensors[name], dtype)
        header[name] = {"dtype": dtype, "shape": list(tensors[name].shape), "data_offsets": [offset, offset + len(raw)]}
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
    return offset


def write_checkpoint(directory, tensors, dtype, shards):
    if shards == 1:
        write_safetensors(os.path.join(directory, "model.safetensors"), tensors, dtype)
        return
    names = sorted(tensors)
    per = math.ceil(len(names) / shards)
    weight_map, total = {}, 0
    for s in range(shards):
        file = f"model-{s + 1:05d}-of-{shards:05d}.safetensors"
        part = {n: tensors[n] for n in names[s * per:(s + 1) * per]}
        total += write_safetensors(os.path.join(directory, file), part, dtype)
        weight_map.update({n: file for n in part})
    index = {"metadata": {"total_size": total}, "weight_map": weight_map}
    write_text(os.path.join(directory, "model.safetensors.index.json"), json.dumps(index, indent=2) + "\n")


def fresh_dir(directory):
    if os.path.isdir(directory):
        shutil.rmtree(directory)
    os.makedirs(directory)


def save_trace(directory, trace):
    for name, t in trace.items():
        path = os.path.join(directory, name + ".npy")
        np.save(path, t.to(torch.float32).numpy().copy(order="C"))
        written.append(path)


# ---------------------------------------------------------------------------------------------- weights

def random_weights(cfg, seed):
    """Hugging Face's names for LlamaForCausalLM and its kin, nn.Linear shapes [out, in]."""
    g = torch.Generator().manual_seed(seed)
    D, V, F = cfg["hidden_size"], cfg["vocab_size"], cfg["intermediate_size"]
    H, Hkv = cfg["num_attention_heads"], cfg["num_key_value_heads"]
    d = D // H
    qwen2 = cfg["model_type"] == "qwen2"
    qkv_bias = qwen2 or cfg.get("attention_bias", False)
    o_bias = not qwen2 and cfg.get("attention_bias", False)
    mlp_bias = not qwen2 and cfg.get("mlp_bias", False)

    def normal(*shape, std=0.2):
        return torch.randn(*shape, generator=g, dtype=torch.float32) * std

    def linear(w, name, out, inp, bias):
        w[name + ".weight"] = normal(out, inp)
        if bias:
            w[name + ".bias"] = normal(out, std=0.1)

    w = {"model.embed_tokens.weight": normal(V, D, std=0.5)}
    for i in range(cfg["num_hidden_layers"]):
        p = f"model.layers.{i}."
        w[p + "input_layernorm.weight"] = 1.0 + normal(D, std=0.1)
        linear(w, p + "self_attn.q_proj", H * d, D, qkv_bias)
        linear(w, p + "self_attn.k_proj", Hkv * d, D, qkv_bias)
        linear(w, p + "self_attn.v_proj", Hkv * d, D, qkv_bias)
        linear(w, p + "self_attn.o_proj", D, H * d, o_bias)
        w[p + "post_attention_layernorm.weight"] = 1.0 + normal(D, std=0.1)
        linear(w, p + "mlp.gate_proj", F, D, mlp_bias)
        linear(w, p + "mlp.up_proj", F, D, mlp_bias)
        linear(w, p + "mlp.down_proj", D, F, mlp_bias)
    w["model.norm.weight"] = 1.0 + normal(D, std=0.1)
    if not cfg["tie_word_embeddings"]:
        w["lm_head.weight"] = normal(V, D)
    return w


# ---------------------------------------------------------------------------------------------- forward

def inverse_frequencies(cfg, d):
    """LlamaRotaryEmbedding's inv_freq (float32), with rope_scaling applied."""
    base = cfg["rope_theta"]
    inv_freq = 1.0 / (base ** (torch.arange(0, d, 2, dtype=torch.int64).float() / d))
    scaling = cfg.get("rope_scaling") or {}
    kind = scaling.get("rope_type", scaling.get("type", "default"))
    if kind == "linear":
        return inv_freq / scaling["factor"]
    if kind == "llama3":  # _compute_llama3_parameters
        factor, low, high = scaling["factor"], scaling["low_freq_factor"], scaling["high_freq_factor"]
        old_context = scaling["original_max_position_embeddings"]
        low_wavelen, high_wavelen = old_context / low, old_context / high
        wavelen = 2 * math.pi / inv_freq
        scaled = torch.where(wavelen > low_wavelen, inv_freq / factor, inv_freq)
        smooth = (old_context / wavelen - low) / (high - low)
        smoothed = (1 - smooth) * scaled / factor + smooth * scaled
        medium = ~(wavelen < high_wavelen) * ~(wavelen > low_wavelen)
        return torch.where(medium, smoothed, scaled)
    return inv_freq


def rotate_half(x):
    half = x.shape[-1] // 2
    return torch.cat((-x[..., half:], x[..., :half]), dim=-1)


def rms_norm(x, weight, eps):
    return weight * (x / torch.sqrt(x.pow(2).mean(-1, keepdim=True) + eps))


def forward(w, cfg, tokens):
    T = len(tokens)
    D, H, Hkv = cfg["hidden_size"], cfg["num_attention_heads"], cfg["num_key_value_heads"]
    d, eps = D // H, cfg["rms_norm_eps"]
    window = cfg.get("sliding_window") if cfg["model_type"] == "mistral" else None
    freqs = torch.arange(T, dtype=torch.float32)[:, None] * inverse_frequencies(cfg, d)[None, :]  # float32, as HF
    emb = torch.cat((freqs, freqs), dim=-1)
    cos, sin = emb.cos().to(torch.float64), emb.sin().to(torch.float64)
    allowed = torch.tril(torch.ones(T, T, dtype=torch.bool))
    if window:
        allowed &= torch.arange(T)[None, :] > torch.arange(T)[:, None] - window

    def lin(x, name):
        y = x @ w[name + ".weight"].T
        return y + w[name + ".bias"] if name + ".bias" in w else y

    trace = {}
    x = w["model.embed_tokens.weight"][torch.tensor(tokens)]
    trace["embed"] = x
    trace["input"] = x
    for i in range(cfg["num_hidden_layers"]):
        p, m = f"layer.{i}.", f"model.layers.{i}."
        h = rms_norm(x, w[m + "input_layernorm.weight"], eps)
        trace[p + "ln_1"] = h
        q, k, v = lin(h, m + "self_attn.q_proj"), lin(h, m + "self_attn.k_proj"), lin(h, m + "self_attn.v_proj")
        trace[p + "attn.qkv"] = torch.cat((q, k, v), dim=1)
        q = q.reshape(T, H, d).transpose(0, 1)
        k = k.reshape(T, Hkv, d).transpose(0, 1)
        v = v.reshape(T, Hkv, d).transpose(0, 1)
        k = k.repeat_interleave(H // Hkv, dim=0)  # repeat_kv: head h reads K/V head h // (H / Hkv)
        v = v.repeat_interleave(H // Hkv, dim=0)
        trace[p + "attn.q"], trace[p + "attn.k"], trace[p + "attn.v"] = q, k, v
        q = q * cos + rotate_half(q) * sin
        k = k * cos + rotate_half(k) * sin
        trace[p + "attn.q_rot"], trace[p + "attn.k_rot"] = q, k
        scores = q @ k.transpose(1, 2) / math.sqrt(d)
        trace[p + "attn.scores"] = scores
        masked = scores.masked_fill(~allowed, float("-inf"))
        trace[p + "attn.masked"] = masked
        probs = torch.softmax(masked, dim=-1)
        trace[p + "attn.probs"] = probs
        context = probs @ v
        trace[p + "attn.context"] = context
        merged = context.transpose(0, 1).reshape(T, H * d)
        trace[p + "attn.merged"] = merged
        out = lin(merged, m + "self_attn.o_proj")
        trace[p + "attn.out"] = out
        mid = x + out
        trace[p + "mid"] = mid
        h2 = rms_norm(mid, w[m + "post_attention_layernorm.weight"], eps)
        trace[p + "ln_2"] = h2
        gate, up = lin(h2, m + "mlp.gate_proj"), lin(h2, m + "mlp.up_proj")
        trace[p + "mlp.gate"], trace[p + "mlp.up"] = gate, up
        act = torch.nn.functional.silu(gate) * up
        trace[p + "mlp.act"] = act
        down = lin(act, m + "mlp.down_proj")
        trace[p + "mlp.down"] = down
        x = mid + down
        trace[p + "out"] = x
    trace["ln_f"] = rms_norm(x, w["model.norm.weight"], eps)
    head = w["model.embed_tokens.weight"] if cfg["tie_word_embeddings"] else w["lm_head.weight"]
    trace["logits"] = trace["ln_f"] @ head.T
    trace["next_probs"] = torch.softmax(trace["logits"], dim=-1)
    return trace


# ---------------------------------------------------------------------------------------------- models

def make(name, spec):
    cfg = spec["config"]
    directory, ref = os.path.join(DATA, name), os.path.join(DATA, name + "_ref")
    fresh_dir(directory)
    fresh_dir(ref)
    weights = random_weights(cfg, spec["seed"])
    write_text(os.path.join(directory, "config.json"), json.dumps(cfg, indent=2) + "\n")
    write_checkpoint(directory, weights, spec["dtype"], spec["shards"])
    stored = {n: stored_bytes(t, spec["dtype"])[1] for n, t in weights.items()}
    save_trace(ref, forward(stored, cfg, TOKENS))
    write_text(os.path.join(ref, "tokens.json"), json.dumps(TOKENS) + "\n")


def main():
    torch.set_grad_enabled(False)
    for name, spec in MODELS.items():
        make(name, spec)
    print(f"wrote {len(written)} files under {DATA}")


if __name__ == "__main__":
    main()
