#!/usr/bin/python3
"""A random checkpoint of gpt-oss-20b's shape, as OpenAI released it: config.json with quantization_config mxfp4, the
experts as MXFP4 blocks and scales (U8), everything else BF16. About 13 GB, written a tensor at a time.

    /usr/bin/python3 benchmarks/gpt_oss_20b_shape.py DIR
    /usr/bin/time -v build/src/transformer-atlas bench --model DIR --length 128 --repeat 3 --no-trace

The weights are random (normal, std 0.02; norms 1, biases and sinks 0; each MXFP4 code random under a scale of 2^-8,
so that the experts' values are of the same size): the model says nothing, but it is read, held and run as the
released one is. What it measures: whether the 20B model opens on a machine (its memory, its experts kept in their
blocks) and how long the forward takes. Needs Debian's python3-numpy only.
"""
import json
import os
import struct
import sys

import numpy as np

# openai/gpt-oss-20b's config.json (transformers 4.55)
CONFIG = {
    "architectures": ["GptOssForCausalLM"], "attention_bias": True, "attention_dropout": 0.0, "eos_token_id": 200002,
    "experts_per_token": 4, "head_dim": 64, "hidden_act": "silu", "hidden_size": 2880, "initial_context_length": 4096,
    "initializer_range": 0.02, "intermediate_size": 2880,
    "layer_types": ["sliding_attention", "full_attention"] * 12, "max_position_embeddings": 131072,
    "model_type": "gpt_oss", "num_attention_heads": 64, "num_experts_per_tok": 4, "num_hidden_layers": 24,
    "num_key_value_heads": 8, "num_local_experts": 32, "output_router_logits": False, "pad_token_id": 199999,
    "quantization_config": {"modules_to_not_convert": ["model.layers.*.self_attn", "model.layers.*.mlp.router",
                                                       "model.embed_tokens", "lm_head"], "quant_method": "mxfp4"},
    "rms_norm_eps": 1e-05,
    "rope_scaling": {"beta_fast": 32.0, "beta_slow": 1.0, "factor": 32.0, "original_max_position_embeddings": 4096,
                     "rope_type": "yarn", "truncate": False},
    "rope_theta": 150000, "router_aux_loss_coef": 0.9, "sliding_window": 128, "swiglu_limit": 7.0,
    "tie_word_embeddings": False, "torch_dtype": "bfloat16", "use_cache": True, "vocab_size": 201088,
}


def tensors(c):
    """(name, dtype, shape, kind) in the checkpoint, kind saying how to fill it."""
    D, F, E, V = c["hidden_size"], c["intermediate_size"], c["num_local_experts"], c["vocab_size"]
    H, Hkv, d = c["num_attention_heads"], c["num_key_value_heads"], c["head_dim"]
    out = [("model.embed_tokens.weight", "BF16", [V, D], "normal"), ("model.norm.weight", "BF16", [D], "one"),
           ("lm_head.weight", "BF16", [V, D], "normal")]
    for i in range(c["num_hidden_layers"]):
        p = f"model.layers.{i}."
        out += [(p + "input_layernorm.weight", "BF16", [D], "one"),
                (p + "post_attention_layernorm.weight", "BF16", [D], "one"),
                (p + "self_attn.sinks", "BF16", [H], "zero")]
        for name, rows, cols in (("q", H * d, D), ("k", Hkv * d, D), ("v", Hkv * d, D), ("o", D, H * d)):
            out += [(p + f"self_attn.{name}_proj.weight", "BF16", [rows, cols], "normal"),
                    (p + f"self_attn.{name}_proj.bias", "BF16", [rows], "zero")]
        out += [(p + "mlp.router.weight", "BF16", [E, D], "normal"), (p + "mlp.router.bias", "BF16", [E], "zero")]
        for name, rows, cols in (("gate_up_proj", 2 * F, D), ("down_proj", D, F)):
            out += [(p + f"mlp.experts.{name}_blocks", "U8", [E, rows, cols // 32, 16], "codes"),
                    (p + f"mlp.experts.{name}_scales", "U8", [E, rows, cols // 32], "scale"),
                    (p + f"mlp.experts.{name}_bias", "BF16", [E, rows], "zero")]
    return out


def fill(kind, dtype, shape, rng):
    n = int(np.prod(shape))
    if dtype == "U8":
        if kind == "scale":
            return np.full(n, 127 - 8, np.uint8).tobytes()
        return rng.integers(0, 256, n, dtype=np.uint8).tobytes()
    if kind == "normal":
        values = rng.standard_normal(n, dtype=np.float32) * np.float32(0.02)
    else:
        values = np.full(n, 1.0 if kind == "one" else 0.0, np.float32)
    return (values.view(np.uint32) >> 16).astype(np.uint16).tobytes()  # BF16 by truncation


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    directory = sys.argv[1]
    os.makedirs(directory, exist_ok=True)
    entries = tensors(CONFIG)
    header, offset = {"__metadata__": {"format": "pt"}}, 0
    for name, dtype, shape, _ in sorted(entries):
        size = int(np.prod(shape)) * (2 if dtype == "BF16" else 1)
        header[name] = {"dtype": dtype, "shape": shape, "data_offsets": [offset, offset + size]}
        offset += size
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * ((8 - len(text) % 8) % 8)
    rng = np.random.default_rng(20)
    with open(os.path.join(directory, "model.safetensors"), "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text)
        for name, dtype, shape, kind in sorted(entries):
            f.write(fill(kind, dtype, shape, rng))
    with open(os.path.join(directory, "config.json"), "w") as f:
        json.dump(CONFIG, f, indent=2)
    print(f"{directory}: {len(entries)} tensors, {offset / 1e9:.2f} GB of data")


if __name__ == "__main__":
    main()
