#!/usr/bin/env python3
"""Writes tests/data/gguf/models/: the tiny test checkpoints of tests/data as GGUF files, converted as llama.cpp's
convert_hf_to_gguf.py converts them, with llama.cpp's own name table (gguf-py's TensorNameMap):

  - the keys its TextModel.set_gguf_parameters writes ({arch}.block_count, context_length, embedding_length,
    feed_forward_length, attention.head_count, head_count_kv, key_length, value_length, layer_norm_rms_epsilon,
    rope.freq_base, rope.dimension_count, rope.scaling.*, expert_count, expert_used_count, …);
  - Gemma2Model's and Gemma3Model's norm weights stored as 1 + w, and their keys (soft-caps, sliding window,
    rope.freq_base_swa);
  - GPT2Model's transposed Conv1D weights, and GPTNeoXModel's query_key_value regrouped from [q k v] per head to
    [all q; all k; all v];
  - LlamaModel's permutation of q_proj and k_proj (its rows reordered for RoPE on adjacent pairs), its experts stacked
    into one [E, …] tensor per matrix, and Llama 3's rope scaling as the rope_freqs tensor;
  - Phi3MiniModel's keys (rope.dimension_count of the partial rotary, rope.scaling.original_context_length, the
    sliding window) and LongRoPE's factors as the tensors rope_factors_long and rope_factors_short, with
    rope.scaling.attn_factor;
  - a 'gpt2' tokenizer of single characters and two merges, one token per row of the embedding (llama.cpp needs a
    vocabulary to load).

  - GptOssModel's gpt-oss (gpt_oss_mxfp4_tiny): its MXFP4 experts repacked into ggml's blocks (the scale byte, then
    16 bytes holding elements j and j + 16) and split into ffn_gate_exps and ffn_up_exps (gate_up_proj's even and
    odd rows), the sinks as attn_sinks.weight, YaRN's keys; written as NAME-mxfp4.gguf, and as NAME-f32.gguf with the
    experts decoded to F32 (llama.cpp multiplies MXFP4 with 8-bit activations; the F32 file isolates that).

Each other model is written twice: NAME-f32.gguf, and NAME-q8_0.gguf with every matrix whose rows are whole blocks in Q8_0
(gguf-py's quantizer), as llama-quantize leaves norms and vectors in F32.

Needs gguf-py (MIT) from llama.cpp's source, as make_gguf_fixtures.py says, and Debian's python3-numpy:
  /usr/bin/python3 tests/tools/make_gguf_models.py llama.cpp [CHECKPOINT...]
then tests/tools/gguf_reference.mjs for llama.cpp's next-token probabilities on them.
"""
import json
import math
import os
import struct
import sys

import numpy as np

sys.path.insert(0, os.path.join(sys.argv[1], "gguf-py"))
import gguf  # noqa: E402
from gguf import quants  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
DATA = os.path.join(HERE, "..", "data")
OUT = os.path.join(DATA, "gguf", "models")

# checkpoint directory -> llama.cpp architecture. qwen3_tiny is converted without its attention biases (BIASES_DROPPED):
# llama.cpp's qwen3 loads none (Qwen3's own checkpoints have none), so its files are another model than the checkpoint,
# compared with llama.cpp's logits alone.
MODELS = {
    "llama_tiny": gguf.MODEL_ARCH.LLAMA,
    "llama_hd_tiny": gguf.MODEL_ARCH.LLAMA,
    "mistral_tiny": gguf.MODEL_ARCH.LLAMA,
    "mixtral_tiny": gguf.MODEL_ARCH.LLAMA,
    "qwen2_tiny": gguf.MODEL_ARCH.QWEN2,
    "qwen3_moe_tiny": gguf.MODEL_ARCH.QWEN3MOE,
    "olmo2_tiny": gguf.MODEL_ARCH.OLMO2,
    "smollm3_tiny": gguf.MODEL_ARCH.SMOLLM3,
    "gemma2_tiny": gguf.MODEL_ARCH.GEMMA2,
    "gemma3_tiny": gguf.MODEL_ARCH.GEMMA3,
    "gpt2_tiny": gguf.MODEL_ARCH.GPT2,
    "neox_tiny": gguf.MODEL_ARCH.GPTNEOX,
    "phi3_tiny": gguf.MODEL_ARCH.PHI3,
    "phi3_long_tiny": gguf.MODEL_ARCH.PHI3,
    "qwen3_tiny": gguf.MODEL_ARCH.QWEN3,
}
BIASES_DROPPED = {"qwen3_tiny"}
# T5 checkpoints, as llama.cpp's t5 (convert_t5): t5_tiny is v1.0 (ReLU, a tied head, relative_attention_max_distance
# 12, which llama.cpp's 128 replaces), t5v11_tiny v1.1 (gated GELU, an untied head, the distance 128). llama.cpp v0.5.0
# fails to load a t5 file with more decoder layers than encoder layers (a vector's range check in its loader):
# t5_tiny's third decoder layer is dropped, so its files are another model than the checkpoint, compared with
# llama.cpp's logits alone.
T5_MODELS = ["t5_tiny", "t5v11_tiny"]


def read_safetensors(directory):
    files = [f for f in sorted(os.listdir(directory)) if f.endswith(".safetensors")]
    out = {}
    kinds = {"F32": np.float32, "F16": np.float16}
    for name in files:
        with open(os.path.join(directory, name), "rb") as f:
            n = struct.unpack("<Q", f.read(8))[0]
            header = json.loads(f.read(n))
            data = f.read()
        for key, info in header.items():
            if key == "__metadata__":
                continue
            begin, end = info["data_offsets"]
            raw = data[begin:end]
            if info["dtype"] == "U8":  # gpt-oss's MXFP4 blocks and scales, kept as bytes
                out[key] = np.frombuffer(raw, np.uint8).reshape(info["shape"])
                continue
            if info["dtype"] == "BF16":
                values = (np.frombuffer(raw, np.uint16).astype(np.uint32) << 16).view(np.float32)
            else:
                values = np.frombuffer(raw, kinds[info["dtype"]]).astype(np.float32)
            out[key] = values.reshape(info["shape"])
    return out


def permute(w, n_head, n_head_kv):  # LlamaModel.permute
    if n_head_kv is not None and n_head != n_head_kv:
        n_head = n_head_kv
    return w.reshape(n_head, 2, w.shape[0] // n_head // 2, *w.shape[1:]).swapaxes(1, 2).reshape(w.shape)


def llama3_factors(c, dim):  # LlamaModel.generate_extra_tensors
    r = c["rope_scaling"]
    base = c.get("rope_theta", 10000.0)
    freqs = 1.0 / (base ** (np.arange(0, dim, 2, dtype=np.float32) / dim))
    factor, low, high = r.get("factor", 8.0), r.get("low_freq_factor", 1.0), r.get("high_freq_factor", 4.0)
    old = r.get("original_max_position_embeddings", 8192)
    out = []
    for freq in freqs:
        wavelen = 2 * math.pi / freq
        if wavelen < old / high:
            out.append(1)
        elif wavelen > old / low:
            out.append(factor)
        else:
            smooth = (old / wavelen - low) / (high - low)
            out.append(1 / ((1 - smooth) / factor + smooth))
    return np.array(out, dtype=np.float32)


def vocabulary(n):
    pool = [chr(c) for c in range(ord("a"), ord("z") + 1)] + [chr(c) for c in range(ord("A"), ord("Z") + 1)]
    pool += [str(d) for d in range(10)] + ["Ġ", ".", ",", "!", "?", "-", ":", ";"]
    assert n <= len(pool), n
    return pool[:n - 2] + ["ab", "cd"]  # llama.cpp needs merges: two


def add_tokenizer(w, vocab_size):
    """A 'gpt2' tokenizer of single characters and two merges, one token per row of the embedding."""
    tokens = vocabulary(vocab_size)
    w.add_tokenizer_model("gpt2")
    w.add_tokenizer_pre("default")
    w.add_token_list(tokens)
    w.add_token_types([gguf.TokenType.NORMAL] * len(tokens))
    w.add_token_merges(["a b", "c d"])
    w.add_add_bos_token(False)


def write_tensors(w, out, quantized):
    """Writes `out` (name -> values) and closes the file: with `quantized`, every matrix whose rows are whole Q8_0
    blocks in Q8_0 (gguf-py's quantizer), as llama-quantize does, which leaves norms, vectors and T5's relative biases
    (attn_rel_b) in F32."""
    for tensor_name in sorted(out):
        value = np.ascontiguousarray(out[tensor_name], dtype=np.float32)
        if quantized and value.ndim >= 2 and value.shape[-1] % 32 == 0 and "_rel_b" not in tensor_name:
            w.add_tensor(tensor_name, quants.quantize(value, gguf.GGMLQuantizationType.Q8_0),
                         raw_dtype=gguf.GGMLQuantizationType.Q8_0)
        else:
            w.add_tensor(tensor_name, value)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()


def convert(name, arch, quantized):
    directory = os.path.join(DATA, name)
    c = json.load(open(os.path.join(directory, "config.json")))
    weights = read_safetensors(directory)
    weights = {k[len("model."):] if k.startswith("model.") else k: v for k, v in weights.items()}
    if name in BIASES_DROPPED:
        weights = {k: v for k, v in weights.items() if not (".self_attn." in k and k.endswith("_proj.bias"))}
    if arch == gguf.MODEL_ARCH.GPT2:  # GPT2Config's names, as Llama's
        c = dict(c, num_hidden_layers=c["n_layer"], num_attention_heads=c["n_head"], hidden_size=c["n_embd"],
                 intermediate_size=4 * c["n_embd"], max_position_embeddings=c["n_ctx"])
    layers, heads = c["num_hidden_layers"], c["num_attention_heads"]
    kv_heads = c.get("num_key_value_heads", heads)
    head_dim = c.get("head_dim") or c["hidden_size"] // heads
    experts = c.get("num_local_experts") or c.get("num_experts") or 0

    path = os.path.join(OUT, "%s-%s.gguf" % (name, "q8_0" if quantized else "f32"))
    w = gguf.GGUFWriter(path, gguf.MODEL_ARCH_NAMES[arch])
    # llama.cpp gives Phi-3's special tokens (</s>, <unk>, <s>, <|endoftext|>) their attributes when general.name says
    # phi3, and fails on a vocabulary without them: these files' single characters have none.
    w.add_name(name.replace("phi3", "phi-three"))
    w.add_file_type(gguf.LlamaFileType.MOSTLY_Q8_0 if quantized else gguf.LlamaFileType.ALL_F32)
    w.add_block_count(layers)
    w.add_context_length(c["max_position_embeddings"])
    w.add_embedding_length(c["hidden_size"])
    w.add_feed_forward_length(c["intermediate_size"])
    w.add_head_count(heads)
    w.add_head_count_kv(kv_heads)
    if arch == gguf.MODEL_ARCH.GPT2:
        w.add_layer_norm_eps(c["layer_norm_epsilon"])
    elif arch == gguf.MODEL_ARCH.GPTNEOX:
        w.add_layer_norm_eps(c["layer_norm_eps"])
        w.add_rope_dimension_count(int(c["rotary_pct"] * head_dim))
        w.add_parallel_residual(c.get("use_parallel_residual", True))
        w.add_rope_freq_base(c.get("rotary_emb_base", 10000.0))
    else:
        w.add_layer_norm_rms_eps(c["rms_norm_eps"])
        w.add_rope_freq_base(c.get("rope_theta", 10000.0))
    if c.get("head_dim"):
        w.add_key_length(head_dim)
        w.add_value_length(head_dim)
    if arch == gguf.MODEL_ARCH.GEMMA2:  # Gemma2Model.set_gguf_parameters
        w.add_attn_logit_softcapping(c["attn_logit_softcapping"])
        w.add_final_logit_softcapping(c["final_logit_softcapping"])
        w.add_sliding_window(c["sliding_window"])
    if arch == gguf.MODEL_ARCH.GEMMA3:  # Gemma3Model.set_gguf_parameters, and TextModel's rope_local_base_freq
        if c.get("final_logit_softcapping"):
            w.add_final_logit_softcapping(c["final_logit_softcapping"])
        if c.get("sliding_window_pattern") != 1:
            w.add_sliding_window(c["sliding_window"])
        if c.get("rope_local_base_freq"):
            w.add_rope_freq_base_swa(c["rope_local_base_freq"])
    permuted = arch in (gguf.MODEL_ARCH.LLAMA, gguf.MODEL_ARCH.SMOLLM3)  # LlamaModel and its subclasses
    if permuted:
        w.add_vocab_size(c["vocab_size"])
        w.add_rope_dimension_count(head_dim)
    rope = c.get("rope_scaling") or {}
    kind = rope.get("rope_type", rope.get("type"))
    if kind == "linear":
        w.add_rope_scaling_type(gguf.RopeScalingType.LINEAR)
        w.add_rope_scaling_factor(rope["factor"])
    if arch == gguf.MODEL_ARCH.PHI3:  # Phi3MiniModel.set_gguf_parameters and generate_extra_tensors
        rope_dims = int(c.get("partial_rotary_factor", 1.0) * c["hidden_size"]) // heads
        orig = c["original_max_position_embeddings"]
        w.add_rope_dimension_count(rope_dims)
        w.add_rope_scaling_orig_ctx_len(orig)
        w.add_sliding_window(c.get("sliding_window") or 0)
        scale = c["max_position_embeddings"] / orig
        w.add_rope_scaling_attn_factors(math.sqrt(1 + math.log(scale) / math.log(orig)) if scale > 1.0 else 1.0)
    if experts:
        w.add_expert_count(experts)
        w.add_expert_used_count(c["num_experts_per_tok"])
    if arch == gguf.MODEL_ARCH.QWEN3MOE:
        w.add_expert_feed_forward_length(c["moe_intermediate_size"])

    add_tokenizer(w, c["vocab_size"])

    names = gguf.get_tensor_name_map(arch, layers)
    out = {}
    stacks = {}
    for key, value in weights.items():
        if arch in (gguf.MODEL_ARCH.GEMMA2, gguf.MODEL_ARCH.GEMMA3) and key.endswith("norm.weight"):
            value = value + np.float32(1)  # Gemma2Model.modify_tensors, Gemma3Model.norm_shift
        if key == "lm_head.weight" and arch in (gguf.MODEL_ARCH.GEMMA2, gguf.MODEL_ARCH.GEMMA3):
            continue
        if arch == gguf.MODEL_ARCH.GPT2 and key.endswith((".c_attn.weight", ".c_proj.weight", ".c_fc.weight")):
            value = value.T  # GPT2Model.modify_tensors
        if arch == gguf.MODEL_ARCH.GPTNEOX and ".attention.query_key_value." in key:  # GPTNeoXModel.modify_tensors
            d = c["hidden_size"]
            grouped = value.reshape((heads, 3, d // heads) + value.shape[1:])
            value = np.concatenate([grouped[:, i].reshape((d,) + value.shape[1:]) for i in range(3)], axis=0)
        if permuted and key.endswith(("q_proj.weight", "q_proj.bias")):
            value = permute(value, heads, heads)
        if permuted and key.endswith(("k_proj.weight", "k_proj.bias")):
            value = permute(value, heads, kv_heads)
        if ".experts." in key:  # block_sparse_moe.experts.E.w1 / mlp.experts.E.gate_proj -> one [E, …] stack
            prefix, rest = key.split(".experts.")
            expert, matrix = rest.split(".", 1)
            stacks.setdefault((prefix, matrix), {})[int(expert)] = value
            continue
        hf = key if key.startswith(("lm_head", "embed_out", "gpt_neox.")) else "model." + key
        if arch == gguf.MODEL_ARCH.GPT2:
            hf = "transformer." + key
        gguf_name = names.get_name(hf, try_suffixes=(".weight", ".bias"))
        assert gguf_name, key
        out[gguf_name] = value  # with its .weight or .bias
    for (prefix, matrix), by_expert in stacks.items():
        stacked = np.stack([by_expert[e] for e in range(experts)])
        hf = "model.%s.experts.%s" % (prefix, matrix)
        gguf_name = names.get_name(hf, try_suffixes=(".weight",))
        assert gguf_name, hf
        out[gguf_name] = stacked
    if kind == "llama3":
        out["rope_freqs.weight"] = llama3_factors(c, head_dim)
    if arch == gguf.MODEL_ARCH.PHI3:
        out["rope_factors_long.weight"] = np.array(rope["long_factor"], dtype=np.float32)
        out["rope_factors_short.weight"] = np.array(rope["short_factor"], dtype=np.float32)

    write_tensors(w, out, quantized)
    return path


def mxfp4_nibbles_for_ggml(blocks):  # GptOssModel.transform_nibble_layout
    """transformers' bytes hold elements 2j (low nibble) and 2j + 1 (high); ggml's MXFP4 holds j (low) and j + 16."""
    codes = np.empty(blocks.shape[:-1] + (32,), np.uint8)
    codes[..., 0::2], codes[..., 1::2] = blocks & 0x0F, blocks >> 4
    return (codes[..., :16] | (codes[..., 16:] << 4)).astype(np.uint8)


def mxfp4_tensor(blocks, scales):  # GptOssModel.repack_mxfp4: each 17-byte block its scale, then its 16 bytes
    joined = np.concatenate([scales[..., None], mxfp4_nibbles_for_ggml(blocks)], axis=-1)
    return np.ascontiguousarray(joined.reshape(joined.shape[0], joined.shape[1], -1))


def mxfp4_values(blocks, scales):  # transformers' decoding, each [R, C] row block kept in place (no transpose)
    levels = np.array([0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0, -0.0, -0.5, -1.0, -1.5, -2.0, -3.0, -4.0, -6.0],
                      np.float32)
    codes = np.empty(blocks.shape[:-1] + (32,), np.uint8)
    codes[..., 0::2], codes[..., 1::2] = blocks & 0x0F, blocks >> 4
    values = levels[codes] * np.ldexp(np.float32(1), scales.astype(np.int32) - 127)[..., None].astype(np.float32)
    return values.reshape(values.shape[0], values.shape[1], -1).astype(np.float32)


def convert_gpt_oss(name, decoded=False):
    """GptOssModel's conversion (llama.cpp's convert_hf_to_gguf.py): the experts kept in MXFP4 and split into
    ffn_gate_exps (the even rows of gate_up_proj) and ffn_up_exps (the odd), their biases likewise, the sinks as
    attn_sinks.weight, post_attention_layernorm as post_attention_norm, YaRN's keys; the rest in F32."""
    directory = os.path.join(DATA, name)
    c = json.load(open(os.path.join(directory, "config.json")))
    weights = read_safetensors(directory)
    arch, layers = gguf.MODEL_ARCH.GPT_OSS, c["num_hidden_layers"]
    path = os.path.join(OUT, name + ("-f32.gguf" if decoded else "-mxfp4.gguf"))
    w = gguf.GGUFWriter(path, gguf.MODEL_ARCH_NAMES[arch])
    w.add_name(name)
    w.add_file_type(gguf.LlamaFileType.ALL_F32 if decoded else gguf.LlamaFileType.MOSTLY_MXFP4_MOE)
    w.add_block_count(layers)
    w.add_context_length(c["max_position_embeddings"])
    w.add_embedding_length(c["hidden_size"])
    w.add_feed_forward_length(c["intermediate_size"])
    w.add_head_count(c["num_attention_heads"])
    w.add_head_count_kv(c["num_key_value_heads"])
    w.add_key_length(c["head_dim"])
    w.add_value_length(c["head_dim"])
    w.add_layer_norm_rms_eps(c["rms_norm_eps"])
    w.add_rope_freq_base(c["rope_theta"])
    w.add_expert_count(c["num_local_experts"])
    w.add_expert_used_count(c["num_experts_per_tok"])
    w.add_expert_feed_forward_length(c["intermediate_size"])
    w.add_sliding_window(c["sliding_window"])
    rope = c["rope_scaling"]
    w.add_rope_scaling_type(gguf.RopeScalingType.YARN)
    w.add_rope_scaling_factor(rope["factor"])
    w.add_rope_scaling_orig_ctx_len(rope["original_max_position_embeddings"])
    w.add_rope_scaling_yarn_beta_fast(rope["beta_fast"])
    w.add_rope_scaling_yarn_beta_slow(rope["beta_slow"])
    add_tokenizer(w, c["vocab_size"])

    names = gguf.get_tensor_name_map(arch, layers)
    out, raw = {}, {}
    for key, value in weights.items():
        if ".mlp.experts." in key:
            continue
        hf = key + ".weight" if key.endswith("sinks") else key
        gguf_name = names.get_name(hf, try_suffixes=(".weight", ".bias"))
        assert gguf_name, key
        out[gguf_name] = value
    for i in range(layers):
        p, blk = "model.layers.%d.mlp.experts." % i, "blk.%d." % i
        gate_up_blocks, gate_up_scales = weights[p + "gate_up_proj_blocks"], weights[p + "gate_up_proj_scales"]
        raw[blk + "ffn_gate_exps.weight"] = mxfp4_tensor(gate_up_blocks[:, 0::2], gate_up_scales[:, 0::2])
        raw[blk + "ffn_up_exps.weight"] = mxfp4_tensor(gate_up_blocks[:, 1::2], gate_up_scales[:, 1::2])
        raw[blk + "ffn_down_exps.weight"] = mxfp4_tensor(weights[p + "down_proj_blocks"], weights[p + "down_proj_scales"])
        out[blk + "ffn_gate_exps.bias"] = weights[p + "gate_up_proj_bias"][..., 0::2]
        out[blk + "ffn_up_exps.bias"] = weights[p + "gate_up_proj_bias"][..., 1::2]
        out[blk + "ffn_down_exps.bias"] = weights[p + "down_proj_bias"]
    if decoded:  # the experts' values in F32: llama.cpp multiplies them in float32, with no 8-bit activations
        for tensor_name, blocks in list(raw.items()):
            joined = blocks.reshape(blocks.shape[0], blocks.shape[1], -1, 17)
            scales, ggml_bytes = joined[..., 0], joined[..., 1:]
            codes = np.concatenate([ggml_bytes & 0x0F, ggml_bytes >> 4], axis=-1)  # ggml's order: j, then j + 16
            hf_bytes = (codes[..., 0::2] | (codes[..., 1::2] << 4)).astype(np.uint8)
            out[tensor_name] = mxfp4_values(hf_bytes, scales)
        raw = {}
    for tensor_name in sorted(set(out) | set(raw)):
        if tensor_name in raw:
            w.add_tensor(tensor_name, raw[tensor_name], raw_dtype=gguf.GGMLQuantizationType.MXFP4)
        else:
            w.add_tensor(tensor_name, np.ascontiguousarray(out[tensor_name], dtype=np.float32))
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    return path


def copy_t5_tokenizer(w, path):
    """The 't5' tokenizer (SentencePiece's Unigram with its normalisation map) of a vocab-only file, key for key."""
    r = gguf.GGUFReader(path)
    text = lambda key: bytes(r.fields[key].parts[-1]).decode("utf-8")  # noqa: E731
    value = lambda key: r.fields[key].parts[-1][0]  # noqa: E731
    field = r.fields["tokenizer.ggml.tokens"]
    w.add_tokenizer_model(text("tokenizer.ggml.model"))
    w.add_tokenizer_pre(text("tokenizer.ggml.pre"))
    w.add_token_list([bytes(field.parts[i]) for i in field.data])
    w.add_token_scores([float(r.fields["tokenizer.ggml.scores"].parts[i][0])
                        for i in r.fields["tokenizer.ggml.scores"].data])
    w.add_token_types([int(r.fields["tokenizer.ggml.token_type"].parts[i][0])
                       for i in r.fields["tokenizer.ggml.token_type"].data])
    w.add_add_space_prefix(bool(value("tokenizer.ggml.add_space_prefix")))
    w.add_remove_extra_whitespaces(bool(value("tokenizer.ggml.remove_extra_whitespaces")))
    charsmap = r.fields["tokenizer.ggml.precompiled_charsmap"]
    w.add_precompiled_charsmap(bytes(np.concatenate([charsmap.parts[i] for i in charsmap.data])))
    w.add_eos_token_id(int(value("tokenizer.ggml.eos_token_id")))
    w.add_unk_token_id(int(value("tokenizer.ggml.unknown_token_id")))
    w.add_pad_token_id(int(value("tokenizer.ggml.padding_token_id")))
    return len(field.data)


def convert_t5(name, quantized, unigram=False):
    """T5Model's conversion (llama.cpp's conversion/t5.py): T5Config's keys as t5.* (block_count the encoder's,
    decoder_block_count, key_length and value_length d_kv, relative_buckets_count, layer_norm_rms_epsilon,
    decoder_start_token_id), the tensors renamed by gguf-py's map (enc.blk.N.*, dec.blk.N.*, cross_attn_*), the shared
    embedding as token_embd and lm_head, when the checkpoint has one, as output; nothing else changed. llama.cpp's t5
    reads no relative_attention_max_distance (it computes with 128) and never scales a tied head by d_model^-1/2.
    unigram: written as NAME_unigram with the 't5' tokenizer of tests/data/gguf/vocab/t5-nfkc.gguf (SentencePiece's
    Unigram, NFKC's map, </s> added), the embedding and the head grown to its 604 tokens by rows drawn at the
    checkpoint's spread (numpy's RandomState(5))."""
    directory = os.path.join(DATA, name)
    c = json.load(open(os.path.join(directory, "config.json")))
    weights = read_safetensors(directory)
    if c.get("num_decoder_layers", c["num_layers"]) > c["num_layers"]:
        kept = ["decoder.block.%d." % i for i in range(c["num_layers"])]
        weights = {k: v for k, v in weights.items() if not k.startswith("decoder.block.") or k.startswith(tuple(kept))}
        c = dict(c, num_decoder_layers=c["num_layers"])
    arch = gguf.MODEL_ARCH.T5
    path = os.path.join(OUT, "%s-%s.gguf" % (name + ("_unigram" if unigram else ""), "q8_0" if quantized else "f32"))
    w = gguf.GGUFWriter(path, gguf.MODEL_ARCH_NAMES[arch])
    w.add_name(name)
    w.add_file_type(gguf.LlamaFileType.MOSTLY_Q8_0 if quantized else gguf.LlamaFileType.ALL_F32)
    w.add_context_length(c.get("n_positions", 512))
    w.add_embedding_length(c["d_model"])
    w.add_feed_forward_length(c["d_ff"])
    w.add_block_count(c["num_layers"])
    if c.get("num_decoder_layers") is not None:
        w.add_decoder_block_count(c["num_decoder_layers"])
    w.add_head_count(c["num_heads"])
    w.add_key_length(c["d_kv"])
    w.add_value_length(c["d_kv"])
    w.add_layer_norm_eps(c["layer_norm_epsilon"])
    w.add_relative_attn_buckets_count(c["relative_attention_num_buckets"])
    w.add_layer_norm_rms_eps(c["layer_norm_epsilon"])
    w.add_decoder_start_token_id(c["decoder_start_token_id"])
    if unigram:
        n = copy_t5_tokenizer(w, os.path.join(DATA, "gguf", "vocab", "t5-nfkc.gguf"))
        rng = np.random.RandomState(5)
        for key in ("shared.weight", "lm_head.weight"):
            rows = weights[key]
            extra = rng.normal(0, rows.std(), (n - rows.shape[0], rows.shape[1])).astype(np.float32)
            weights[key] = np.concatenate([rows, extra])
    else:
        add_tokenizer(w, c["vocab_size"])
    names = gguf.get_tensor_name_map(arch, max(c["num_layers"], c.get("num_decoder_layers") or 0))
    out = {}
    for key, value in weights.items():
        if key in ("encoder.embed_tokens.weight", "decoder.embed_tokens.weight"):
            key = "shared.weight"
        gguf_name = names.get_name(key, try_suffixes=(".weight", ".bias"))
        assert gguf_name, key
        out[gguf_name] = value
    write_tensors(w, out, quantized)
    return path


def main():
    os.makedirs(OUT, exist_ok=True)
    only = sys.argv[2:]  # checkpoint names, or every one
    for name, arch in MODELS.items():
        if only and name not in only:
            continue
        for quantized in (False, True):
            print(convert(name, arch, quantized))
    if not only or "gpt_oss_mxfp4_tiny" in only:
        print(convert_gpt_oss("gpt_oss_mxfp4_tiny"))
        print(convert_gpt_oss("gpt_oss_mxfp4_tiny", decoded=True))
    for name in T5_MODELS:
        if not only or name in only:
            for quantized in (False, True):
                print(convert_t5(name, quantized))
    if not only or "t5v11_tiny" in only:
        print(convert_t5("t5v11_tiny", True, unigram=True))


if __name__ == "__main__":
    main()
