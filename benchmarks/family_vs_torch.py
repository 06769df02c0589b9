#!/usr/bin/python3
"""Issue 31's benchmark: a Llama-family checkpoint in BF16, opened by this program and run by PyTorch eager.

    /usr/bin/python3 benchmarks/family_vs_torch.py --shape qwen2.5-0.5b [--binary build/src/transformer-atlas]
    /usr/bin/python3 benchmarks/family_vs_torch.py --shape smollm2-135m

Writes a random checkpoint of the real model's shape (normal weights, std 0.02, rounded to BF16; Qwen2.5-0.5B's in
two shards with model.safetensors.index.json) to a scratch folder, then reports, on the same weights and threads:
  - this program: the time from starting `render` on the directory to a written attention view (process start,
    reading and converting the checkpoint, the forward pass on 16 tokens, drawing), and its peak memory;
  - this program's untraced forward (`bench --no-trace`) and PyTorch's eager forward in float32 (the Llama forward of
    tests/tools/make_family_reference.py, batched as Hugging Face runs it), at 128 and 512 tokens: medians.
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
}


def random_weights(cfg, gen):
    D, F_, V = cfg["hidden_size"], cfg["intermediate_size"], cfg["vocab_size"]
    H, Hkv = cfg["num_attention_heads"], cfg["num_key_value_heads"]
    d = D // H
    qwen2 = cfg["model_type"] == "qwen2"

    def n(*shape):
        return (torch.randn(*shape, generator=gen) * 0.02).to(torch.bfloat16)

    w = {"model.embed_tokens.weight": n(V, D), "model.norm.weight": torch.ones(D, dtype=torch.bfloat16)}
    for i in range(cfg["num_hidden_layers"]):
        p = f"model.layers.{i}."
        w[p + "input_layernorm.weight"] = torch.ones(D, dtype=torch.bfloat16)
        w[p + "post_attention_layernorm.weight"] = torch.ones(D, dtype=torch.bfloat16)
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
    config["architectures"] = ["Qwen2ForCausalLM" if cfg["model_type"] == "qwen2" else "LlamaForCausalLM"]
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
    """The Llama-family forward in float32, batch 1, as Hugging Face's eager attention computes it."""
    D, H, Hkv = cfg["hidden_size"], cfg["num_attention_heads"], cfg["num_key_value_heads"]
    d, T, eps = D // H, ids.shape[0], cfg["rms_norm_eps"]
    inv_freq = 1.0 / (cfg["rope_theta"] ** (torch.arange(0, d, 2, dtype=torch.int64).float() / d))
    freqs = torch.arange(T, dtype=torch.float32)[:, None] * inv_freq[None, :]
    emb = torch.cat((freqs, freqs), dim=-1)
    cos, sin = emb.cos(), emb.sin()
    mask = torch.full((T, T), float("-inf")).triu(1)

    def rms(x, weight):
        return weight * (x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps))

    def rot(x):
        return torch.cat((-x[..., d // 2:], x[..., :d // 2]), dim=-1)

    def lin(x, name):
        return F.linear(x, w[name + ".weight"], w.get(name + ".bias"))

    x = w["model.embed_tokens.weight"][ids]
    for i in range(cfg["num_hidden_layers"]):
        p = f"model.layers.{i}."
        h = rms(x, w[p + "input_layernorm.weight"])
        q = lin(h, p + "self_attn.q_proj").view(T, H, d).transpose(0, 1)
        k = lin(h, p + "self_attn.k_proj").view(T, Hkv, d).transpose(0, 1)
        v = lin(h, p + "self_attn.v_proj").view(T, Hkv, d).transpose(0, 1)
        q, k = q * cos + rot(q) * sin, k * cos + rot(k) * sin
        k, v = k.repeat_interleave(H // Hkv, dim=0), v.repeat_interleave(H // Hkv, dim=0)
        a = torch.softmax(q @ k.transpose(1, 2) / math.sqrt(d) + mask, dim=-1)
        x = x + lin((a @ v).transpose(0, 1).reshape(T, D), p + "self_attn.o_proj")
        h = rms(x, w[p + "post_attention_layernorm.weight"])
        x = x + lin(F.silu(lin(h, p + "mlp.gate_proj")) * lin(h, p + "mlp.up_proj"), p + "mlp.down_proj")
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
