#pragma once

#include "model/adaptivecomputation.h"
#include "model/fourierlayers.h"
#include "model/funnel.h"
#include "model/sharedblocks.h"
#include "model/sinkhorn.h"

#include <algorithm>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace atlas {

// Where a block's norms sit: before each sub-layer (GPT-2, Llama), after each residual sum (BERT, the original
// Transformer), on each sub-layer's output before its add, with none before (OLMo 2), or both before each sub-layer
// and on its output (Gemma 2's and 3's "sandwich").
enum class LayerNormPlacement { Pre, Post, AfterSublayer, Sandwich };
// QK-norm: an RMSNorm of the queries and of the keys before RoPE, over each head's d dimensions (Qwen3, Gemma 3) or
// over the whole projection, every head of a position together (OLMo 2).
enum class QkNorm { None, Heads, Projections };
// QuickGelu is u σ(1.702 u) (Hugging Face's quick_gelu), the gate's activation in gpt-oss's clamped SwiGLU.
enum class Activation { GeluTanh, GeluErf, Relu, Silu, QuickGelu };
// The normalisation of every sub-layer: LayerNorm (γ ⊙ (x − mean) / √(var + ε) + β), or RMSNorm (Zhang & Sennrich
// 2019; Llama: γ ⊙ x / √(mean(x²) + ε), no mean and no bias).
enum class NormKind { LayerNorm, RmsNorm };
// The checkpoint layout a model is read from and written to (docs/models.md, "Families"): Hugging Face's GPT-2
// (the project's own models too), the layout Llama, Mistral and Qwen2 share (model.layers.{i}.self_attn.q_proj …),
// GPT-NeoX's (Pythia), GPT-Neo's (TinyStories), BERT's or T5's. Every family but GPT-2 stores nn.Linear weights,
// [out, in].
enum class Family { Gpt2, Llama, GptNeoX, GptNeo, Bert, T5 };

// Llama's rope_scaling (Hugging Face's _compute_linear_scaling_parameters and _compute_llama3_parameters): none,
// every frequency divided by `factor` (linear), or Llama 3.1's rule that divides only the low frequencies and blends
// the middle band (llama3).
struct RopeScaling
{
    enum class Kind { None, Linear, Llama3, LongRope, Factors, Yarn } kind = Kind::None;
    double factor = 1.0;
    double lowFreqFactor = 1.0; // llama3 only
    double highFreqFactor = 4.0; // llama3 only
    int originalContext = 8192; // llama3 and longrope: original_max_position_embeddings
    // LongRoPE (Ding et al. 2024; Phi-3's "longrope", once "su"): pair j's frequency divided by short_factor[j] while
    // the text has at most originalContext positions, by long_factor[j] past it; cos and sin times attentionFactor.
    std::vector<double> shortFactors, longFactors;
    double attentionFactor = 1.0;
    // Factors: pair j's frequency divided by frequencyFactors[j] at every length. llama.cpp's rope_freqs tensor, how a
    // GGUF file holds Llama 3's scaling (its converter computes them from rope_scaling's llama3 keys, which it drops).
    // Not a Hugging Face kind: config.json names it "frequency_factors".
    std::vector<double> frequencyFactors;
    // YaRN (Peng et al. 2023; gpt-oss, as _compute_yarn_parameters): pair j's frequency blends θ_j (kept where a pair
    // turns more than betaFast times in the original context) and θ_j / factor (where it turns fewer than betaSlow
    // times), linearly between; cos and sin times attentionFactor (0.1 ln factor + 1 unless given). `truncate`
    // rounds the blend's ends to whole pairs.
    double betaFast = 32.0, betaSlow = 1.0;
    bool truncate = true;
};
// How a model knows where each token is (docs/models.md, "Positions"): added to the embedding (learned,
// sinusoidal), rotating queries and keys (RoPE in RoFormer's interleaved pairs or the rotate-half convention), a
// term added to every score (ALiBi, Shaw et al.'s relative keys, T5's bucketed bias), or not at all.
enum class PositionKind { Learned, Sinusoidal, Rope, RopeHalf, Alibi, Shaw, T5, None };
// Which stacks a model has (docs/models.md, "Architectures"): GPT's causal decoder, BERT's bidirectional encoder,
// or an encoder and a decoder whose blocks also attend to the encoder's output (cross-attention, as T5).
enum class Architecture { Decoder, Encoder, EncoderDecoder };
std::string architectureName(Architecture a); // "decoder", "encoder", "encoder-decoder"
// What turns a row of attention scores into weights (docs/models.md, "Sparse attention"): softmax; sparsemax (Martins
// & Astudillo 2016); 1.5-entmax (Peters et al. 2019); or α-entmax with a learned α per head (Correia et al. 2019,
// α = 1 + sigmoid(a), the parameter attn.alpha_logit holding a). All but softmax give exact zeros.
enum class Normaliser { Softmax, Sparsemax, Entmax15, LearnedEntmax };
std::string normaliserName(Normaliser n); // "softmax", "sparsemax", "entmax15", "entmax"
Normaliser normaliserArgument(const std::string &name, const std::string &field); // throws for an unknown name

// The config.json name of each kind ("learned", "rope-half" …) and back; parse returns false for an unknown name.
std::string positionKindName(PositionKind kind);
bool parsePositionKind(const std::string &name, PositionKind &kind);
// parsePositionKind, or atlas::Error naming `field` and listing the kinds.
PositionKind positionKindArgument(const std::string &name, const std::string &field);
// Every kind's name, in the enum's order.
const std::vector<std::string> &positionKindNames();

// The model's hyper-parameters, read from and written to a Hugging Face config.json: GPT-2's keys (the project's own
// models, whose keys that GPT-2 does not have carry an "atlas_" prefix, which Hugging Face loaders ignore), or
// Llama's, Mistral's and Qwen2's (hidden_size, num_key_value_heads, rope_theta …), chosen by model_type.
struct ModelConfig
{
    Family family = Family::Gpt2;
    std::string modelType = "gpt2"; // model_type: gpt2, llama, mistral, qwen2, qwen3, olmo2, gemma2, gemma3_text,
                                    // smollm3, phi3, mixtral, gpt_oss, gpt_neox, gpt_neo,
                                    // bert or t5
    int layers = 2; // n_layer
    int heads = 4; // n_head
    int dModel = 64; // n_embd
    int dFF = 256; // n_inner (null in config.json means 4 * n_embd)
    // T5's d_kv: each head's width, when the heads together are not d_model wide (Flan-T5-small: 6 heads of 64 in a
    // model 512 wide); 0 = n_embd / n_head.
    int headWidth = 0;
    int vocab = 256; // vocab_size
    int context = 1024; // n_positions
    float lnEpsilon = 1e-5f; // layer_norm_epsilon
    Activation activation = Activation::GeluTanh; // activation_function: gelu_new | gelu | relu
    LayerNormPlacement layerNorm = LayerNormPlacement::Pre; // atlas_layer_norm: pre | post
    PositionKind positions = PositionKind::Learned; // atlas_positions: see PositionKind
    // atlas_embedding_scale: E = s · W_te[ids]. 1 in GPT-2; Vaswani et al. multiply by √d_model, which keeps the
    // embedding from drowning under an added sinusoidal encoding (docs/models.md, "Positions").
    float embeddingScale = 1.0f;
    float ropeBase = 10000.0f; // atlas_rope_base (rope_theta): θᵢ = base^(−2i/d)
    // Gemma 3's rope_local_base_freq: the windowed layers turn with this base and no rope_scaling, the others with
    // rope_theta and rope_scaling; 0 = every layer alike.
    float ropeLocalBase = 0.0f;
    RopeScaling ropeScaling; // rope_scaling (Llama family only)
    int kvHeads = 0; // num_key_value_heads: grouped-query attention's K/V heads, each shared by heads / kvHeads query
                     // heads; 0 = heads
    NormKind norm = NormKind::LayerNorm;
    bool gatedFfn = false; // SwiGLU (Shazeer 2020): FFN(x) = (act(x W_gate) ⊙ x W_up) W_down
    // QK-norm (Dehghani et al. 2023; Wortsman et al. 2023): the queries and keys go through an RMSNorm before RoPE,
    // with a weight of its own for Q and for K (q_norm, k_norm)
    QkNorm qkNorm = QkNorm::None;
    // Which linear maps add a bias: GPT-2's all do; Llama's none (attention_bias, mlp_bias), Qwen2's q, k and v only.
    bool qkvBias = true, outBias = true, mlpBias = true;
    bool tiedHead = true; // tie_word_embeddings: logits read W_te; otherwise lm_head.weight
    int slidingWindow = 0; // sliding_window (Mistral): query i sees keys i − W < j ≤ i; 0 = every earlier key
    // The layers the window applies to (GPT-Neo's "local" layers); empty with a window: every layer (Mistral).
    std::vector<int> windowedLayers;
    // GPT-NeoX's rotary_pct · d, Phi-3's partial_rotary_factor · d: only the first rotaryDims of each head turn; 0 =
    // all d
    int rotaryDims = 0;
    // SmolLM3's NoPE layers (no_rope_layers holding 0, or every no_rope_layer_interval-th): their queries and keys are
    // not turned, so nothing in the layer's scores says where a token is; empty: every layer turns.
    std::vector<int> noRopeLayers;
    bool scaleScores = true; // S = QKᵀ/√d; GPT-Neo's scores are not scaled
    // Gemma 2's query_pre_attn_scalar: the scores divide by √(this) instead of √d (its 27B: 144 with d = 128); 0 = d.
    float queryScaleBase = 0.0f;
    // Gemma 2's soft-caps, c · tanh(x / c): attn_logit_softcapping on every score before the mask,
    // final_logit_softcapping on the logits; 0 = none.
    float attentionSoftcap = 0.0f, logitSoftcap = 0.0f;
    // gpt-oss's attention sinks: a learned logit per head (self_attn.sinks) that joins every row's softmax and takes
    // its share of the weight, with no value to return (attn.sink holds that share).
    bool attentionSinks = false;
    // gpt-oss's swiglu_limit l: its experts' gated unit is (clamp(u, −l, l) + 1) ⊙ act(min(g, l)); 0 = act(g) ⊙ u.
    float gluClamp = 0.0f;
    // Gemma's RMSNorm multiplies by (1 + γ): its checkpoints store γ − 1, and a norm of zeros passes x through.
    bool normAddsOne = false;
    bool parallelResidual = false; // GPT-NeoX: X + Attn(LN₁(X)) + FFN(LN₂(X)), both sub-layers reading X
    int tokenTypes = 0; // BERT's type_vocab_size: segment embeddings added to the input (0: none)
    // BERT's heads, as its checkpoint has them (set when the weights are read): the next-sentence head (pooler and
    // cls.seq_relationship) of BertForPreTraining.
    bool nspHead = false;
    int relativeClip = 16; // atlas_relative_clip: Shaw's k, distances clipped to [−k, k]
    // Shaw's table row for key j of query i is clip(sign · (j − i)) + k: +1 as Shaw et al.; BERT's relative_key
    // (distance_embedding, k = max_position_embeddings − 1) reads i − j, −1.
    int relativeKeySign = 1;
    int relativeBuckets = 32; // atlas_relative_buckets: T5's bucket count
    int relativeMaxDistance = 128; // atlas_relative_max_distance: T5's last bucket starts at this distance
    bool causal = true; // atlas_causal (an encoder–decoder's decoder is causal, its encoder never)
    // atlas_encoder_layers: the encoder stack of an encoder–decoder model (n_layer counts its decoder blocks); 0 for
    // a model with one stack. config.json also names the architecture (atlas_architecture), checked against these.
    int encoderLayers = 0;
    // atlas_reversible: reversible blocks (Gomez et al. 2017; Reformer): two streams, Y₁ = X₁ + Attn(LN₁(X₂)),
    // Y₂ = X₂ + FFN(LN₂(Y₁)), both starting as the embedding, averaged before ln_f (docs/models.md). Pre-LN only.
    bool reversible = false;
    Normaliser normaliser = Normaliser::Softmax; // atlas_attention_normaliser (GPT-2's layout, one stack)
    // Adaptive attention span (Sukhbaatar et al. 2019; docs/models.md, "Adaptive span"): every head h learns a span
    // z_h = v_h · n_positions (attn.span_fraction holds v_h in [0, 1]) and weighs key j of query i by the soft mask
    // m(i − j) = clamp((R + z_h − (i − j)) / R, 0, 1). atlas_span_ramp is R (0: no span, plain softmax); training adds
    // atlas_span_penalty λ times the mean span of every layer's heads, in tokens, to the loss (the paper's λ/M Σ z).
    int spanRamp = 0;
    float spanPenalty = 0.0f;
    AdaptiveComputation act; // atlas_act, …_ponder_cost, …_epsilon (model/adaptivecomputation.h)
    SharedBlocks shared; // atlas_shared_blocks: one block's weights at every layer (model/sharedblocks.h)
    // Switch Transformer feed-forward layers (Fedus et al. 2021; docs/models.md, "Mixture of experts"):
    int experts = 0; // atlas_experts: E experts per MoE layer, 0 for dense FFNs everywhere
    int expertTopK = 1; // atlas_expert_top_k: experts per token (Switch: 1)
    float capacityFactor = 1.25f; // atlas_capacity_factor: capacity = ⌈factor · T / E⌉ tokens per expert
    // Mixtral's routing: no capacity (no token is ever dropped), and the k chosen experts' probabilities renormalised
    // to sum to 1 before they weight the experts' outputs.
    bool droplessRouting = false;
    std::vector<int> moeLayers; // atlas_moe_layers: the layers with experts; empty means every layer
    float routerAuxLossCoef = 0.01f; // atlas_router_aux_loss_coef: α of the load-balancing loss in training
    float routerZLossCoef = 0.001f; // atlas_router_z_loss_coef: weight of the router z-loss in training
    FunnelLayout funnel; // atlas_funnel_blocks, atlas_funnel_decoder_layers (Funnel-Transformer: model/funnel.h)
    SinkhornLayout sinkhorn; // atlas_sinkhorn_block, …_iterations, …_temperature (model/sinkhorn.h)
    FourierLayers
        fourier; // atlas_fourier_layers: FNet's blocks that mix by a Fourier transform (model/fourierlayers.h)
    std::string tokenizer = "gpt2"; // atlas_tokenizer: bytes | gpt2 (vocab.json + merges.txt beside)
    std::string description; // atlas_description: shown in the model menu
    std::string sample; // atlas_sample: an input that shows what the model does ("abcdefgh>hgfedcba"); may be empty
    std::string decoderSample; // atlas_decoder_sample: an encoder–decoder's decoder input to go with `sample`
    // T5's decoder_start_token_id: the id a decoder input given as text starts with (teacher forcing shifts the
    // target right by this token); −1: the text is the decoder's input as it is.
    int decoderStart = -1;
    // atlas_special_tokens: {"[MASK]": 259, "<extra_id_0>": 260, …}, ids past the ordinary vocabulary that the
    // pretraining objectives (train/objectives.h) and the token chips use by name; sorted by id.
    std::vector<std::pair<std::string, int>> specialTokens;
    std::string task; // atlas_task: the task it was trained on (train --task), for held-out scores; may be empty

    int headDim() const { return headWidth > 0 ? headWidth : dModel / heads; }
    int64_t innerDim() const { return int64_t(heads) * headDim(); } // the width of the heads side by side, H·d
    // T5 with a tied head scales the decoder's output by d_model^−½ before reading the embedding; 1 elsewhere.
    float outputScale() const;
    int kvHeadCount() const { return kvHeads > 0 ? kvHeads : heads; }
    // The width of each head that RoPE turns: rotaryDims, or the whole head.
    int rotatedDims() const { return rotaryDims > 0 ? rotaryDims : headDim(); }
    bool adaptiveSpan() const { return spanRamp > 0; }
    // GPT-2's Conv1D checkpoints keep a linear map's W as [in, out] and write y = x W + b. The model holds every map as
    // nn.Linear's [out, in] (model/parameterlist.h); the trace's formulas name the checkpoint's own W.
    bool storesConv1d() const { return family == Family::Gpt2; }
    // GPT-2's layout fuses an encoder–decoder's cross-attention keys and values into one map (CrossKv); T5 has two.
    bool fusesCrossKv() const { return family == Family::Gpt2; }
    // Whether layer `layer` masks keys older than the sliding window.
    bool windowed(int layer) const
    {
        return slidingWindow > 0
            && (windowedLayers.empty()
                || std::find(windowedLayers.begin(), windowedLayers.end(), layer) != windowedLayers.end());
    }
    // Query heads per K/V head (1 without grouped-query attention).
    int queriesPerKv() const { return heads / kvHeadCount(); }
    // The angle per position of each rotated pair in layer `layer`: base^(−2j/d), with rope_scaling applied (Gemma 3's
    // windowed layers: their own base, unscaled). Layer −1: the global layers'. LongRoPE's factors depend on the
    // text's length: `positions`, the positions a forward pass covers (0: the short factors).
    std::vector<double> ropeFrequencies(int layer = -1, int64_t positions = 0) const;
    // What RoPE's cos and sin are multiplied by in layer `layer`: LongRoPE's attention factor, 1 otherwise.
    double ropeAmplitude(int layer = -1) const;
    // Whether the rotation's frequencies change with the text's length (LongRoPE): a text that grows past
    // ropeScaling.originalContext turns every earlier key again.
    bool ropeDependsOnLength() const { return ropeScaling.kind == RopeScaling::Kind::LongRope; }
    // gpt-oss's experts: each layer's stacked in mlp.experts.gate_up_proj [E, D, 2F] (gate and up columns
    // interleaved) and down_proj [E, F, D], with biases, read in place (ops::moe_stacked_forward).
    bool stacksExperts() const { return modelType == "gpt_oss"; }
    // Phi-3's fused projections: one qkv_proj for [Q K V] and one gate_up_proj for [gate up].
    bool fusesProjections() const { return modelType == "phi3"; }
    Architecture architecture() const
    {
        return encoderLayers > 0 ? Architecture::EncoderDecoder
            : causal             ? Architecture::Decoder
                                 : Architecture::Encoder;
    }
    bool isEncoderDecoder() const { return encoderLayers > 0; }
    bool addsPositions() const { return positions == PositionKind::Learned || positions == PositionKind::Sinusoidal; }
    bool rotatesQueriesAndKeys() const
    {
        return positions == PositionKind::Rope || positions == PositionKind::RopeHalf;
    }
    // Whether layer `layer` turns its queries and keys: a RoPE model's layer that is not one of its NoPE layers.
    bool rotates(int layer) const
    {
        return rotatesQueriesAndKeys()
            && std::find(noRopeLayers.begin(), noRopeLayers.end(), layer) == noRopeLayers.end();
    }
    // ALiBi, Shaw and T5 add a position term to the scores (layer.{i}.attn.bias)
    bool biasesScores() const
    {
        return positions == PositionKind::Alibi || positions == PositionKind::Shaw || positions == PositionKind::T5;
    }
    // Whether block `layer`'s feed-forward sub-layer is a mixture of experts.
    bool isMoeLayer(int layer) const
    {
        return experts > 0
            && (moeLayers.empty() || std::find(moeLayers.begin(), moeLayers.end(), layer) != moeLayers.end());
    }
    bool hasExperts() const { return experts > 0; }
    // The id of special token `name`, or −1 when the model has none of that name.
    int specialToken(const std::string &name) const;
    // The ids of <extra_id_0>, <extra_id_1> … as far as they run without a gap (T5's sentinels).
    std::vector<int> sentinelTokens() const;
    // BERT's token types of an input, as Hugging Face's tokenizer gives a pair "[CLS] A [SEP] B [SEP]": 0 up to and
    // including the first [SEP], 1 after it; all 0 without a [SEP] id, a second type or a [SEP] in the input.
    std::vector<int> segmentsOf(const std::vector<int> &tokens) const;
    // The ids below every special token: what a random replacement draws from (another family's: the whole
    // vocabulary).
    int ordinaryTokens() const;
    // GPT-2 small's shape (12 layers, 12 heads, 768 wide, vocabulary 50257, context 1024), for benchmarks.
    static ModelConfig gpt2Small();
    void validate(const std::string &source) const; // throws atlas::Error naming source and field

    // The config.json key each value validate() checks was read from, by the name GPT-2's config gives it ("n_embd" →
    // "hidden_size" in a Llama config, "atlas_expert_top_k" → "num_experts_per_tok" in Mixtral's), so that a message
    // names the key the user wrote; keyName falls back to GPT-2's name (a config made in code, or GPT-2's own).
    std::map<std::string, std::string> sourceKeys;
    std::string keyName(const std::string &gpt2Name) const;
    bool modelTypeGiven = true; // false when config.json has no model_type, and was read as GPT-2's
    // Set when config.json describes a multimodal model whose language model is the one read (Gemma 3 4B and up:
    // model_type "gemma3", its text_config): that model's model_type. Its weights sit under the wrapper's prefix
    // (checkpointPrefixes), and the vision tower is left unread.
    std::string multimodalType;
    // The prefixes a checkpoint of this model may put before the base model's keys, most likely first: Hugging Face's
    // …ForCausalLM's ("model."), or a multimodal wrapper's ("language_model.model.", "model.language_model.").
    std::vector<std::string> checkpointPrefixes() const;

    static ModelConfig fromJson(const std::string &json, const std::string &source);
    std::string toJson() const;

private:
    std::string familyJson() const; // every family but GPT-2
};

} // namespace atlas
