#pragma once

#include "model/modelconfig.h"
#include "trace/names.h"

#include <map>
#include <string>

// Where each parameter lives in a family's files: Hugging Face's module names, without the prefix its …ForCausalLM
// class adds ("model.", "transformer."). The loader, the saver and the backward pass all ask here, so a family's
// names are written once (docs/architecture.md, "Adding a family"). A module's tensors are its name + ".weight" and
// ".bias"; the few parameters that are tensors of their own (alpha_logit, span_fraction) are the name itself.
namespace atlas {

// The model's parameters outside its blocks.
enum class ModelPart {
    Embedding, // the token embedding (GPT-2's wte)
    Positions, // learned absolute positions: wpe, embeddings.position_embeddings
    TokenTypes, // BERT's segment embeddings
    EmbeddingNorm, // BERT's LayerNorm after the embeddings
    RelativeBias, // GPT-2-layout models' shared T5-style relative position bias
    FinalNorm, // of the stack asked for: ln_f, norm, final_layer_norm, encoder.ln_f …
    OutputHead, // an untied output matrix: lm_head, embed_out
    MlmTransform, // BERT's masked-LM head: dense, LayerNorm, then the tied embedding and a bias
    MlmNorm,
    MlmOutput,
    Pooler, // BERT's next-sentence head: the pooler and the classifier
    NextSentence,
    Halting, // adaptive computation time's halting unit, h = σ(w · X + b) (ModelConfig::act)
};

// A block's parameters, by what they do.
enum class BlockPart {
    NormAttention, // the norm before self-attention (after it in BERT's post-LN blocks)
    NormCross, // before cross-attention (a decoder block of an encoder–decoder)
    NormFfn, // before the feed-forward (after it in BERT)
    Q,
    K,
    V,
    Qkv, // the fused projection: GPT-2's c_attn, GPT-NeoX's query_key_value, Phi-3's qkv_proj
    Out,
    CrossQ,
    CrossK,
    CrossV,
    CrossKv, // GPT-2 layout's fused cross-attention keys and values
    CrossOut,
    Up, // the feed-forward's first matrix (GPT-2's c_fc)
    Down, // its second (c_proj)
    Gate, // the gated feed-forward's gate (SwiGLU, GeGLU); Phi-3's Gate and Up are the halves of gate_up_proj
    Router, // a mixture-of-experts layer's router
    RelativeKey, // Shaw et al.'s relative key table
    RelativeBias, // T5's relative attention bias, in block 0 of each stack
    AlphaLogit, // entmax's learned α per head
    SpanFraction, // adaptive span's learned span per head
    SortFc, // Sparse Sinkhorn's sorting network
    SortProj,
    QNorm, // QK-norm (Qwen3, OLMo 2): RMSNorm over the queries, and the keys, before RoPE
    KNorm,
    NormAttentionOut, // the norm of the attention's output before its residual add (OLMo 2)
    NormFfnOut, // the norm of the feed-forward's output before its residual add
    Sinks, // gpt-oss's learned sink logit per head (self_attn.sinks)
    ExpertsGateUp, // gpt-oss's experts stacked: gate_up_proj [E, D, 2F] (gate and up interleaved) and its bias [E, 2F]
    ExpertsDown, // down_proj [E, F, D] and its bias [E, D]
};
constexpr size_t kBlockPartCount = static_cast<size_t>(BlockPart::ExpertsDown) + 1;

// Whether `part` is a norm (its tensors are γ and, for LayerNorm, β): one of a block's, or the model's final norm,
// BERT's embedding norm and its masked-LM head's.
bool isNormPart(BlockPart part);
bool isNormPart(ModelPart part);

std::string modelParameter(const ModelConfig &c, ModelPart part, const names::Stack &stack = names::kOnlyStack);
// Block `layer` of `stack`: blockParameter(llama, kOnlyStack, 3, BlockPart::Q) == "layers.3.self_attn.q_proj".
std::string blockParameter(const ModelConfig &c, const names::Stack &stack, int layer, BlockPart part);
// Expert `expert` of block `layer`'s mixture (Up, Down, Gate): GPT-2 layout's "h.3.mlp.experts.2.c_fc", Mixtral's
// "layers.3.block_sparse_moe.experts.2.w3".
std::string expertParameter(const ModelConfig &c, int layer, int expert, BlockPart part);

// The prefix the family's …ForCausalLM (…ForMaskedLM) class adds to every name but the output heads'.
std::string modelPrefix(Family family);

// The same parameters in a GGUF file (llama.cpp's names, gguf-py's TENSOR_NAMES). A part has one name whatever the
// family: the norm before the feed-forward is ffn_norm (Llama's post_attention_layernorm, Gemma's
// pre_feedforward_layernorm), the norms of a sub-layer's output post_attention_norm and post_ffw_norm (Gemma's,
// OLMo 2's). Where the layout differs (Q and K permuted for the llama architecture's RoPE, Gemma's norms holding
// 1 + w), the names do not say so: the GGUF reader does.
//
// llama.cpp's architecture for the config's model type (general.architecture): "llama" (Llama, Mistral, Mixtral),
// "qwen2", "qwen3", "qwen3moe", "gemma2", "gemma3", "phi3", "olmo2", "smollm3", "gpt2", "gptneox" (also GPT-2's layout
// with RoPE, which llama.cpp's gpt2 cannot hold), "t5"; "" for the families read from Hugging Face files only (GPT-Neo,
// BERT).
std::string ggufArchitecture(const ModelConfig &c);
// "token_embd", "position_embd", "output_norm", "output"; T5's "enc.output_norm" and "dec.output_norm".
std::string ggufModelParameter(const ModelConfig &c, ModelPart part, const names::Stack &stack = names::kOnlyStack);
// "blk.3.attn_q", for each part the family's Hugging Face names have (blockParameter). Phi-3's Gate and Up are the
// halves of ffn_up, as of gate_up_proj. T5's blocks are "enc.blk.3.attn_q" and "dec.blk.3.cross_attn_q" by `stack`.
std::string ggufBlockParameter(
    const ModelConfig &c, int layer, BlockPart part, const names::Stack &stack = names::kOnlyStack);
// A mixture's experts, stacked in one tensor per matrix (expert e is its slice e): "blk.3.ffn_up_exps".
std::string ggufExpertsParameter(const ModelConfig &c, int layer, BlockPart part);
// Every parameter of a model of `c` (Model::parameters()' names, ".weight" and ".bias") with its GGUF name; an expert's
// matrices map to their stack's. Throws for a family without GGUF names.
std::map<std::string, std::string> ggufParameterNames(const ModelConfig &c);

} // namespace atlas
