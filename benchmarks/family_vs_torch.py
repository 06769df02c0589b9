#!/usr/bin/python3
"""Issue 31's benchmark: a Llama-family checkpoint in BF16, opened by this program and run by PyTorch eager.

    /usr/bin/python3 benchmarks/family_vs_torch.py --shape qwen2.5-0.5b [--binary build/src/transformer-atlas]
    /usr/bin/python3 benchmarks/family_vs_torch.py --shape smollm2-135m
    /usr/bin/python3 benchmarks/family_vs_torch.py --shape qwen3-0.6b
    /usr/bin/python3 benchmarks/family_vs_torch.py --shape gemma-3-1b

Writes a random checkpoint of the real model's shape (normal weights, std 0.02, rounded to BF16; Qwen2.5-0.5B's in
two shards with model.safetensors.index.json) to a scratch folder, then reports, on the same weights and threads:
  - this program: the time from starting `render` on the directory to a written attention view (process start,
    reading and converting the checkpoint, the forward pass on 16 tokens, drawing), and its peak memory;
  - this program's untraced forward (`bench --no-trace`) and PyTorch's eager forward in float32 (the forwards of
    modeling_llama / qwen2 / qwen3 / gemma3 written with torch operations, as Hugging Face's eager attention runs
    them), at 128 and 512 tokens: medians.
Run it on a quiet machine.
"""
import argparse
import json
import math
import os
import resource
import statistics
import struct
import subprocess
import sys
import tempfile
import time

import torch
import torch.nn.functional as F

SHAPES = {
    # Qwen/Qwen2.5-0.5B's config.json
    "qwen2.5-0.5b": dict(model_type="qwen2", hidden_size=896, intermediate_size=4864, num_hidden_layers=24,
                         num_attention_heads=14, num_key_value_heads=2, vocab_size=151936,
                         max_position_embeddings=32768, rms_norm_eps=1e-6, rope_theta=1000000.0,
                         tie_word_embeddings=True, hidden_act="silu", shards=2),
    # HuggingFaceTB/SmolLM2-135M's config.json
    "smollm2-135m": dict(model_type="llama", hidden_size=576, intermediate_size=1536, num_hidden_layers=30,
                         num_attention_heads=9, num_key_value_heads=3, vocab_size=49152,
                         max_position_embeddings=8192, rms_norm_eps=1e-5, rope_theta=100000.0,
                         tie_word_embeddings=True, hidden_act="silu", shards=1),
    # Qwen/Qwen3-0.6B's config.json: QK-norm, heads of 128 in a model 1024 wide
    "qwen3-0.6b": dict(model_type="qwen3", hidden_size=1024, intermediate_size=3072, num_hidden_layers=28,
                       num_attention_heads=16, num_key_value_heads=8, head_dim=128, vocab_size=151936,
                       max_position_embeddings=40960, rms_norm_eps=1e-6, rope_theta=1000000.0,
                       tie_word_embeddings=True, hidden_act="silu", attention_bias=False, shards=1),
    # google/gemma-3-1b-it's config.json: sandwich (1 + w) norms, QK-norm, five local layers (window 512, base 1e4)
    # to one global (base 1e6), GeGLU, one K/V head of 256
    "gemma-3-1b": dict(model_type="gemma3_text", hidden_size=1152, intermediate_size=6912, num_hidden_layers=26,
                       num_attention_heads=4, num_key_value_heads=1, head_dim=256, vocab_size=262144,
                       max_position_embeddings=32768, rms_norm_eps=1e-6, rope_theta=1000000.0,
                       rope_local_base_freq=10000.0, sliding_window=512, sliding_window_pattern=6,
                       query_pre_attn_scalar=256, hidden_activation="gelu_pytorch_tanh", rope_scaling=None,
                       attn_logit_softcapping=None, final_logit_softcapping=None, tie_word_embeddings=True,
                       shards=1),
}
ARCHITECTURES = {"qwen2": "Qwen2ForCausalLM", "llama": "LlamaForCausalLM", "qwen3": "Qwen3ForCausalLM",
                 "gemma3_text": "Gemma3ForCausalLM"}


def random_weights(cfg, gen):
    D, F_, V = cfg["hidden_size"], cfg["intermediate_size"], cfg["vocab_size"]
    H, Hkv = cfg["num_attention_heads"], cfg["num_key_value_heads"]
    d = cfg.get("head_dim") or D // H
    qwen2, gemma = cfg["model_type"] == "qwen2", cfg["model_type"] == "gemma3_text"

    def n(*shape):
        return (torch.randn(*shape, generator=gen) * 0.02).to(torch.bfloat16)

    def norm(width):  # Gemma's RMSNorm scales by 1 + w: its neutral weight is 0
        return (torch.zeros if gemma else torch.ones)(width, dtype=torch.bfloat16)

    w = {"model.embed_tokens.weight": n(V, D), "model.norm.weight": norm(D)}
    for i in range(cfg["num_hidden_layers"]):
        p = f"model.layers.{i}."
        w[p + "input_layernorm.weight"] = norm(D)
        w[p + "post_attention_layernorm.weight"] = norm(D)
        if gemma:
            w[p + "pre_feedforward_layernorm.weight"] = norm(D)
            w[p + "post_feedforward_layernorm.weight"] = norm(D)
        if cfg["model_type"] in ("qwen3", "gemma3_text"):
            w[p + "self_attn.q_norm.weight"] = norm(d)
            w[p + "self_attn.k_norm.weight"] = norm(d)
        for name, out, inp in (("q", H * d, D), ("k", Hkv * d, D), ("v", Hkv * d, D), ("o", D, H * d)):
            w[p + f"self_attn.{name}_proj.weight"] = n(out, inp)
            if qwen2 and name != "o":
                w[p + f"self_attn.{name}_proj.bias"] = n(out)
        w[p + "mlp.gate_proj.weight"] = n(F_, D)
        w[p + "mlp.up_proj.weight"] = n(F_, D)
        w[p + "mlp.down_proj.weight"] = n(D, F_)
    return w


def write_safetensors(path, tensors):
    header, offset = {"__metadata__": {"format": "pt"}}, 0
    for name in sorted(tensors):
        size = tensors[name].numel() * 2
        header[name] = {"dtype": "BF16", "shape": list(tensors[name].shape), "data_offsets": [offset, offset + size]}
        offset += size
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * ((8 - len(text) % 8) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text)
        for name in sorted(tensors):
            f.write(tensors[name].contiguous().view(torch.int16).numpy().tobytes())
    return offset


def write_checkpoint(directory, cfg, w):
    config = {k: v for k, v in cfg.items() if k != "shards"}
    config["architectures"] = [ARCHITECTURES[cfg["model_type"]]]
    config["torch_dtype"] = "bfloat16"
    with open(os.path.join(directory, "config.json"), "w") as f:
        json.dump(config, f, indent=2)
    names = sorted(w)
    shards = cfg["shards"]
    if shards == 1:
        write_safetensors(os.path.join(directory, "model.safetensors"), w)
        return
    per, weight_map, total = math.ceil(len(names) / shards), {}, 0
    for s in range(shards):
        file = f"model-{s + 1:05d}-of-{shards:05d}.safetensors"
        part = {n: w[n] for n in names[s * per:(s + 1) * per]}
        total += write_safetensors(os.path.join(directory, file), part)
        weight_map.update({n: file for n in part})
    with open(os.path.join(directory, "model.safetensors.index.json"), "w") as f:
        json.dump({"metadata": {"total_size": total}, "weight_map": weight_map}, f, indent=2)


def torch_forward(w, cfg, ids):
    """The Llama-family forward in float32, batch 1, as Hugging Face's eager attention computes it: Qwen3's QK-norm,
    and Gemma 3's (1 + w) sandwich norms, scaled embedding, local and global layers and GeGLU, where the shape has
    them."""
    D, H, Hkv = cfg["hidden_size"], cfg["num_attention_heads"], cfg["num_key_value_heads"]
    d, T, eps = cfg.get("head_dim") or D // H, ids.shape[0], cfg["rms_norm_eps"]
    gemma, qk_norm = cfg["model_type"] == "gemma3_text", cfg["model_type"] in ("qwen3", "gemma3_text")

    def rotation(base):
        inv_freq = 1.0 / (base ** (torch.arange(0, d, 2, dtype=torch.int64).float() / d))
        freqs = torch.arange(T, dtype=torch.float32)[:, None] * inv_freq[None, :]
        emb = torch.cat((freqs, freqs), dim=-1)
        return emb.cos(), emb.sin()

    turns = {False: rotation(cfg["rope_theta"])}
    causal = torch.full((T, T), float("-inf")).triu(1)
    masks = {False: causal}
    if gemma:  # Gemma3TextConfig: every sliding_window_pattern-th layer global, the others local
        turns[True] = rotation(cfg["rope_local_base_freq"])
        far = torch.arange(T)[None, :] <= torch.arange(T)[:, None] - cfg["sliding_window"]
        masks[True] = causal.masked_fill(far, float("-inf"))
    scale = 1 / math.sqrt(cfg.get("query_pre_attn_scalar") or d)

    def rms(x, weight):
        return (1 + weight if gemma else weight) * (x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps))

    def rot(x):
        return torch.cat((-x[..., d // 2:], x[..., :d // 2]), dim=-1)

    def lin(x, name):
        return F.linear(x, w[name + ".weight"], w.get(name + ".bias"))

    x = w["model.embed_tokens.weight"][ids]
    if gemma:
        x = x * math.sqrt(D)
    act = (lambda g: F.gelu(g, approximate="tanh")) if gemma else F.silu
    for i in range(cfg["num_hidden_layers"]):
        p = f"model.layers.{i}."
        local = gemma and (i + 1) % cfg["sliding_window_pattern"] != 0
        cos, sin = turns[local]
        h = rms(x, w[p + "input_layernorm.weight"])
        q = lin(h, p + "self_attn.q_proj").view(T, H, d).transpose(0, 1)
        k = lin(h, p + "self_attn.k_proj").view(T, Hkv, d).transpose(0, 1)
        v = lin(h, p + "self_attn.v_proj").view(T, Hkv, d).transpose(0, 1)
        if qk_norm:
            q, k = rms(q, w[p + "self_attn.q_norm.weight"]), rms(k, w[p + "self_attn.k_norm.weight"])
        q, k = q * cos + rot(q) * sin, k * cos + rot(k) * sin
        k, v = k.repeat_interleave(H // Hkv, dim=0), v.repeat_interleave(H // Hkv, dim=0)
        a = torch.softmax(q @ k.transpose(1, 2) * scale + masks[local], dim=-1)
        o = lin((a @ v).transpose(0, 1).reshape(T, H * d), p + "self_attn.o_proj")
        if gemma:
            x = x + rms(o, w[p + "post_attention_layernorm.weight"])
            h = rms(x, w[p + "pre_feedforward_layernorm.weight"])
        else:
            x = x + o
            h = rms(x, w[p + "post_attention_layernorm.weight"])
        m = lin(act(lin(h, p + "mlp.gate_proj")) * lin(h, p + "mlp.up_proj"), p + "mlp.down_proj")
        x = x + (rms(m, w[p + "post_feedforward_layernorm.weight"]) if gemma else m)
    x = rms(x, w["model.norm.weight"])
    return torch.softmax(x @ w["model.embed_tokens.weight"].t(), dim=-1)


def run(cmd):
    t0 = time.perf_counter()
    out = subprocess.run(cmd, check=True, capture_output=True, text=True, env=dict(os.environ))
    return time.perf_counter() - t0, out.stdout


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--shape", choices=sorted(SHAPES), required=True)
    ap.add_argument("--binary", default=os.path.join(os.path.dirname(__file__), "..", "build", "src",
                                                       "transformer-atlas"))
    ap.add_argument("--lengths", default="128,512")
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--threads", type=int, default=2)
    args = ap.parse_args()
    cfg = SHAPES[args.shape]
    torch.set_num_threads(args.threads)
    gen = torch.Generator().manual_seed(1)
    w = random_weights(cfg, gen)
    params = sum(t.numel() for t in w.values())
    with tempfile.TemporaryDirectory() as tmp:
        model = os.path.join(tmp, args.shape)
        os.makedirs(model)
        write_checkpoint(model, cfg, w)
        print(f"{args.shape}: {params / 1e6:.1f} M parameters, BF16, {cfg['shards']} file(s); torch {torch.__version__},"
              f" {args.threads} threads")
        spec = os.path.join(tmp, "spec.json")
        with open(spec, "w") as f:
            json.dump({"model": model, "view": "attention", "tokens": list(range(100, 116)), "layer": 0}, f)
        opens = []
        for _ in range(3):
            seconds, _ = run([args.binary, "render", "--spec", spec, "--out", os.path.join(tmp, "view.png")])
            opens.append(seconds)
        peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
        print(f"open the directory to a drawn attention view (render, 16 tokens): median {statistics.median(opens):.2f} s"
              f" (min {min(opens):.2f}); peak memory {peak:.0f} MiB")
        lengths = [int(n) for n in args.lengths.split(",")]
        for T in lengths:
            _, out = run([args.binary, "bench", "--model", model, "--length", str(T), "--repeat", str(args.repeat),
                          "--no-trace"])
            print(f"T={T} this program: " + out.strip().splitlines()[1])
        wf = {k: t.to(torch.float32) for k, t in w.items()}
        del w
        with torch.inference_mode():
            for T in lengths:
                ids = torch.randint(0, cfg["vocab_size"], (T,), generator=gen)
                torch_forward(wf, cfg, ids)  # warm-up
                times = []
                for _ in range(args.repeat):
                    t0 = time.perf_counter()
                    torch_forward(wf, cfg, ids)
                    times.append((time.perf_counter() - t0) * 1000)
                print(f"T={T} torch eager float32: median {statistics.median(times):.2f} ms (min {min(times):.2f},"
                      f" max {max(times):.2f})")
        print(f"torch process peak memory {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MiB")


if __name__ == "__main__":
    sys.exit(main())
