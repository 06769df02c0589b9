#!/usr/bin/python3
"""Independent PyTorch references for checkpoints of other families than GPT-2 (tests/tst_engine_parity.cpp).

This script shares no code with the C++ engine. It writes the forward pass of Hugging Face's modeling_llama.py,
modeling_mistral.py, modeling_qwen2.py, modeling_qwen3.py, modeling_olmo2.py, modeling_smollm3.py and modeling_phi3.py
again with plain torch operations:
  - RMSNorm: w * x / sqrt(mean(x^2) + eps);
  - q_proj, k_proj, v_proj and o_proj as nn.Linear (y = x W^T + b), with the biases each family has;
  - rotary embeddings in the rotate-half convention. inv_freq = 1 / theta^(arange(0, d, 2) / d) is computed in
    float32, as LlamaRotaryEmbedding does, and rope_scaling follows _compute_linear_scaling_parameters,
    _compute_llama3_parameters and _compute_longrope_parameters (Phi-3: the short or long factors by the text's
    length, cos and sin times the attention factor; partial_rotary_factor turns the first dimensions only);
  - Qwen3's QK-norm: q_norm and k_norm, an RMSNorm over each head's d dimensions, on the K/V heads before repeat_kv
    and before RoPE;
  - OLMo 2's block: attention and MLP read the stream itself, and each output is normalised (post_attention_layernorm,
    post_feedforward_layernorm) before its residual add; its q_norm and k_norm normalise the whole q and k projections
    before they are split into heads;
  - Gemma 2's block (modeling_gemma2.py): the embedding times a float32 sqrt(hidden_size); RMSNorms that scale by
    (1 + w), one before and one after each sub-layer (input_layernorm, post_attention_layernorm,
    pre_feedforward_layernorm, post_feedforward_layernorm); scores times query_pre_attn_scalar^-0.5, soft-capped as
    c * tanh(s / c) before the mask; a sliding window on the even layers; GeGLU with the tanh GELU; the final logits
    soft-capped; the head tied;
  - Gemma 3's (modeling_gemma3.py) as Gemma 2's without the soft-caps, plus q_norm and k_norm (Gemma3RMSNorm, 1 + w,
    over each head's d, before RoPE), a window on every layer but each sliding_window_pattern-th (or as layer_types
    says), and RoPE with rope_local_base_freq on the windowed layers (no scaling) and rope_theta with rope_scaling on
    the others;
  - SmolLM3's NoPE layers (no_rope_layers 0, else every no_rope_layer_interval-th): q and k go to the scores
    unturned; with use_sliding_window, the window sits on the layers layer_types names, else on the NoPE ones;
  - repeat_kv for grouped-query attention: query head h reads K/V head h // (H / Hkv);
  - scores Q K^T / sqrt(d), the causal mask (and Mistral's sliding window: key j is masked when j <= i - window),
    softmax, probs V, o_proj;
  - SwiGLU: down_proj(silu(gate_proj(x)) * up_proj(x));
  - the final norm, then lm_head, or the embedding when tie_word_embeddings.
and the forward passes of modeling_gpt_neox.py (GPT-NeoX, Pythia: one query_key_value whose output holds q, k and v of
each head in turn; rotary on the first rotary_pct of each head, its frequencies over that width; scores scaled by
d^-0.5; the parallel residual x + attn(ln_1(x)) + mlp(ln_2(x)) or the sequential one; exact GELU; embed_out) and
modeling_gpt_neo.py (GPT-Neo: learned positions; q, k, v without bias; scores NOT scaled; "local" layers that see the
last window_size positions only; GPT-2's tanh GELU; the head tied to wte) and modeling_bert.py (BERT: word, position
and token-type embeddings summed and normalised; post-LN blocks, scores / sqrt(d), no causal mask, exact GELU; the
masked-LM head dense, GELU, LayerNorm, then the word embeddings transposed plus cls.predictions.bias; the pooler's
tanh on position 0 and cls.seq_relationship) and modeling_t5.py (T5: an encoder and a decoder; T5LayerNorm
w * x / sqrt(mean(x^2) + eps) without mean or bias; q, k, v, o without biases and scores NOT scaled; each stack's
relative position bias from its block 0, _relative_position_bucket bidirectional in the encoder and causal in the
decoder, computed in float32 as T5Attention does; cross-attention without a position bias; DenseReluDense
wo(relu(wi x)) or the gated wo(gelu_new(wi_0 x) * wi_1 x); the decoder's output times d_model^-0.5 when the head is
tied to `shared`).
Everything is computed in float64 from the weights as stored (rounded to BF16 or F16 where the file holds those), and
saved as float32 .npy under the engine's trace names (docs/trace-names.md).

Run it with Debian's interpreter, which has python3-torch and numpy:

    /usr/bin/python3 tests/tools/make_family_reference.py

It is deterministic (fixed seeds) and rewrites, under tests/data/ (only the models named, given names):
  llama_tiny/       llama: GQA (4 query heads, 2 K/V heads), attention_bias and mlp_bias, untied lm_head,
                    llama3 rope_scaling whose bands all hold a frequency; F32, one model.safetensors, "model." keys
  llama_hd_tiny/    llama: head_dim 12 in a model 32 wide (q_proj 48 × 32, o_proj 32 × 48, as Mistral-Nemo's 128 in
                    5120), GQA; F32
  qwen2_tiny/       qwen2: multi-query attention (1 K/V head), q/k/v biases only, tied embeddings, rope_theta 1e6,
                    linear rope_scaling (factor 2); BF16, in two shards named by model.safetensors.index.json
  qwen2_swa_tiny/   qwen2 with use_sliding_window: layers 1 and 2 (from max_window_layers 1 on) see 3 keys, layer 0
                    every earlier one; F32
  qwen3_tiny/       qwen3: QK-norm (q_norm and k_norm over each head's 12 dimensions, before repeat_kv and RoPE),
                    head_dim 12 in a model 32 wide, GQA, attention_bias on q, k, v and o, no MLP biases, tied; BF16
  olmo2_tiny/       olmo2: a norm on each sub-layer's output before its add and none before the sub-layers
                    (post_attention_layernorm, post_feedforward_layernorm), QK-norm over the whole q (H·d) and k
                    (Hkv·d) projections before the split, GQA, untied; F32
  gemma2_tiny/      gemma2: sandwich norms of (1 + w), head_dim 12 in a model 32 wide, query_pre_attn_scalar 10,
                    attention soft-cap 1.5 and final soft-cap 3 (both active), sliding_window 3 on layers 0 and 2 of
                    3, GeGLU, tied, GQA; F32
  gemma3_tiny/      gemma3_text: Gemma 2's block without soft-caps, QK-norm of (1 + w), 4 layers with
                    sliding_window_pattern 3 (layers 0, 1 and 3 see 3 keys), rope_local_base_freq 100 on those and
                    rope_theta 10000 with linear rope_scaling (factor 2) on layer 2, query_pre_attn_scalar 8; BF16
  smollm3_tiny/     smollm3: no_rope_layers [1, 0, 1, 0] (layers 1 and 3 do not turn q and k), use_sliding_window
                    with sliding_window 3 on those NoPE layers, GQA, tied; BF16
  phi3_tiny/        phi3: q, k and v in one qkv_proj and the gate and up projections in one gate_up_proj, RoPE on
                    the first half of each head (partial_rotary_factor 0.5), LongRoPE (original context 16, so the
                    8 tokens turn by the short factors; cos and sin × √(1 + ln 4 / ln 16)), GQA, untied; BF16
  phi3_long_tiny/   phi3 with original_max_position_embeddings 4, so the 8 tokens turn by LongRoPE's long factors
                    (× √(1 + ln 8 / ln 4)), partial_rotary_factor 0.75, sliding_window 5 on every layer, one K/V
                    head, tied; F32
  gemma3_mm_tiny/   gemma3 (Gemma3ForConditionalGeneration): gemma3_tiny as the text_config of a multimodal config,
                    its weights under language_model.model., a vision tower and projector beside them; BF16
  qwen3_moe_tiny/   qwen3_moe: Qwen3's attention (QK-norm, head_dim 12) with 4 SwiGLU experts 20 wide per layer under
                    mlp.experts, top-2 renormalised (norm_topk_prob), the router at mlp.gate, untied; BF16
  gpt_oss_tiny/     gpt_oss: a learned sink per head, biases on q, k, v and o, head_dim 16 in a model 32 wide, GQA,
                    sliding_window 3 on layer 0 (layer_types), YaRN (factor 4 over an original 64 positions, truncate
                    false: a fractional ramp; cos and sin × 0.1 ln 4 + 1), 4 experts per layer stacked in
                    mlp.experts.gate_up_proj (gate and up interleaved) and down_proj with biases, top-2 by a router
                    with a bias, the clamped SwiGLU with swiglu_limit 1 (both clamps active), untied; BF16
  gpt_oss_mxfp4_tiny/  gpt_oss_tiny's shape with experts 32 wide, stored as the released checkpoints store them:
                    quantization_config mxfp4, mlp.experts.gate_up_proj_blocks [E, 2F, D/32, 16] and _scales
                    [E, 2F, D/32] (U8; down_proj's alike), quantized here to the nearest E2M1 code under the smallest
                    power-of-two scale, the scales spread over 2^-8 … 2^4 and two set to 0 and 1 (subnormal values);
                    the reference decodes them with transformers' convert_moe_packed_tensors, written again, and
                    saves the decoded stacks as mxfp4.<parameter>.npy beside the trace; the rest BF16
  mistral_tiny/     mistral: GQA, no biases, untied, sliding_window 4 over 8 tokens; F16
  mixtral_tiny/     mixtral: 4 SwiGLU experts per layer, top-2, gates renormalised over the two (MixtralSparseMoeBlock),
                    GQA; BF16
  neox_tiny/        gpt_neox: partial rotary (rotary_pct 0.5), parallel residual, untied embed_out; F32, "gpt_neox." keys
  neox_seq_tiny/    gpt_neox with use_parallel_residual false and full rotary; F16
  neo_tiny/         gpt_neo: a global then a local layer (window_size 3 over 8 tokens), unscaled scores; BF16
  bert_tiny/        bert (BertForPreTraining: masked-LM and next-sentence heads); F32, "bert." keys
  bert_rel_tiny/    bert with position_embedding_type relative_key (a key per distance, i - j, no absolute positions
                    added) over 8 tokens of a 12-position context; F32
  bert_mlm_tiny/    bert (BertForMaskedLM) with the older LayerNorm.gamma / .beta names and the tied
                    cls.predictions.decoder.weight stored; F16
  t5_tiny/          t5 v1.0: ReLU, tied head, 2 encoder and 3 decoder blocks, 8 buckets up to distance 12 over a
                    14-token source (distances past max_distance); F32
  t5v11_tiny/       t5 v1.1 / Flan: gated-gelu, untied lm_head, 3 heads of d_kv 12 in a model 32 wide; BF16, two shards
  bert_tiny_pair_ref/  bert_tiny on "[CLS] A [SEP] B [SEP]" with token types 0 … 0 1 … 1 (B after the first [SEP])
  <name>_ref/       every trace tensor as <trace name>.npy, and tokens.json (input.json with the source and the
                    decoder's tokens for T5)
  <name>_grads/     for every model in GRAD_MODELS: autograd's loss.npy (mean cross-entropy of the logits against
                    `targets`, ignore_index -1: the next tokens (T5: the decoder's, with the source in input.json), or
                    for BERT the originals at a few masked-LM positions; Mixtral's without the router's auxiliary loss, as MixtralForCausalLM with
                    output_router_logits false) and grad.<parameter>.npy under the engine's parameter names (the
                    checkpoint's without "model.", "bert.", "gpt_neox." or "transformer."; the NSP head, outside the
                    loss, zeros), with
                    input.json {"tokens", "padding", "targets"}
"""

import json
import math
import os
import shutil
import struct
import sys

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from make_positions_reference import t5_bucket  # noqa: E402  (T5Attention._relative_position_bucket, as written there)

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
    "llama_hd_tiny": dict(
        config=dict(model_type="llama", architectures=["LlamaForCausalLM"], hidden_size=32, intermediate_size=40,
                    num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2, head_dim=12, vocab_size=64,
                    max_position_embeddings=64, rms_norm_eps=1e-5, rope_theta=10000.0, hidden_act="silu",
                    tie_word_embeddings=False),
        dtype="F32", shards=1, seed=42),
    "qwen2_tiny": dict(
        config=dict(model_type="qwen2", architectures=["Qwen2ForCausalLM"], hidden_size=32, intermediate_size=40,
                    num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=1, vocab_size=64,
                    max_position_embeddings=256, rms_norm_eps=1e-6, rope_theta=1000000.0, hidden_act="silu",
                    tie_word_embeddings=True, use_sliding_window=False,
                    rope_scaling=dict(type="linear", factor=2.0)),
        dtype="BF16", shards=2, seed=32),
    "qwen2_swa_tiny": dict(
        config=dict(model_type="qwen2", architectures=["Qwen2ForCausalLM"], hidden_size=32, intermediate_size=40,
                    num_hidden_layers=3, num_attention_heads=4, num_key_value_heads=2, vocab_size=64,
                    max_position_embeddings=64, rms_norm_eps=1e-6, rope_theta=1000000.0, hidden_act="silu",
                    tie_word_embeddings=True, use_sliding_window=True, sliding_window=3, max_window_layers=1),
        dtype="F32", shards=1, seed=43),
    "qwen3_tiny": dict(
        config=dict(model_type="qwen3", architectures=["Qwen3ForCausalLM"], hidden_size=32, intermediate_size=40,
                    num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2, head_dim=12, vocab_size=64,
                    max_position_embeddings=128, rms_norm_eps=1e-6, rope_theta=1000000.0, hidden_act="silu",
                    tie_word_embeddings=True, attention_bias=True, use_sliding_window=False, rope_scaling=None),
        dtype="BF16", shards=1, seed=44),
    "olmo2_tiny": dict(
        config=dict(model_type="olmo2", architectures=["Olmo2ForCausalLM"], hidden_size=32, intermediate_size=40,
                    num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2, vocab_size=64,
                    max_position_embeddings=128, rms_norm_eps=1e-6, rope_theta=500000.0, hidden_act="silu",
                    tie_word_embeddings=False, attention_bias=False, rope_scaling=None),
        dtype="F32", shards=1, seed=45),
    "gemma2_tiny": dict(
        config=dict(model_type="gemma2", architectures=["Gemma2ForCausalLM"], hidden_size=32, intermediate_size=40,
                    num_hidden_layers=3, num_attention_heads=4, num_key_value_heads=2, head_dim=12, vocab_size=64,
                    max_position_embeddings=64, rms_norm_eps=1e-6, rope_theta=10000.0,
                    hidden_act="gelu_pytorch_tanh", hidden_activation="gelu_pytorch_tanh", query_pre_attn_scalar=10,
                    attn_logit_softcapping=1.5, final_logit_softcapping=3.0, sliding_window=3,
                    tie_word_embeddings=True, attention_bias=False),
        dtype="F32", shards=1, seed=46),
    "gemma3_tiny": dict(
        config=dict(model_type="gemma3_text", architectures=["Gemma3ForCausalLM"], hidden_size=32, intermediate_size=40,
                    num_hidden_layers=4, num_attention_heads=4, num_key_value_heads=2, head_dim=12, vocab_size=64,
                    max_position_embeddings=64, rms_norm_eps=1e-6, rope_theta=10000.0, rope_local_base_freq=100.0,
                    rope_scaling=dict(rope_type="linear", factor=2.0), hidden_activation="gelu_pytorch_tanh",
                    query_pre_attn_scalar=8, attn_logit_softcapping=None, final_logit_softcapping=None,
                    sliding_window=3, sliding_window_pattern=3, tie_word_embeddings=True, attention_bias=False),
        dtype="BF16", shards=1, seed=47),
    "smollm3_tiny": dict(
        config=dict(model_type="smollm3", architectures=["SmolLM3ForCausalLM"], hidden_size=32, intermediate_size=40,
                    num_hidden_layers=4, num_attention_heads=4, num_key_value_heads=2, vocab_size=64,
                    max_position_embeddings=128, rms_norm_eps=1e-6, rope_theta=2000000.0, hidden_act="silu",
                    tie_word_embeddings=True, attention_bias=False, mlp_bias=False, no_rope_layers=[1, 0, 1, 0],
                    use_sliding_window=True, sliding_window=3, rope_scaling=None),
        dtype="BF16", shards=1, seed=48),
    "phi3_tiny": dict(
        config=dict(model_type="phi3", architectures=["Phi3ForCausalLM"], hidden_size=32, intermediate_size=40,
                    num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2, vocab_size=64,
                    max_position_embeddings=64, original_max_position_embeddings=16, rms_norm_eps=1e-5,
                    rope_theta=10000.0, partial_rotary_factor=0.5, hidden_act="silu", tie_word_embeddings=False,
                    sliding_window=None,
                    rope_scaling=dict(type="longrope", short_factor=[1.0, 1.5], long_factor=[2.0, 4.0])),
        dtype="BF16", shards=1, seed=50),
    "phi3_long_tiny": dict(
        config=dict(model_type="phi3", architectures=["Phi3ForCausalLM"], hidden_size=32, intermediate_size=40,
                    num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=1, vocab_size=64,
                    max_position_embeddings=32, original_max_position_embeddings=4, rms_norm_eps=1e-5,
                    rope_theta=10000.0, partial_rotary_factor=0.75, hidden_act="silu", tie_word_embeddings=True,
                    sliding_window=5,
                    rope_scaling=dict(type="longrope", short_factor=[1.0, 1.25, 2.0],
                                      long_factor=[1.5, 3.0, 6.0])),
        dtype="F32", shards=1, seed=51),
    # Gemma3ForConditionalGeneration's layout (Gemma 3 4B and up): gemma3_tiny's weights under "language_model.model.",
    # its config as text_config, beside a vision tower and projector that the app leaves unread.
    "gemma3_mm_tiny": dict(multimodal="gemma3_tiny"),
    "qwen3_moe_tiny": dict(
        config=dict(model_type="qwen3_moe", architectures=["Qwen3MoeForCausalLM"], hidden_size=32,
                    intermediate_size=64, moe_intermediate_size=20, num_experts=4, num_experts_per_tok=2,
                    norm_topk_prob=True, decoder_sparse_step=1, mlp_only_layers=[], num_hidden_layers=2,
                    num_attention_heads=4, num_key_value_heads=2, head_dim=12, vocab_size=64,
                    max_position_embeddings=128, rms_norm_eps=1e-6, rope_theta=1000000.0, hidden_act="silu",
                    tie_word_embeddings=False, attention_bias=False, router_aux_loss_coef=0.001, rope_scaling=None),
        dtype="BF16", shards=1, seed=49),
    "gpt_oss_tiny": dict(
        config=dict(model_type="gpt_oss", architectures=["GptOssForCausalLM"], hidden_size=32, intermediate_size=20,
                    num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2, head_dim=16, vocab_size=64,
                    max_position_embeddings=256, rms_norm_eps=1e-5, rope_theta=10000.0, hidden_act="silu",
                    rope_scaling=dict(rope_type="yarn", factor=4.0, beta_fast=32.0, beta_slow=1.0, truncate=False,
                                      original_max_position_embeddings=64),
                    sliding_window=3, layer_types=["sliding_attention", "full_attention"], num_local_experts=4,
                    num_experts_per_tok=2, swiglu_limit=1.0, attention_bias=True, tie_word_embeddings=False,
                    router_aux_loss_coef=0.001),
        dtype="BF16", shards=1, seed=52),
    "gpt_oss_mxfp4_tiny": dict(mxfp4_of="gpt_oss_tiny", intermediate_size=32, seed=53),
    "mistral_tiny": dict(
        config=dict(model_type="mistral", architectures=["MistralForCausalLM"], hidden_size=32,
                    intermediate_size=56, num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2,
                    vocab_size=64, max_position_embeddings=64, rms_norm_eps=1e-5, rope_theta=10000.0,
                    hidden_act="silu", tie_word_embeddings=False, sliding_window=4),
        dtype="F16", shards=1, seed=33),
    "mixtral_tiny": dict(
        config=dict(model_type="mixtral", architectures=["MixtralForCausalLM"], hidden_size=32, intermediate_size=24,
                    num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2, vocab_size=64,
                    max_position_embeddings=64, rms_norm_eps=1e-5, rope_theta=1000000.0, hidden_act="silu",
                    tie_word_embeddings=False, sliding_window=None, num_local_experts=4, num_experts_per_tok=2,
                    router_aux_loss_coef=0.02),
        dtype="BF16", shards=1, seed=39),
    "neox_tiny": dict(
        config=dict(model_type="gpt_neox", architectures=["GPTNeoXForCausalLM"], hidden_size=32, intermediate_size=48,
                    num_hidden_layers=2, num_attention_heads=4, vocab_size=64, max_position_embeddings=64,
                    layer_norm_eps=1e-5, rotary_pct=0.5, rotary_emb_base=10000, use_parallel_residual=True,
                    hidden_act="gelu", tie_word_embeddings=False),
        dtype="F32", shards=1, seed=34),
    "neox_seq_tiny": dict(
        config=dict(model_type="gpt_neox", architectures=["GPTNeoXForCausalLM"], hidden_size=32, intermediate_size=40,
                    num_hidden_layers=2, num_attention_heads=2, vocab_size=64, max_position_embeddings=64,
                    layer_norm_eps=1e-5, rotary_pct=1.0, rotary_emb_base=10000, use_parallel_residual=False,
                    hidden_act="gelu", tie_word_embeddings=False),
        dtype="F16", shards=1, seed=35),
    "neo_tiny": dict(
        config=dict(model_type="gpt_neo", architectures=["GPTNeoForCausalLM"], hidden_size=32, intermediate_size=48,
                    num_layers=2, num_heads=4, vocab_size=64, max_position_embeddings=16, layer_norm_epsilon=1e-5,
                    activation_function="gelu_new", attention_types=[[["global", "local"], 1]], window_size=3),
        dtype="BF16", shards=1, seed=36),
    "bert_tiny": dict(
        config=dict(model_type="bert", architectures=["BertForPreTraining"], hidden_size=32, intermediate_size=48,
                    num_hidden_layers=2, num_attention_heads=4, vocab_size=64, max_position_embeddings=16,
                    type_vocab_size=2, layer_norm_eps=1e-12, hidden_act="gelu", position_embedding_type="absolute"),
        dtype="F32", shards=1, seed=37, nsp=True),
    "bert_rel_tiny": dict(
        config=dict(model_type="bert", architectures=["BertForMaskedLM"], hidden_size=32, intermediate_size=48,
                    num_hidden_layers=2, num_attention_heads=4, vocab_size=64, max_position_embeddings=12,
                    type_vocab_size=2, layer_norm_eps=1e-12, hidden_act="gelu",
                    position_embedding_type="relative_key"),
        dtype="F32", shards=1, seed=44, nsp=False),
    "bert_mlm_tiny": dict(
        config=dict(model_type="bert", architectures=["BertForMaskedLM"], hidden_size=32, intermediate_size=40,
                    num_hidden_layers=2, num_attention_heads=2, vocab_size=64, max_position_embeddings=16,
                    type_vocab_size=2, layer_norm_eps=1e-12, hidden_act="gelu"),
        dtype="F16", shards=1, seed=38, nsp=False, legacy=True),
    "t5_tiny": dict(
        config=dict(model_type="t5", architectures=["T5ForConditionalGeneration"], is_encoder_decoder=True, d_model=32,
                    d_kv=8, num_heads=4, num_layers=2, num_decoder_layers=3, d_ff=48, vocab_size=64,
                    relative_attention_num_buckets=8, relative_attention_max_distance=12, layer_norm_epsilon=1e-6,
                    feed_forward_proj="relu", tie_word_embeddings=True, decoder_start_token_id=0),
        dtype="F32", shards=1, seed=40),
    "t5v11_tiny": dict(
        config=dict(model_type="t5", architectures=["T5ForConditionalGeneration"], is_encoder_decoder=True, d_model=32,
                    d_kv=12, num_heads=3, num_layers=2, num_decoder_layers=2, d_ff=40, vocab_size=64,
                    relative_attention_num_buckets=32, relative_attention_max_distance=128, layer_norm_epsilon=1e-6,
                    feed_forward_proj="gated-gelu", tie_word_embeddings=False, decoder_start_token_id=0),
        dtype="BF16", shards=2, seed=41),
}
T5_SOURCE = [5, 17, 42, 8, 33, 25, 63, 11, 2, 9, 40, 12, 7, 1]
T5_DECODER = [0, 21, 4, 56, 30, 14, 3, 48, 19]

written = []


# ---------------------------------------------------------------------------------------------- files

# gpt_oss_mxfp4_tiny: gpt_oss_tiny's config with experts a whole MXFP4 block wide and quantization_config mxfp4.
for _name, _spec in list(MODELS.items()):
    if "mxfp4_of" in _spec:
        _base = MODELS[_spec["mxfp4_of"]]
        MODELS[_name] = dict(_base, seed=_spec["seed"], mxfp4=True, config=dict(
            _base["config"], intermediate_size=_spec["intermediate_size"],
            quantization_config=dict(modules_to_not_convert=["model.layers.*.self_attn", "model.layers.*.mlp.router",
                                                             "model.embed_tokens", "lm_head"], quant_method="mxfp4")))


def write_text(path, text):
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)
    written.append(path)


def stored_bytes(t, dtype):
    """The little-endian bytes of float32 tensor t stored as dtype, and t rounded as the file holds it (a uint8
    tensor, MXFP4's blocks and scales, as its bytes)."""
    if t.dtype == torch.uint8:
        return t.numpy().tobytes(), t
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
        kind = "U8" if tensors[name].dtype == torch.uint8 else dtype
        header[name] = {"dtype": kind, "shape": list(tensors[name].shape), "data_offsets": [offset, offset + len(raw)]}
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

def bert_weights(cfg, seed, nsp):
    """BertForPreTraining's (nsp) or BertForMaskedLM's names, nn.Linear shapes [out, in]."""
    g = torch.Generator().manual_seed(seed)
    D, V, F = cfg["hidden_size"], cfg["vocab_size"], cfg["intermediate_size"]

    def normal(*shape, std=0.2):
        return torch.randn(*shape, generator=g, dtype=torch.float32) * std

    def linear(w, name, out, inp):
        w[name + ".weight"] = normal(out, inp)
        w[name + ".bias"] = normal(out, std=0.1)

    def norm(w, name):
        w[name + ".weight"] = 1.0 + normal(D, std=0.1)
        w[name + ".bias"] = normal(D, std=0.1)

    w = {"bert.embeddings.word_embeddings.weight": normal(V, D, std=0.5),
         "bert.embeddings.position_embeddings.weight": normal(cfg["max_position_embeddings"], D),
         "bert.embeddings.token_type_embeddings.weight": normal(cfg["type_vocab_size"], D)}
    norm(w, "bert.embeddings.LayerNorm")
    for i in range(cfg["num_hidden_layers"]):
        p = f"bert.encoder.layer.{i}."
        for name in ("query", "key", "value"):
            linear(w, p + "attention.self." + name, D, D)
        if cfg.get("position_embedding_type") == "relative_key":
            M, d = cfg["max_position_embeddings"], D // cfg["num_attention_heads"]
            w[p + "attention.self.distance_embedding.weight"] = normal(2 * M - 1, d, std=0.5)
        linear(w, p + "attention.output.dense", D, D)
        norm(w, p + "attention.output.LayerNorm")
        linear(w, p + "intermediate.dense", F, D)
        linear(w, p + "output.dense", D, F)
        norm(w, p + "output.LayerNorm")
    linear(w, "cls.predictions.transform.dense", D, D)
    norm(w, "cls.predictions.transform.LayerNorm")
    w["cls.predictions.bias"] = normal(V, std=0.1)
    if nsp:
        linear(w, "bert.pooler.dense", D, D)
        linear(w, "cls.seq_relationship", 2, D)
    return w


def neo_weights(cfg, seed):
    """GPTNeoXForCausalLM's and GPTNeoForCausalLM's names, nn.Linear shapes [out, in]."""
    g = torch.Generator().manual_seed(seed)
    D, V, F = cfg["hidden_size"], cfg["vocab_size"], cfg["intermediate_size"]

    def normal(*shape, std=0.2):
        return torch.randn(*shape, generator=g, dtype=torch.float32) * std

    def linear(w, name, out, inp, bias=True):
        w[name + ".weight"] = normal(out, inp)
        if bias:
            w[name + ".bias"] = normal(out, std=0.1)

    def norm(w, name):
        w[name + ".weight"] = 1.0 + normal(D, std=0.1)
        w[name + ".bias"] = normal(D, std=0.1)

    w = {}
    if cfg["model_type"] == "gpt_neox":
        w["gpt_neox.embed_in.weight"] = normal(V, D, std=0.5)
        for i in range(cfg["num_hidden_layers"]):
            p = f"gpt_neox.layers.{i}."
            norm(w, p + "input_layernorm")
            linear(w, p + "attention.query_key_value", 3 * D, D)
            linear(w, p + "attention.dense", D, D)
            norm(w, p + "post_attention_layernorm")
            linear(w, p + "mlp.dense_h_to_4h", F, D)
            linear(w, p + "mlp.dense_4h_to_h", D, F)
        norm(w, "gpt_neox.final_layer_norm")
        w["embed_out.weight"] = normal(V, D)
        return w
    w["transformer.wte.weight"] = normal(V, D, std=0.5)
    w["transformer.wpe.weight"] = normal(cfg["max_position_embeddings"], D, std=0.2)
    for i in range(cfg["num_layers"]):
        p = f"transformer.h.{i}."
        norm(w, p + "ln_1")
        for name in ("q_proj", "k_proj", "v_proj"):
            linear(w, p + "attn.attention." + name, D, D, bias=False)
        linear(w, p + "attn.attention.out_proj", D, D)
        norm(w, p + "ln_2")
        linear(w, p + "mlp.c_fc", F, D)
        linear(w, p + "mlp.c_proj", D, F)
    norm(w, "transformer.ln_f")
    return w


def t5_weights(cfg, seed):
    """T5ForConditionalGeneration's names, nn.Linear shapes [out, in], no biases."""
    g = torch.Generator().manual_seed(seed)
    D, V, F, H = cfg["d_model"], cfg["vocab_size"], cfg["d_ff"], cfg["num_heads"]
    inner = H * cfg["d_kv"]

    def normal(*shape, std=0.2):
        return torch.randn(*shape, generator=g) * std

    w = {"shared.weight": normal(V, D, std=1.0)}
    gated = cfg["feed_forward_proj"].startswith("gated-")
    for stack, layers in (("encoder", cfg["num_layers"]), ("decoder", cfg["num_decoder_layers"])):
        for i in range(layers):
            p = f"{stack}.block.{i}.layer."
            for part in ("q", "k", "v"):
                w[p + f"0.SelfAttention.{part}.weight"] = normal(inner, D)
            w[p + "0.SelfAttention.o.weight"] = normal(D, inner)
            if i == 0:
                w[p + "0.SelfAttention.relative_attention_bias.weight"] = normal(
                    cfg["relative_attention_num_buckets"], H, std=1.0)
            w[p + "0.layer_norm.weight"] = 1.0 + normal(D, std=0.1)
            f = p + ("1." if stack == "encoder" else "2.")
            if stack == "decoder":
                for part in ("q", "k", "v"):
                    w[p + f"1.EncDecAttention.{part}.weight"] = normal(inner, D)
                w[p + "1.EncDecAttention.o.weight"] = normal(D, inner)
                w[p + "1.layer_norm.weight"] = 1.0 + normal(D, std=0.1)
            if gated:
                w[f + "DenseReluDense.wi_0.weight"] = normal(F, D)
                w[f + "DenseReluDense.wi_1.weight"] = normal(F, D)
            else:
                w[f + "DenseReluDense.wi.weight"] = normal(F, D)
            w[f + "DenseReluDense.wo.weight"] = normal(D, F)
            w[f + "layer_norm.weight"] = 1.0 + normal(D, std=0.1)
        w[f"{stack}.final_layer_norm.weight"] = 1.0 + normal(D, std=0.1)
    if not cfg["tie_word_embeddings"]:
        w["lm_head.weight"] = normal(V, D)
    return w


def gpt_oss_weights(cfg, seed):
    """GptOssForCausalLM's names: Llama's attention with biases and self_attn.sinks, mlp.router with a bias, and the
    experts stacked as GptOssExperts holds them (gate_up_proj [E, D, 2F], x @ W, gate and up columns interleaved)."""
    g = torch.Generator().manual_seed(seed)
    D, V, F, E = cfg["hidden_size"], cfg["vocab_size"], cfg["intermediate_size"], cfg["num_local_experts"]
    H, Hkv, d = cfg["num_attention_heads"], cfg["num_key_value_heads"], cfg["head_dim"]

    def normal(*shape, std=0.2):
        return torch.randn(*shape, generator=g, dtype=torch.float32) * std

    w = {"model.embed_tokens.weight": normal(V, D, std=0.5)}
    for i in range(cfg["num_hidden_layers"]):
        p = f"model.layers.{i}."
        w[p + "input_layernorm.weight"] = 1.0 + normal(D, std=0.1)
        for name, out, inp in (("q_proj", H * d, D), ("k_proj", Hkv * d, D), ("v_proj", Hkv * d, D),
                               ("o_proj", D, H * d)):
            w[p + f"self_attn.{name}.weight"] = normal(out, inp)
            w[p + f"self_attn.{name}.bias"] = normal(out, std=0.1)
        w[p + "self_attn.sinks"] = normal(H, std=1.0)
        w[p + "post_attention_layernorm.weight"] = 1.0 + normal(D, std=0.1)
        w[p + "mlp.router.weight"] = normal(E, D, std=0.5)
        w[p + "mlp.router.bias"] = normal(E, std=0.3)
        w[p + "mlp.experts.gate_up_proj"] = normal(E, D, 2 * F)
        w[p + "mlp.experts.gate_up_proj_bias"] = normal(E, 2 * F, std=0.1)
        w[p + "mlp.experts.down_proj"] = normal(E, F, D)
        w[p + "mlp.experts.down_proj_bias"] = normal(E, D, std=0.1)
    w["model.norm.weight"] = 1.0 + normal(D, std=0.1)
    w["lm_head.weight"] = normal(V, D)
    return w


FP4_VALUES = [0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0, -0.0, -0.5, -1.0, -1.5, -2.0, -3.0, -4.0, -6.0]


def mxfp4_quantize(w, generator):
    """An expert stack [E, C, R] (x @ W) as gpt-oss's checkpoints store it: each expert's [R, C] in blocks of 32
    columns, each block's scale the smallest power of two 2^(e - 127) that brings its largest magnitude within 6, and
    each value the nearest E2M1 code, two a byte, the low nibble first. Returns (blocks [E, R, C/32, 16] uint8, scales
    [E, R, C/32] uint8). A few rows are scaled by 2^-8 … 2^4 so the scales differ, and the first two blocks of the
    first expert get the scales 0 and 1 (their values subnormal in float32)."""
    rows = w.transpose(1, 2).contiguous()
    E, R, C = rows.shape
    rows = rows * torch.pow(2.0, torch.randint(-8, 5, (E, R, 1), generator=generator).to(torch.float32))
    grouped = rows.reshape(E, R, C // 32, 32).to(torch.float64)
    peak = grouped.abs().amax(dim=-1).clamp_min(1e-30)
    exponent = torch.ceil(torch.log2(peak / 6.0)).clamp(-127, 127).to(torch.int64)
    scaled = grouped / torch.pow(2.0, exponent.to(torch.float64)).unsqueeze(-1)
    levels = torch.tensor(FP4_VALUES[:8], dtype=torch.float64)
    nearest = (scaled.abs().unsqueeze(-1) - levels).abs().argmin(dim=-1)
    codes = nearest + 8 * (scaled < 0).to(torch.int64)
    scales = (exponent + 127).to(torch.uint8)
    scales[0, 0, 0], scales[0, 1, 0] = 0, 1
    blocks = (codes[..., 0::2] | (codes[..., 1::2] << 4)).to(torch.uint8)
    return blocks, scales


def convert_moe_packed_tensors(blocks, scales):
    """transformers' integrations/mxfp4.py convert_moe_packed_tensors (BF16 out, as it loads gpt-oss on a CPU),
    written again: scales - 127 as exponents, the low then the high nibble of each byte looked up in FP4_VALUES,
    ldexp, and each expert's [R, C] transposed to [C, R]."""
    exponents = scales.to(torch.int32) - 127
    lut = torch.tensor(FP4_VALUES, dtype=torch.bfloat16)
    *prefix, G, B = blocks.shape
    rows = math.prod(prefix) * G
    flat, exp = blocks.reshape(rows, B), exponents.reshape(rows, 1)
    out = torch.empty(rows, 2 * B, dtype=torch.bfloat16)
    out[:, 0::2] = lut[(flat & 0x0F).to(torch.long)]
    out[:, 1::2] = lut[(flat >> 4).to(torch.long)]
    out = torch.ldexp(out, exp).to(torch.bfloat16)
    return out.reshape(*prefix, G * 2 * B).transpose(1, 2).contiguous()


def random_weights(cfg, seed):
    """Hugging Face's names for LlamaForCausalLM and its kin, nn.Linear shapes [out, in]."""
    if cfg["model_type"] in ("gpt_neox", "gpt_neo"):
        return neo_weights(cfg, seed)
    if cfg["model_type"] == "gpt_oss":
        return gpt_oss_weights(cfg, seed)
    g = torch.Generator().manual_seed(seed)
    D, V, F = cfg["hidden_size"], cfg["vocab_size"], cfg["intermediate_size"]
    H, Hkv = cfg["num_attention_heads"], cfg["num_key_value_heads"]
    d = cfg.get("head_dim") or D // H  # LlamaAttention's head_dim
    qwen2, olmo2 = cfg["model_type"] == "qwen2", cfg["model_type"] == "olmo2"
    qwen3 = cfg["model_type"] in ("qwen3", "qwen3_moe")
    gemma2 = cfg["model_type"] in ("gemma2", "gemma3_text")
    qkv_bias = qwen2 or cfg.get("attention_bias", False)
    o_bias = not qwen2 and cfg.get("attention_bias", False)
    mlp_bias = not (qwen2 or qwen3 or olmo2 or gemma2) and cfg.get("mlp_bias", False)  # Qwen3MLP, Olmo2MLP: no biases
    norm_base = 0.0 if gemma2 else 1.0  # Gemma2RMSNorm scales by 1 + w: its weights start at 0

    def normal(*shape, std=0.2):
        return torch.randn(*shape, generator=g, dtype=torch.float32) * std

    def linear(w, name, out, inp, bias):
        w[name + ".weight"] = normal(out, inp)
        if bias:
            w[name + ".bias"] = normal(out, std=0.1)

    phi3 = cfg["model_type"] == "phi3"
    w = {"model.embed_tokens.weight": normal(V, D, std=0.5)}
    for i in range(cfg["num_hidden_layers"]):
        p = f"model.layers.{i}."
        if not olmo2:  # Olmo2DecoderLayer has no norm before its sub-layers
            w[p + "input_layernorm.weight"] = norm_base + normal(D, std=0.1)
        if phi3:  # Phi3Attention: one qkv_proj, rows [q (H·d), k (Hkv·d), v (Hkv·d)], no bias
            linear(w, p + "self_attn.qkv_proj", (H + 2 * Hkv) * d, D, False)
        else:
            linear(w, p + "self_attn.q_proj", H * d, D, qkv_bias)
            linear(w, p + "self_attn.k_proj", Hkv * d, D, qkv_bias)
            linear(w, p + "self_attn.v_proj", Hkv * d, D, qkv_bias)
        linear(w, p + "self_attn.o_proj", D, H * d, o_bias)
        if cfg["model_type"] == "gemma3_text":  # Gemma3Attention's q_norm and k_norm: 1 + w over one head's d
            w[p + "self_attn.q_norm.weight"] = normal(d, std=0.3)
            w[p + "self_attn.k_norm.weight"] = normal(d, std=0.3)
        if qwen3:  # Qwen3Attention's q_norm and k_norm, over one head's d
            w[p + "self_attn.q_norm.weight"] = 1.0 + normal(d, std=0.3)
            w[p + "self_attn.k_norm.weight"] = 1.0 + normal(d, std=0.3)
        if olmo2:  # Olmo2Attention's q_norm and k_norm, over the whole q and k projections
            w[p + "self_attn.q_norm.weight"] = 1.0 + normal(H * d, std=0.3)
            w[p + "self_attn.k_norm.weight"] = 1.0 + normal(Hkv * d, std=0.3)
        w[p + "post_attention_layernorm.weight"] = norm_base + normal(D, std=0.1)
        if gemma2:  # Gemma2DecoderLayer: the feed-forward's norms before and after
            w[p + "pre_feedforward_layernorm.weight"] = normal(D, std=0.1)
            w[p + "post_feedforward_layernorm.weight"] = normal(D, std=0.1)
        if cfg["model_type"] == "qwen3_moe":  # Qwen3MoeSparseMoeBlock: experts moe_intermediate_size wide
            w[p + "mlp.gate.weight"] = normal(cfg["num_experts"], D, std=0.5)
            Fe = cfg["moe_intermediate_size"]
            for e in range(cfg["num_experts"]):
                x = p + f"mlp.experts.{e}."
                w[x + "gate_proj.weight"] = normal(Fe, D)
                w[x + "up_proj.weight"] = normal(Fe, D)
                w[x + "down_proj.weight"] = normal(D, Fe)
            continue
        if cfg["model_type"] == "mixtral":
            w[p + "block_sparse_moe.gate.weight"] = normal(cfg["num_local_experts"], D, std=0.5)
            for e in range(cfg["num_local_experts"]):
                x = p + f"block_sparse_moe.experts.{e}."
                w[x + "w1.weight"] = normal(F, D)
                w[x + "w2.weight"] = normal(D, F)
                w[x + "w3.weight"] = normal(F, D)
            continue
        if phi3:  # Phi3MLP: one gate_up_proj, the gate's rows first
            linear(w, p + "mlp.gate_up_proj", 2 * F, D, False)
        else:
            linear(w, p + "mlp.gate_proj", F, D, mlp_bias)
            linear(w, p + "mlp.up_proj", F, D, mlp_bias)
        linear(w, p + "mlp.down_proj", D, F, mlp_bias)
        if olmo2:
            w[p + "post_feedforward_layernorm.weight"] = 1.0 + normal(D, std=0.1)
    w["model.norm.weight"] = norm_base + normal(D, std=0.1)
    if not cfg["tie_word_embeddings"]:
        w["lm_head.weight"] = normal(V, D)
    return w


# ---------------------------------------------------------------------------------------------- forward

def inverse_frequencies(cfg, d, seq_len=0):
    """LlamaRotaryEmbedding's inv_freq (float32), with rope_scaling applied; LongRoPE's by the text's length."""
    base = cfg["rope_theta"]
    scaling = cfg.get("rope_scaling") or {}
    kind = scaling.get("rope_type", scaling.get("type", "default"))
    if kind in ("longrope", "su"):  # _compute_longrope_parameters with Phi3Config's original_max_position_embeddings
        long = seq_len > cfg["original_max_position_embeddings"]
        ext = torch.tensor(scaling["long_factor"] if long else scaling["short_factor"], dtype=torch.float32)
        return 1.0 / (ext * base ** (torch.arange(0, d, 2, dtype=torch.int64).float() / d))
    inv_freq = 1.0 / (base ** (torch.arange(0, d, 2, dtype=torch.int64).float() / d))
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


def layer_norm(x, w, name, eps):
    mean = x.mean(-1, keepdim=True)
    var = (x - mean).pow(2).mean(-1, keepdim=True)
    return w[name + ".weight"] * (x - mean) / torch.sqrt(var + eps) + w[name + ".bias"]


def gelu_tanh(x):
    return 0.5 * x * (1 + torch.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x.pow(3))))


def attend(trace, p, q, k, v, allowed, scale, bias=None, cap=None, sinks=None):
    """scores (plus a position term `bias`; soft-capped as cap * tanh(s / cap) with a `cap`), mask, softmax and context
    of [H, T, d] queries, keys and values into the trace; returns [T, H·d]. With `sinks` [H] (gpt-oss's
    eager_attention_forward): each head's sink logit joins the softmax as one more column, the row's max subtracted,
    and is dropped after it; its share goes to the trace as attn.sink."""
    H, T, d = q.shape
    scores = q @ k.transpose(1, 2) * scale
    if bias is not None:
        trace[p + "attn.bias"] = bias
        scores = scores + bias
    trace[p + "attn.scores"] = scores
    if cap is not None:  # Gemma 2's attn_logit_softcapping, before the mask
        scores = cap * torch.tanh(scores / cap)
        trace[p + "attn.capped"] = scores
    masked = scores.masked_fill(~allowed, float("-inf"))
    trace[p + "attn.masked"] = masked
    if sinks is None:
        probs = torch.softmax(masked, dim=-1)
    else:
        combined = torch.cat([masked, sinks.reshape(H, 1, 1).expand(H, T, 1)], dim=-1)
        combined = torch.softmax(combined - combined.max(dim=-1, keepdim=True).values, dim=-1)
        probs, trace[p + "attn.sink"] = combined[..., :-1], combined[..., -1]
    trace[p + "attn.probs"] = probs
    context = probs @ v
    trace[p + "attn.context"] = context
    merged = context.transpose(0, 1).reshape(T, H * d)
    trace[p + "attn.merged"] = merged
    return merged


def neox_forward(w, cfg, tokens):
    """GPTNeoXForCausalLM's forward."""
    T = len(tokens)
    D, H, eps = cfg["hidden_size"], cfg["num_attention_heads"], cfg["layer_norm_eps"]
    d = D // H
    rot = int(d * cfg["rotary_pct"])
    inv_freq = 1.0 / (cfg["rotary_emb_base"] ** (torch.arange(0, rot, 2, dtype=torch.int64).float() / rot))
    freqs = torch.arange(T, dtype=torch.float32)[:, None] * inv_freq[None, :]
    emb = torch.cat((freqs, freqs), dim=-1)
    cos, sin = emb.cos().to(torch.float64), emb.sin().to(torch.float64)
    allowed = torch.tril(torch.ones(T, T, dtype=torch.bool))

    def lin(x, name):
        return x @ w[name + ".weight"].T + w[name + ".bias"]

    def mlp(h, p, m):
        up = lin(h, m + "mlp.dense_h_to_4h")
        act = torch.nn.functional.gelu(up)  # exact (erf) GELU, hidden_act "gelu"
        down = lin(act, m + "mlp.dense_4h_to_h")
        trace[p + "mlp.up"], trace[p + "mlp.act"], trace[p + "mlp.down"] = up, act, down
        return down

    trace = {}
    x = w["gpt_neox.embed_in.weight"][torch.tensor(tokens)]
    trace["embed"] = x
    trace["input"] = x
    for i in range(cfg["num_hidden_layers"]):
        p, m = f"layer.{i}.", f"gpt_neox.layers.{i}."
        h = layer_norm(x, w, m + "input_layernorm", eps)
        trace[p + "ln_1"] = h
        qkv = lin(h, m + "attention.query_key_value")
        trace[p + "attn.qkv"] = qkv
        per_head = qkv.view(T, H, 3 * d).transpose(0, 1)  # [H, T, 3d]: q_h, k_h, v_h side by side
        q, k, v = per_head[..., :d], per_head[..., d:2 * d], per_head[..., 2 * d:]
        trace[p + "attn.q"], trace[p + "attn.k"], trace[p + "attn.v"] = q, k, v
        q = torch.cat((q[..., :rot] * cos + rotate_half(q[..., :rot]) * sin, q[..., rot:]), dim=-1)
        k = torch.cat((k[..., :rot] * cos + rotate_half(k[..., :rot]) * sin, k[..., rot:]), dim=-1)
        trace[p + "attn.q_rot"], trace[p + "attn.k_rot"] = q, k
        out = lin(attend(trace, p, q, k, v, allowed, d ** -0.5), m + "attention.dense")
        trace[p + "attn.out"] = out
        if cfg["use_parallel_residual"]:
            h2 = layer_norm(x, w, m + "post_attention_layernorm", eps)
            trace[p + "ln_2"] = h2
            x = x + out + mlp(h2, p, m)
        else:
            mid = x + out
            trace[p + "mid"] = mid
            h2 = layer_norm(mid, w, m + "post_attention_layernorm", eps)
            trace[p + "ln_2"] = h2
            x = mid + mlp(h2, p, m)
        trace[p + "out"] = x
    trace["ln_f"] = layer_norm(x, w, "gpt_neox.final_layer_norm", eps)
    trace["logits"] = trace["ln_f"] @ w["embed_out.weight"].T
    trace["next_probs"] = torch.softmax(trace["logits"], dim=-1)
    return trace


def neo_forward(w, cfg, tokens):
    """GPTNeoForCausalLM's forward: scores q kᵀ without 1/√d, local layers masking keys j ≤ i − window_size."""
    T = len(tokens)
    D, H, eps = cfg["hidden_size"], cfg["num_heads"], cfg["layer_norm_epsilon"]
    d = D // H
    kinds = [kind for pattern, repeats in cfg["attention_types"] for _ in range(repeats) for kind in pattern]
    causal = torch.tril(torch.ones(T, T, dtype=torch.bool))
    local = causal & (torch.arange(T)[None, :] > torch.arange(T)[:, None] - cfg["window_size"])

    def lin(x, name):
        y = x @ w[name + ".weight"].T
        return y + w[name + ".bias"] if name + ".bias" in w else y

    trace = {}
    ids = torch.tensor(tokens)
    trace["embed"] = w["transformer.wte.weight"][ids]
    trace["pos.encoding"] = w["transformer.wpe.weight"][:T]
    x = trace["embed"] + trace["pos.encoding"]
    trace["input"] = x
    for i in range(cfg["num_layers"]):
        p, m = f"layer.{i}.", f"transformer.h.{i}."
        h = layer_norm(x, w, m + "ln_1", eps)
        trace[p + "ln_1"] = h
        a = m + "attn.attention."
        q, k, v = lin(h, a + "q_proj"), lin(h, a + "k_proj"), lin(h, a + "v_proj")
        trace[p + "attn.qkv"] = torch.cat((q, k, v), dim=1)
        q, k, v = (t.reshape(T, H, d).transpose(0, 1) for t in (q, k, v))
        trace[p + "attn.q"], trace[p + "attn.k"], trace[p + "attn.v"] = q, k, v
        merged = attend(trace, p, q, k, v, local if kinds[i] == "local" else causal, 1.0)
        out = lin(merged, a + "out_proj")
        trace[p + "attn.out"] = out
        mid = x + out
        trace[p + "mid"] = mid
        h2 = layer_norm(mid, w, m + "ln_2", eps)
        trace[p + "ln_2"] = h2
        up = lin(h2, m + "mlp.c_fc")
        act = gelu_tanh(up)
        down = lin(act, m + "mlp.c_proj")
        trace[p + "mlp.up"], trace[p + "mlp.act"], trace[p + "mlp.down"] = up, act, down
        x = mid + down
        trace[p + "out"] = x
    trace["ln_f"] = layer_norm(x, w, "transformer.ln_f", eps)
    trace["logits"] = trace["ln_f"] @ w["transformer.wte.weight"].T
    trace["next_probs"] = torch.softmax(trace["logits"], dim=-1)
    return trace


def bert_forward(w, cfg, tokens, types=None):
    """BertForPreTraining's / BertForMaskedLM's forward, no padding; `types` the token_type_ids (default all 0)."""
    T = len(tokens)
    D, H, eps = cfg["hidden_size"], cfg["num_attention_heads"], cfg["layer_norm_eps"]
    d = D // H
    everywhere = torch.ones(T, T, dtype=torch.bool)

    def lin(x, name):
        return x @ w[name + ".weight"].T + w[name + ".bias"]

    trace = {}
    e = "bert.embeddings."
    trace["embed"] = w[e + "word_embeddings.weight"][torch.tensor(tokens)]
    relative = cfg.get("position_embedding_type", "absolute") == "relative_key"
    types = types or [0] * T
    trace["segment.encoding"] = w[e + "token_type_embeddings.weight"][torch.tensor(types)]
    if relative:  # BertEmbeddings adds the absolute positions for "absolute" only
        trace["embed.sum"] = trace["embed"] + trace["segment.encoding"]
    else:
        trace["pos.encoding"] = w[e + "position_embeddings.weight"][:T]
        trace["embed.sum"] = trace["embed"] + trace["pos.encoding"] + trace["segment.encoding"]
    x = layer_norm(trace["embed.sum"], w, e + "LayerNorm", eps)
    trace["input"] = x
    for i in range(cfg["num_hidden_layers"]):
        p, m = f"layer.{i}.", f"bert.encoder.layer.{i}."
        a = m + "attention.self."
        q, k, v = lin(x, a + "query"), lin(x, a + "key"), lin(x, a + "value")
        trace[p + "attn.qkv"] = torch.cat((q, k, v), dim=1)
        q, k, v = (t.reshape(T, H, d).transpose(0, 1) for t in (q, k, v))
        trace[p + "attn.q"], trace[p + "attn.k"], trace[p + "attn.v"] = q, k, v
        bias = None
        if relative:  # BertSelfAttention: q_l · distance_embedding[l − r + M − 1], the sum then divided by √d
            M = cfg["max_position_embeddings"]
            distance = torch.arange(T)[:, None] - torch.arange(T)[None, :]
            table = w[a + "distance_embedding.weight"][distance + M - 1]  # [T, T, d]
            bias = torch.einsum("hld,lrd->hlr", q, table) / math.sqrt(d)
        out = lin(attend(trace, p, q, k, v, everywhere, 1 / math.sqrt(d), bias), m + "attention.output.dense")
        trace[p + "attn.out"] = out
        trace[p + "mid"] = x + out
        x1 = layer_norm(trace[p + "mid"], w, m + "attention.output.LayerNorm", eps)
        trace[p + "ln_1"] = x1
        up = lin(x1, m + "intermediate.dense")
        act = torch.nn.functional.gelu(up)
        down = lin(act, m + "output.dense")
        trace[p + "mlp.up"], trace[p + "mlp.act"], trace[p + "mlp.down"] = up, act, down
        trace[p + "resid"] = x1 + down
        x = layer_norm(trace[p + "resid"], w, m + "output.LayerNorm", eps)
        trace[p + "out"] = x
    trace["head.dense"] = lin(x, "cls.predictions.transform.dense")
    trace["head.act"] = torch.nn.functional.gelu(trace["head.dense"])
    trace["ln_f"] = layer_norm(trace["head.act"], w, "cls.predictions.transform.LayerNorm", eps)
    trace["logits"] = trace["ln_f"] @ w[e + "word_embeddings.weight"].T + w["cls.predictions.bias"]
    trace["next_probs"] = torch.softmax(trace["logits"], dim=-1)
    if "cls.seq_relationship.weight" in w:
        trace["pooled"] = torch.tanh(lin(x[:1], "bert.pooler.dense"))
        trace["nsp_logits"] = lin(trace["pooled"], "cls.seq_relationship")
    return trace


def t5_forward(w, cfg, source, decoder):
    """T5ForConditionalGeneration's forward with teacher forcing: the encoder on `source`, the decoder on `decoder`
    (already shifted right: it starts with decoder_start_token_id), no padding."""
    D, H, dk, eps = cfg["d_model"], cfg["num_heads"], cfg["d_kv"], cfg["layer_norm_epsilon"]
    buckets, distance = cfg["relative_attention_num_buckets"], cfg["relative_attention_max_distance"]
    gated = cfg["feed_forward_proj"].startswith("gated-")
    trace = {}

    def lin(x, name):
        return x @ w[name + ".weight"].T

    def heads(x):
        return x.reshape(x.shape[0], H, dk).transpose(0, 1)

    def position_bias(table, T, bidirectional):
        relative = torch.arange(T)[None, :] - torch.arange(T)[:, None]  # key - query
        return table[t5_bucket(relative, bidirectional, buckets, distance)].permute(2, 0, 1)

    def feed_forward(h, f, p):
        if gated:
            gate, up = lin(h, f + "DenseReluDense.wi_0"), lin(h, f + "DenseReluDense.wi_1")
            trace[p + "mlp.gate"], trace[p + "mlp.up"] = gate, up
            act = gelu_tanh(gate) * up
        else:
            up = lin(h, f + "DenseReluDense.wi")
            trace[p + "mlp.up"] = up
            act = torch.relu(up)
        trace[p + "mlp.act"] = act
        down = lin(act, f + "DenseReluDense.wo")
        trace[p + "mlp.down"] = down
        return down

    def stack(name, tokens, layers, z):
        T = len(tokens)
        short = "enc." if name == "encoder" else "dec."
        causal = name == "decoder"
        allowed = torch.tril(torch.ones(T, T, dtype=torch.bool)) if causal else torch.ones(T, T, dtype=torch.bool)
        x = w["shared.weight"][torch.tensor(tokens)]
        trace[short + "embed"], trace[short + "input"] = x, x
        bias = position_bias(w[f"{name}.block.0.layer.0.SelfAttention.relative_attention_bias.weight"], T, not causal)
        for i in range(layers):
            p, m = f"{short}layer.{i}.", f"{name}.block.{i}.layer."
            h = rms_norm(x, w[m + "0.layer_norm.weight"], eps)
            trace[p + "ln_1"] = h
            a = m + "0.SelfAttention."
            q, k, v = lin(h, a + "q"), lin(h, a + "k"), lin(h, a + "v")
            trace[p + "attn.qkv"] = torch.cat((q, k, v), dim=1)
            q, k, v = heads(q), heads(k), heads(v)
            trace[p + "attn.q"], trace[p + "attn.k"], trace[p + "attn.v"] = q, k, v
            trace[p + "attn.bias"] = bias
            scores = q @ k.transpose(1, 2)
            trace[p + "attn.scores"] = scores + bias
            masked = trace[p + "attn.scores"].masked_fill(~allowed, float("-inf"))
            trace[p + "attn.masked"] = masked
            probs = torch.softmax(masked, dim=-1)
            trace[p + "attn.probs"] = probs
            context = probs @ v
            trace[p + "attn.context"] = context
            merged = context.transpose(0, 1).reshape(T, H * dk)
            trace[p + "attn.merged"] = merged
            out = lin(merged, a + "o")
            trace[p + "attn.out"] = out
            x = x + out
            trace[p + "mid"] = x
            f = m + "1."
            if causal:
                c = p + "cross."
                hc = rms_norm(x, w[m + "1.layer_norm.weight"], eps)
                trace[p + "ln_cross"] = hc
                e = m + "1.EncDecAttention."
                cq, ck, cv = lin(hc, e + "q"), lin(z, e + "k"), lin(z, e + "v")
                trace[c + "query"], trace[c + "kv"] = cq, torch.cat((ck, cv), dim=1)
                cq, ck, cv = heads(cq), heads(ck), heads(cv)
                trace[c + "q"], trace[c + "k"], trace[c + "v"] = cq, ck, cv
                cs = cq @ ck.transpose(1, 2)
                trace[c + "scores"], trace[c + "masked"] = cs, cs
                cp = torch.softmax(cs, dim=-1)
                trace[c + "probs"] = cp
                cc = cp @ cv
                trace[c + "context"] = cc
                trace[c + "merged"] = cc.transpose(0, 1).reshape(T, H * dk)
                trace[c + "out"] = lin(trace[c + "merged"], e + "o")
                x = x + trace[c + "out"]
                trace[p + "mid_cross"] = x
                f = m + "2."
            h2 = rms_norm(x, w[f + "layer_norm.weight"], eps)
            trace[p + "ln_2"] = h2
            x = x + feed_forward(h2, f, p)
            trace[p + "out"] = x
        return x

    z = rms_norm(stack("encoder", source, cfg["num_layers"], None), w["encoder.final_layer_norm.weight"], eps)
    trace["enc.ln_f"] = z
    y = stack("decoder", decoder, cfg["num_decoder_layers"], z)
    trace["ln_f"] = rms_norm(y, w["decoder.final_layer_norm.weight"], eps)
    if cfg["tie_word_embeddings"]:
        trace["logits"] = (trace["ln_f"] * D ** -0.5) @ w["shared.weight"].T
    else:
        trace["logits"] = trace["ln_f"] @ w["lm_head.weight"].T
    trace["next_probs"] = torch.softmax(trace["logits"], dim=-1)
    return trace


def mixtral_experts(w, cfg, x, trace, p, m):
    """MixtralSparseMoeBlock: softmax router, top-k, the k weights renormalised, SwiGLU experts w2(silu(w1 x) * w3 x);
    Qwen3MoeSparseMoeBlock the same under mlp.gate and mlp.experts.{e}.{gate,up,down}_proj (norm_topk_prob true).
    Also the trace's routing diagnostics under the project's definitions (docs/trace-names.md): the top-1 expert,
    the capacity (T: nothing is dropped), Switch's balance E * sum f_i P_i and the z-loss."""
    qwen = cfg["model_type"] == "qwen3_moe"
    T, E, K = x.shape[0], cfg["num_experts" if qwen else "num_local_experts"], cfg["num_experts_per_tok"]
    b = m + ("mlp." if qwen else "block_sparse_moe.")
    names = ("gate_proj", "up_proj", "down_proj") if qwen else ("w1", "w3", "w2")
    logits = x @ w[b + "gate.weight"].T
    probs = torch.softmax(logits, dim=-1)
    top, choice = torch.topk(probs, K, dim=-1)
    gate = top / top.sum(dim=-1, keepdim=True)
    out = torch.zeros_like(x)
    for e in range(E):
        weight = (gate * (choice == e)).sum(dim=1, keepdim=True)
        ex = b + f"experts.{e}."
        gate_w, up_w, down_w = (w[ex + n + ".weight"] for n in names)
        y = (torch.nn.functional.silu(x @ gate_w.T) * (x @ up_w.T)) @ down_w.T
        out = out + weight * y
    trace_routing(trace, p, logits, probs, choice, gate)
    return out


def trace_routing(trace, p, logits, probs, choice, gate):
    """A dropless router's tensors under the project's names (docs/trace-names.md): the top-1 expert, the capacity
    (T: nothing is dropped), Switch's balance E * sum f_i P_i and the z-loss."""
    T, E = logits.shape
    f = torch.nn.functional.one_hot(probs.argmax(dim=-1), E).to(probs.dtype).mean(dim=0)
    trace.update({p + "router.logits": logits, p + "router.probs": probs, p + "router.choice": choice.double(),
                  p + "router.gate": gate, p + "router.expert": choice[:, 0].double(),
                  p + "router.capacity": torch.tensor(float(T)),
                  p + "router.aux_loss": E * (f * probs.mean(dim=0)).sum(),
                  p + "router.z_loss": (torch.logsumexp(logits, dim=-1) ** 2).mean()})


def yarn_frequencies(cfg, d):
    """_compute_yarn_parameters (transformers 4.55, gpt-oss's release) in float32: θ_j blended with θ_j / factor by a
    linear ramp between the correction dimensions of beta_fast and beta_slow turns over the original context; returns
    the frequencies and the attention factor (0.1 ln factor + 1 unless given)."""
    s = cfg["rope_scaling"]
    base, factor = cfg["rope_theta"], s["factor"]
    original = s.get("original_max_position_embeddings") or cfg["max_position_embeddings"]
    attention_factor = s.get("attention_factor") or (0.1 * math.log(factor) + 1.0)
    beta_fast, beta_slow = s.get("beta_fast") or 32, s.get("beta_slow") or 1

    def correction(rotations):
        return (d * math.log(original / (rotations * 2 * math.pi))) / (2 * math.log(base))

    low, high = correction(beta_fast), correction(beta_slow)
    if s.get("truncate", True):
        low, high = math.floor(low), math.ceil(high)
    low, high = max(low, 0), min(high, d - 1)
    if low == high:
        high += 0.001
    ramp = torch.clamp((torch.arange(d // 2, dtype=torch.float32) - low) / (high - low), 0, 1)
    pos_freqs = base ** (torch.arange(0, d, 2).to(dtype=torch.float) / d)
    kept = 1 - ramp
    inv_freq = (1.0 / (factor * pos_freqs)) * (1 - kept) + (1.0 / pos_freqs) * kept
    return inv_freq, attention_factor


def gpt_oss_forward(w, cfg, tokens):
    """GptOssForCausalLM's forward (eager attention with sinks), and the trace's routing diagnostics as
    mixtral_experts defines them."""
    T = len(tokens)
    D, H, Hkv, d, eps = (cfg["hidden_size"], cfg["num_attention_heads"], cfg["num_key_value_heads"], cfg["head_dim"],
                         cfg["rms_norm_eps"])
    E, K, F, limit = cfg["num_local_experts"], cfg["num_experts_per_tok"], cfg["intermediate_size"], cfg["swiglu_limit"]
    inv_freq, amplitude = yarn_frequencies(cfg, d)
    freqs = torch.arange(T, dtype=torch.float32)[:, None] * inv_freq[None, :]
    emb = torch.cat((freqs, freqs), dim=-1)  # _apply_rotary_emb's halves, as rotate_half
    cos, sin = (emb.cos() * amplitude).to(torch.float64), (emb.sin() * amplitude).to(torch.float64)
    causal = torch.tril(torch.ones(T, T, dtype=torch.bool))
    window = cfg["sliding_window"]
    in_window = causal & (torch.arange(T)[None, :] > torch.arange(T)[:, None] - window)

    def lin(x, name):
        return x @ w[name + ".weight"].T + w[name + ".bias"]

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
        k = k.reshape(T, Hkv, d).transpose(0, 1).repeat_interleave(H // Hkv, dim=0)
        v = v.reshape(T, Hkv, d).transpose(0, 1).repeat_interleave(H // Hkv, dim=0)
        trace[p + "attn.q"], trace[p + "attn.k"], trace[p + "attn.v"] = q, k, v
        q, k = q * cos + rotate_half(q) * sin, k * cos + rotate_half(k) * sin
        trace[p + "attn.q_rot"], trace[p + "attn.k_rot"] = q, k
        allowed = in_window if cfg["layer_types"][i] == "sliding_attention" else causal
        merged = attend(trace, p, q, k, v, allowed, 1 / math.sqrt(d), sinks=w[m + "self_attn.sinks"])
        out = lin(merged, m + "self_attn.o_proj")
        trace[p + "attn.out"] = out
        mid = x + out
        trace[p + "mid"] = mid
        h2 = rms_norm(mid, w[m + "post_attention_layernorm.weight"], eps)
        trace[p + "ln_2"] = h2
        # GptOssTopKRouter: top-k of the logits, softmax over those k (the renormalised probabilities)
        logits = lin(h2, m + "mlp.router")
        probs = torch.softmax(logits, dim=-1)
        top, choice = torch.topk(logits, K, dim=-1)
        gate = torch.softmax(top, dim=1)
        down = torch.zeros_like(h2)
        for e in range(E):  # GptOssExperts in training mode: each expert on the tokens routed to it
            weight = (gate * (choice == e)).sum(dim=1, keepdim=True)
            gate_up = h2 @ w[m + "mlp.experts.gate_up_proj"][e] + w[m + "mlp.experts.gate_up_proj_bias"][e]
            g, u = gate_up[..., ::2].clamp(min=None, max=limit), gate_up[..., 1::2].clamp(min=-limit, max=limit)
            glu = g * torch.sigmoid(g * 1.702)
            y = ((u + 1) * glu) @ w[m + "mlp.experts.down_proj"][e] + w[m + "mlp.experts.down_proj_bias"][e]
            down = down + weight * y
        trace_routing(trace, p, logits, probs, choice, gate)
        trace[p + "mlp.down"] = down
        x = mid + down
        trace[p + "out"] = x
    trace["ln_f"] = rms_norm(x, w["model.norm.weight"], eps)
    trace["logits"] = trace["ln_f"] @ w["lm_head.weight"].T
    trace["next_probs"] = torch.softmax(trace["logits"], dim=-1)
    return trace


def gemma2_forward(w, cfg, tokens):
    """Gemma2ForCausalLM's forward (eager attention), and Gemma3ForCausalLM's (gemma3_text)."""
    T = len(tokens)
    gemma3 = cfg["model_type"] == "gemma3_text"
    D, H, Hkv = cfg["hidden_size"], cfg["num_attention_heads"], cfg["num_key_value_heads"]
    d, eps = cfg["head_dim"], cfg["rms_norm_eps"]
    window, attn_cap, final_cap = cfg["sliding_window"], cfg["attn_logit_softcapping"], cfg["final_logit_softcapping"]
    if gemma3:  # Gemma3TextConfig: layer_types from sliding_window_pattern; a global layer every pattern-th
        pattern = cfg["sliding_window_pattern"]
        sliding = [(i + 1) % pattern != 0 for i in range(cfg["num_hidden_layers"])]
    else:  # Gemma2Attention: sliding unless layer_idx % 2
        sliding = [i % 2 == 0 for i in range(cfg["num_hidden_layers"])]

    def rope(local):  # Gemma3RotaryEmbedding: rope_local_base_freq without scaling on the local layers
        params = dict(cfg, rope_theta=cfg["rope_local_base_freq"], rope_scaling=None) if local else cfg
        freqs = torch.arange(T, dtype=torch.float32)[:, None] * inverse_frequencies(params, d)[None, :]
        emb = torch.cat((freqs, freqs), dim=-1)
        return emb.cos().to(torch.float64), emb.sin().to(torch.float64)
    causal = torch.tril(torch.ones(T, T, dtype=torch.bool))
    # Gemma2DecoderLayer's sliding mask: key j is masked when j <= i - window
    in_window = causal & (torch.arange(T)[None, :] > torch.arange(T)[:, None] - window)

    def norm(x, name):  # Gemma2RMSNorm: x / sqrt(mean(x^2) + eps) * (1 + w)
        return (x / torch.sqrt(x.pow(2).mean(-1, keepdim=True) + eps)) * (1.0 + w[name + ".weight"])

    def lin(x, name):
        return x @ w[name + ".weight"].T

    def softcap(x, cap):
        return cap * torch.tanh(x / cap)

    trace = {}
    x = w["model.embed_tokens.weight"][torch.tensor(tokens)]
    x = x * torch.tensor(D**0.5, dtype=torch.float32).to(x.dtype)  # Gemma2Model's normalizer, in the weights' dtype
    trace["embed"] = x
    trace["input"] = x
    for i in range(cfg["num_hidden_layers"]):
        p, m = f"layer.{i}.", f"model.layers.{i}."
        h = norm(x, m + "input_layernorm")
        trace[p + "ln_1"] = h
        if cfg["model_type"] == "phi3":  # Phi3Attention: qkv_proj's columns [q | k | v]
            qkv = lin(h, m + "self_attn.qkv_proj")
            q, k, v = qkv[:, :H * d], qkv[:, H * d:(H + Hkv) * d], qkv[:, (H + Hkv) * d:]
        else:
            q, k, v = lin(h, m + "self_attn.q_proj"), lin(h, m + "self_attn.k_proj"), lin(h, m + "self_attn.v_proj")
        trace[p + "attn.qkv"] = torch.cat((q, k, v), dim=1)
        q = q.reshape(T, H, d).transpose(0, 1)
        k = k.reshape(T, Hkv, d).transpose(0, 1).repeat_interleave(H // Hkv, dim=0)
        v = v.reshape(T, Hkv, d).transpose(0, 1).repeat_interleave(H // Hkv, dim=0)
        trace[p + "attn.q"], trace[p + "attn.k"], trace[p + "attn.v"] = q, k, v
        if gemma3:  # Gemma3Attention: q_norm and k_norm (1 + w) on each head, before RoPE
            q, k = norm(q, m + "self_attn.q_norm"), norm(k, m + "self_attn.k_norm")
            trace[p + "attn.q_norm"], trace[p + "attn.k_norm"] = q, k
        cos, sin = rope(gemma3 and sliding[i])
        q = q * cos + rotate_half(q) * sin
        k = k * cos + rotate_half(k) * sin
        trace[p + "attn.q_rot"], trace[p + "attn.k_rot"] = q, k
        allowed = in_window if sliding[i] else causal
        merged = attend(trace, p, q, k, v, allowed, cfg["query_pre_attn_scalar"] ** -0.5, cap=attn_cap)
        out = lin(merged, m + "self_attn.o_proj")
        trace[p + "attn.out"] = out
        out = norm(out, m + "post_attention_layernorm")
        trace[p + "attn.out_norm"] = out
        mid = x + out
        trace[p + "mid"] = mid
        h2 = norm(mid, m + "pre_feedforward_layernorm")
        trace[p + "ln_2"] = h2
        gate, up = lin(h2, m + "mlp.gate_proj"), lin(h2, m + "mlp.up_proj")
        trace[p + "mlp.gate"], trace[p + "mlp.up"] = gate, up
        act = gelu_tanh(gate) * up
        trace[p + "mlp.act"] = act
        down = lin(act, m + "mlp.down_proj")
        trace[p + "mlp.down"] = down
        down = norm(down, m + "post_feedforward_layernorm")
        trace[p + "mlp.out_norm"] = down
        x = mid + down
        trace[p + "out"] = x
    trace["ln_f"] = norm(x, "model.norm")
    logits = trace["ln_f"] @ w["model.embed_tokens.weight"].T
    if final_cap is not None:
        trace["head.logits"] = logits
        logits = softcap(logits, final_cap)
    trace["logits"] = logits
    trace["next_probs"] = torch.softmax(trace["logits"], dim=-1)
    return trace


def forward(w, cfg, tokens):
    if cfg["model_type"] == "gpt_oss":
        return gpt_oss_forward(w, cfg, tokens)
    if cfg["model_type"] in ("gemma2", "gemma3_text"):
        return gemma2_forward(w, cfg, tokens)
    if cfg["model_type"] == "bert":
        return bert_forward(w, cfg, tokens)
    if cfg["model_type"] == "gpt_neox":
        return neox_forward(w, cfg, tokens)
    if cfg["model_type"] == "gpt_neo":
        return neo_forward(w, cfg, tokens)
    T = len(tokens)
    D, H, Hkv = cfg["hidden_size"], cfg["num_attention_heads"], cfg["num_key_value_heads"]
    d, eps = cfg.get("head_dim") or D // H, cfg["rms_norm_eps"]
    window = cfg.get("sliding_window") if cfg["model_type"] in ("mistral", "phi3") else None
    windowed = set(range(cfg["num_hidden_layers"])) if window else set()
    if cfg["model_type"] in ("qwen2", "qwen3") and cfg.get("use_sliding_window"):
        # Qwen2Config: layer_types, else "sliding_attention" for the layers from max_window_layers on
        window = cfg["sliding_window"]
        types = cfg.get("layer_types") or ["sliding_attention" if i >= cfg["max_window_layers"] else "full_attention"
                                           for i in range(cfg["num_hidden_layers"])]
        windowed = {i for i, kind in enumerate(types) if kind == "sliding_attention"}
    turns = set(range(cfg["num_hidden_layers"]))
    if cfg["model_type"] == "smollm3":  # SmolLM3Config: no_rope_layers[i] == 0 is a NoPE layer; with
        # use_sliding_window, layer_types or else the NoPE layers are "sliding_attention"
        flags = cfg.get("no_rope_layers") or [int((i + 1) % cfg.get("no_rope_layer_interval", 4) != 0)
                                              for i in range(cfg["num_hidden_layers"])]
        turns = {i for i in range(cfg["num_hidden_layers"]) if flags[i]}
        if cfg.get("use_sliding_window") and cfg.get("sliding_window"):
            window = cfg["sliding_window"]
            types = cfg.get("layer_types") or ["full_attention" if flags[i] else "sliding_attention"
                                               for i in range(cfg["num_hidden_layers"])]
            windowed = {i for i, kind in enumerate(types) if kind == "sliding_attention"}
    # Phi3RotaryEmbedding: the first int(d · partial_rotary_factor) dimensions turn; LongRoPE multiplies cos and sin by
    # √(1 + ln s / ln L), s = max_position_embeddings / L
    rd = int(d * cfg.get("partial_rotary_factor", 1.0))
    freqs = torch.arange(T, dtype=torch.float32)[:, None] * inverse_frequencies(cfg, rd, T)[None, :]  # float32, as HF
    emb = torch.cat((freqs, freqs), dim=-1)
    amplitude = 1.0
    if (cfg.get("rope_scaling") or {}).get("type") == "longrope":
        stretch = cfg["max_position_embeddings"] / cfg["original_max_position_embeddings"]
        amplitude = math.sqrt(1 + math.log(stretch) / math.log(cfg["original_max_position_embeddings"]))
    cos, sin = (emb.cos() * amplitude).to(torch.float64), (emb.sin() * amplitude).to(torch.float64)
    causal = torch.tril(torch.ones(T, T, dtype=torch.bool))
    in_window = causal & (torch.arange(T)[None, :] > torch.arange(T)[:, None] - window) if window else causal

    def lin(x, name):
        y = x @ w[name + ".weight"].T
        return y + w[name + ".bias"] if name + ".bias" in w else y

    trace = {}
    x = w["model.embed_tokens.weight"][torch.tensor(tokens)]
    trace["embed"] = x
    trace["input"] = x
    for i in range(cfg["num_hidden_layers"]):
        p, m = f"layer.{i}.", f"model.layers.{i}."
        olmo2 = cfg["model_type"] == "olmo2"  # Olmo2DecoderLayer: the sub-layers read x; their outputs are normalised
        if olmo2:
            h = x
        else:
            h = rms_norm(x, w[m + "input_layernorm.weight"], eps)
            trace[p + "ln_1"] = h
        if cfg["model_type"] == "phi3":  # Phi3Attention: qkv_proj's columns [q | k | v]
            qkv = lin(h, m + "self_attn.qkv_proj")
            q, k, v = qkv[:, :H * d], qkv[:, H * d:(H + Hkv) * d], qkv[:, (H + Hkv) * d:]
        else:
            q, k, v = lin(h, m + "self_attn.q_proj"), lin(h, m + "self_attn.k_proj"), lin(h, m + "self_attn.v_proj")
        trace[p + "attn.qkv"] = torch.cat((q, k, v), dim=1)
        if olmo2:  # Olmo2Attention: q_norm and k_norm over the whole projections, before the split and RoPE
            q_norm = rms_norm(q, w[m + "self_attn.q_norm.weight"], eps).reshape(T, H, d).transpose(0, 1)
            k_norm = rms_norm(k, w[m + "self_attn.k_norm.weight"], eps).reshape(T, Hkv, d).transpose(0, 1)
            k_norm = k_norm.repeat_interleave(H // Hkv, dim=0)
        q = q.reshape(T, H, d).transpose(0, 1)
        k = k.reshape(T, Hkv, d).transpose(0, 1)
        v = v.reshape(T, Hkv, d).transpose(0, 1)
        if cfg["model_type"] in ("qwen3", "qwen3_moe"):  # Qwen3Attention: q_norm and k_norm on each head, before
            # repeat_kv and RoPE
            q_norm = rms_norm(q, w[m + "self_attn.q_norm.weight"], eps)
            k_norm = rms_norm(k, w[m + "self_attn.k_norm.weight"], eps).repeat_interleave(H // Hkv, dim=0)
        k = k.repeat_interleave(H // Hkv, dim=0)  # repeat_kv: head h reads K/V head h // (H / Hkv)
        v = v.repeat_interleave(H // Hkv, dim=0)
        trace[p + "attn.q"], trace[p + "attn.k"], trace[p + "attn.v"] = q, k, v
        if cfg["model_type"] in ("qwen3", "qwen3_moe", "olmo2"):
            trace[p + "attn.q_norm"], trace[p + "attn.k_norm"] = q_norm, k_norm
            q, k = q_norm, k_norm
        if i in turns:  # SmolLM3Attention: a NoPE layer's q and k go to the scores unturned; Phi-3's apply_rotary_pos_emb
            # turns the first rd dimensions and passes the rest
            q = torch.cat((q[..., :rd] * cos + rotate_half(q[..., :rd]) * sin, q[..., rd:]), dim=-1)
            k = torch.cat((k[..., :rd] * cos + rotate_half(k[..., :rd]) * sin, k[..., rd:]), dim=-1)
            trace[p + "attn.q_rot"], trace[p + "attn.k_rot"] = q, k
        allowed = in_window if i in windowed else causal
        out = lin(attend(trace, p, q, k, v, allowed, 1 / math.sqrt(d)), m + "self_attn.o_proj")
        trace[p + "attn.out"] = out
        if olmo2:
            out = rms_norm(out, w[m + "post_attention_layernorm.weight"], eps)
            trace[p + "attn.out_norm"] = out
        mid = x + out
        trace[p + "mid"] = mid
        if olmo2:
            h2 = mid
        else:
            h2 = rms_norm(mid, w[m + "post_attention_layernorm.weight"], eps)
            trace[p + "ln_2"] = h2
        if cfg["model_type"] in ("mixtral", "qwen3_moe"):
            down = mixtral_experts(w, cfg, h2, trace, p, m)
        else:
            if cfg["model_type"] == "phi3":  # Phi3MLP: gate_up_proj's output chunked in two, the gate first
                gate, up = lin(h2, m + "mlp.gate_up_proj").chunk(2, dim=-1)
            else:
                gate, up = lin(h2, m + "mlp.gate_proj"), lin(h2, m + "mlp.up_proj")
            trace[p + "mlp.gate"], trace[p + "mlp.up"] = gate, up
            act = torch.nn.functional.silu(gate) * up
            trace[p + "mlp.act"] = act
            down = lin(act, m + "mlp.down_proj")
        trace[p + "mlp.down"] = down
        if olmo2:
            down = rms_norm(down, w[m + "post_feedforward_layernorm.weight"], eps)
            trace[p + "mlp.out_norm"] = down
        x = mid + down
        trace[p + "out"] = x
    trace["ln_f"] = rms_norm(x, w["model.norm.weight"], eps)
    head = w["model.embed_tokens.weight"] if cfg["tie_word_embeddings"] else w["lm_head.weight"]
    trace["logits"] = trace["ln_f"] @ head.T
    trace["next_probs"] = torch.softmax(trace["logits"], dim=-1)
    return trace


# ---------------------------------------------------------------------------------------------- models

def make_multimodal(name, spec):
    """A text model's checkpoint and reference wrapped as Gemma3ForConditionalGeneration saves it (before transformers
    4.52): config.json with the text model as text_config, its weights under language_model.model., a vision tower."""
    inner = MODELS[spec["multimodal"]]
    cfg = inner["config"]
    directory, ref = os.path.join(DATA, name), os.path.join(DATA, name + "_ref")
    fresh_dir(directory)
    fresh_dir(ref)
    outer = dict(model_type="gemma3", architectures=["Gemma3ForConditionalGeneration"], text_config=cfg,
                 vision_config=dict(model_type="siglip_vision_model", hidden_size=8, image_size=16, patch_size=8,
                                    num_hidden_layers=1, num_attention_heads=2, intermediate_size=16),
                 mm_tokens_per_image=4, image_token_index=63, boi_token_index=61, eoi_token_index=62)
    write_text(os.path.join(directory, "config.json"), json.dumps(outer, indent=2) + "\n")
    weights = random_weights(cfg, inner["seed"])
    g = torch.Generator().manual_seed(inner["seed"] + 1000)
    stored = {"language_model." + n: t for n, t in weights.items()}
    stored["vision_tower.vision_model.embeddings.patch_embedding.weight"] = torch.randn(8, 3, 8, 8, generator=g)
    stored["multi_modal_projector.mm_input_projection_weight"] = torch.randn(8, cfg["hidden_size"], generator=g)
    write_checkpoint(directory, stored, inner["dtype"], inner["shards"])
    rounded = {n: stored_bytes(t, inner["dtype"])[1] for n, t in weights.items()}
    save_trace(ref, forward(rounded, cfg, TOKENS))
    write_text(os.path.join(ref, "tokens.json"), json.dumps(TOKENS) + "\n")


def make(name, spec):
    if spec.get("multimodal"):
        return make_multimodal(name, spec)
    cfg = spec["config"]
    directory, ref = os.path.join(DATA, name), os.path.join(DATA, name + "_ref")
    fresh_dir(directory)
    fresh_dir(ref)
    if cfg["model_type"] == "bert":
        weights = bert_weights(cfg, spec["seed"], spec["nsp"])
    elif cfg["model_type"] == "t5":
        weights = t5_weights(cfg, spec["seed"])
    else:
        weights = random_weights(cfg, spec["seed"])
    write_text(os.path.join(directory, "config.json"), json.dumps(cfg, indent=2) + "\n")
    stored = dict(weights)
    if spec.get("legacy"):  # the older names, and the tied decoder stored as a copy
        stored = {n.replace("LayerNorm.weight", "LayerNorm.gamma").replace("LayerNorm.bias", "LayerNorm.beta"): t
                  for n, t in weights.items()}
        stored["cls.predictions.decoder.weight"] = weights["bert.embeddings.word_embeddings.weight"]
    if spec.get("mxfp4"):  # the experts as MXFP4 blocks, and as transformers decodes them for the forward
        g = torch.Generator().manual_seed(spec["seed"] + 1000)
        for name in [n for n in weights if n.endswith(("experts.gate_up_proj", "experts.down_proj"))]:
            blocks, scales = mxfp4_quantize(weights[name], g)
            del stored[name]
            stored[name + "_blocks"], stored[name + "_scales"] = blocks, scales
            weights[name] = convert_moe_packed_tensors(blocks, scales).to(torch.float32)
            save_trace(ref, {"mxfp4." + name[len("model."):]: weights[name]})
    write_checkpoint(directory, stored, spec["dtype"], spec["shards"])
    stored = {n: stored_bytes(t, spec["dtype"])[1] for n, t in weights.items()}
    if cfg["model_type"] == "t5":
        save_trace(ref, t5_forward(stored, cfg, T5_SOURCE, T5_DECODER))
        write_text(os.path.join(ref, "input.json"), json.dumps({"source": T5_SOURCE, "tokens": T5_DECODER}) + "\n")
        return
    save_trace(ref, forward(stored, cfg, TOKENS))
    write_text(os.path.join(ref, "tokens.json"), json.dumps(TOKENS) + "\n")


GRAD_MODELS = ("llama_tiny", "llama_hd_tiny", "qwen2_tiny", "qwen3_tiny", "olmo2_tiny", "gemma2_tiny", "gemma3_tiny", "smollm3_tiny",
               "phi3_tiny", "phi3_long_tiny", "qwen3_moe_tiny", "gpt_oss_tiny", "mistral_tiny", "mixtral_tiny", "neox_tiny", "neox_seq_tiny",
               "neo_tiny", "bert_tiny", "bert_mlm_tiny", "bert_rel_tiny", "t5_tiny", "t5v11_tiny")
PREFIXES = ("model.", "bert.", "gpt_neox.", "transformer.")  # the engine names parameters without them
TARGETS = TOKENS[1:] + [-1]  # the next token at each position; the last has none
MLM_TARGETS = [-1, 17, -1, 8, -1, -1, 63, -1]  # BERT: the original token at a few chosen positions


def make_grads(name, spec, pair=False):
    """Autograd through the same forward, in float64 from the weights as stored; `pair`: BERT on BERT_PAIR."""
    cfg = spec["config"]
    directory = os.path.join(DATA, name + ("_pair_grads" if pair else "_grads"))
    fresh_dir(directory)
    bert, t5 = cfg["model_type"] == "bert", cfg["model_type"] == "t5"
    weights = bert_weights(cfg, spec["seed"], spec["nsp"]) if bert else t5_weights(cfg, spec["seed"]) if t5 \
        else random_weights(cfg, spec["seed"])
    targets = MLM_TARGETS if bert else T5_DECODER[1:] + [-1] if t5 else TARGETS
    tokens = BERT_PAIR if pair else T5_DECODER if t5 else TOKENS
    leaves = {n: stored_bytes(t, spec["dtype"])[1].clone().requires_grad_(True) for n, t in weights.items()}
    with torch.enable_grad():
        if pair:
            logits = bert_forward(leaves, cfg, tokens, BERT_PAIR_TYPES)["logits"]
        elif t5:
            logits = t5_forward(leaves, cfg, T5_SOURCE, T5_DECODER)["logits"]
        else:
            logits = forward(leaves, cfg, tokens)["logits"]
        loss = torch.nn.functional.cross_entropy(logits, torch.tensor(targets), ignore_index=-1)
        loss.backward()
    np.save(os.path.join(directory, "loss.npy"), np.array(loss.item(), dtype=np.float32))
    written.append(os.path.join(directory, "loss.npy"))
    for n, t in leaves.items():
        engine_name = next((n[len(p):] for p in PREFIXES if n.startswith(p)), n)
        path = os.path.join(directory, "grad." + engine_name + ".npy")
        grad = t.grad if t.grad is not None else torch.zeros_like(t)  # the NSP head: not in the masked-LM loss
        np.save(path, grad.to(torch.float32).numpy().copy(order="C"))
        written.append(path)
    extra = {"sep": 3} if pair else {"source": T5_SOURCE} if t5 else {}
    write_text(os.path.join(directory, "input.json"),
               json.dumps({"tokens": tokens, "padding": [], "targets": targets, **extra}) + "\n")


BERT_PAIR = [2, 17, 42, 3, 25, 63, 11, 3]  # [CLS] A [SEP] B [SEP], with [CLS] = 2 and [SEP] = 3
BERT_PAIR_TYPES = [0, 0, 0, 0, 1, 1, 1, 1]  # as BertTokenizer gives a pair: B and its [SEP] are type 1


def make_bert_pair():
    """bert_tiny on a pair of segments: bert_tiny_pair_ref/ with input.json {"tokens", "sep", "types"}."""
    spec = MODELS["bert_tiny"]
    ref = os.path.join(DATA, "bert_tiny_pair_ref")
    fresh_dir(ref)
    weights = bert_weights(spec["config"], spec["seed"], spec["nsp"])
    stored = {n: stored_bytes(t, spec["dtype"])[1] for n, t in weights.items()}
    save_trace(ref, bert_forward(stored, spec["config"], BERT_PAIR, BERT_PAIR_TYPES))
    write_text(os.path.join(ref, "input.json"),
               json.dumps({"tokens": BERT_PAIR, "sep": 3, "types": BERT_PAIR_TYPES}) + "\n")


def main():
    """Every model, or only those named on the command line (their checkpoint, reference and gradients)."""
    torch.set_grad_enabled(False)
    only = set(sys.argv[1:])
    unknown = only - set(MODELS)
    if unknown:
        sys.exit(f"not a model of this script: {', '.join(sorted(unknown))} (it makes {', '.join(MODELS)})")
    for name, spec in MODELS.items():
        if not only or name in only:
            make(name, spec)
    if not only or "bert_tiny" in only:
        make_bert_pair()
    for name in GRAD_MODELS:
        if not only or name in only:
            make_grads(name, MODELS[name])
    if not only or "bert_tiny" in only:
        make_grads("bert_tiny", MODELS["bert_tiny"], pair=True)
    print(f"wrote {len(written)} files under {DATA}")


if __name__ == "__main__":
    main()
