#include "model/model.h"

#include "io/atomicfile.h"
#include "io/limits.h"
#include "io/modelfile.h"
#include "io/safetensors.h"
#include "trace/names.h"
#include "util/error.h"
#include "util/memorycheck.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <random>

namespace atlas {

namespace {

namespace fs = std::filesystem;

constexpr char kLmHead[] = "lm_head.weight", kEmbedOut[] = "embed_out.weight"; // output heads, never prefixed

// Each family's embedding and the prefix its …ForCausalLM class adds to every other key.
std::pair<std::string, std::string> embeddingAndPrefix(Family family)
{
    switch (family) {
    case Family::Llama:
        return {"embed_tokens.weight", "model."};
    case Family::GptNeoX:
        return {"embed_in.weight", "gpt_neox."};
    case Family::Bert:
        return {"embeddings.word_embeddings.weight", "bert."};
    case Family::T5:
        return {"shared.weight", ""}; // T5ForConditionalGeneration prefixes nothing
    default:
        return {"wte.weight", "transformer."};
    }
}

// Every parameter of block `i` of stack `s`: visit(name, expected shape, the tensor that holds it), in the order of
// Hugging Face's GPT-2 files.
template <typename Block, typename Visit>
void forEachBlockParameter(Block &b, const ModelConfig &c, const names::Stack &s, int i, Visit &visit)
{
    const int64_t D = c.dModel, F = c.dFF;
    const std::string p = names::parameterPrefix(s, i);
    if (c.positions == PositionKind::Shaw)
        visit(p + "attn.relative_key.weight", Shape {2 * int64_t(c.relativeClip) + 1, c.headDim()}, b.relativeKey);
    if (c.normaliser == Normaliser::LearnedEntmax)
        visit(p + "attn.alpha_logit", Shape {c.heads}, b.alphaLogit);
    if (c.adaptiveSpan())
        visit(p + "attn.span_fraction", Shape {c.heads}, b.spanFraction);
    if (c.sinkhorn.active()) {
        const int64_t N = c.sinkhorn.blocks(c.context);
        visit(p + "attn.sort.c_fc.weight", Shape {D, D}, b.sortFcWeight);
        visit(p + "attn.sort.c_fc.bias", Shape {D}, b.sortFcBias);
        visit(p + "attn.sort.c_proj.weight", Shape {D, N}, b.sortProjWeight);
        visit(p + "attn.sort.c_proj.bias", Shape {N}, b.sortProjBias);
    }
    visit(p + "ln_1.weight", Shape {D}, b.ln1Weight);
    visit(p + "ln_1.bias", Shape {D}, b.ln1Bias);
    visit(p + "attn.c_attn.weight", Shape {D, 3 * D}, b.attnWeight);
    visit(p + "attn.c_attn.bias", Shape {3 * D}, b.attnBias);
    visit(p + "attn.c_proj.weight", Shape {D, D}, b.attnProjWeight);
    visit(p + "attn.c_proj.bias", Shape {D}, b.attnProjBias);
    if (s == names::kDecoderStack) {
        visit(p + "ln_cross_attn.weight", Shape {D}, b.lnCrossWeight);
        visit(p + "ln_cross_attn.bias", Shape {D}, b.lnCrossBias);
        visit(p + "crossattention.q_attn.weight", Shape {D, D}, b.crossQWeight);
        visit(p + "crossattention.q_attn.bias", Shape {D}, b.crossQBias);
        visit(p + "crossattention.c_attn.weight", Shape {D, 2 * D}, b.crossKvWeight);
        visit(p + "crossattention.c_attn.bias", Shape {2 * D}, b.crossKvBias);
        visit(p + "crossattention.c_proj.weight", Shape {D, D}, b.crossProjWeight);
        visit(p + "crossattention.c_proj.bias", Shape {D}, b.crossProjBias);
    }
    visit(p + "ln_2.weight", Shape {D}, b.ln2Weight);
    visit(p + "ln_2.bias", Shape {D}, b.ln2Bias);
    if (!c.isMoeLayer(i)) {
        visit(p + "mlp.c_fc.weight", Shape {D, F}, b.fcWeight);
        visit(p + "mlp.c_fc.bias", Shape {F}, b.fcBias);
        visit(p + "mlp.c_proj.weight", Shape {F, D}, b.fcProjWeight);
        visit(p + "mlp.c_proj.bias", Shape {D}, b.fcProjBias);
        return;
    }
    visit(p + "mlp.router.weight", Shape {D, c.experts}, b.routerWeight);
    for (size_t e = 0; e < b.experts.size(); ++e) {
        const std::string x = names::expertPrefix(i, int(e));
        visit(x + "c_fc.weight", Shape {D, F}, b.experts[e].fcWeight);
        visit(x + "c_fc.bias", Shape {F}, b.experts[e].fcBias);
        visit(x + "c_proj.weight", Shape {F, D}, b.experts[e].fcProjWeight);
        visit(x + "c_proj.bias", Shape {D}, b.experts[e].fcProjBias);
    }
}

// Every parameter of block `i` of a Llama-family model (Hugging Face's LlamaDecoderLayer, MistralDecoderLayer,
// Qwen2DecoderLayer), in nn.Linear layout [out, in].
template <typename Block, typename Visit>
void forEachLlamaBlockParameter(Block &b, const ModelConfig &c, int i, Visit &visit)
{
    const int64_t D = c.dModel, F = c.dFF, Q = int64_t(c.heads) * c.headDim(),
                  KV = int64_t(c.kvHeadCount()) * c.headDim();
    const std::string p = "layers." + std::to_string(i) + ".", a = p + "self_attn.", f = p + "mlp.";
    auto linear = [&](const std::string &name, int64_t out, int64_t in, bool bias, auto &weight, auto &biasTensor) {
        visit(name + ".weight", Shape {out, in}, weight);
        if (bias)
            visit(name + ".bias", Shape {out}, biasTensor);
    };
    visit(p + "input_layernorm.weight", Shape {D}, b.ln1Weight);
    linear(a + "q_proj", Q, D, c.qkvBias, b.qWeight, b.qBias);
    linear(a + "k_proj", KV, D, c.qkvBias, b.kWeight, b.kBias);
    linear(a + "v_proj", KV, D, c.qkvBias, b.vWeight, b.vBias);
    linear(a + "o_proj", D, Q, c.outBias, b.oWeight, b.oBias);
    visit(p + "post_attention_layernorm.weight", Shape {D}, b.ln2Weight);
    if (c.isMoeLayer(i)) { // Mixtral's block_sparse_moe: a router (gate) and SwiGLU experts
        const std::string m = p + "block_sparse_moe.";
        visit(m + "gate.weight", Shape {c.experts, D}, b.routerWeight);
        for (size_t e = 0; e < b.experts.size(); ++e) {
            const std::string x = m + "experts." + std::to_string(e) + ".";
            visit(x + "w1.weight", Shape {F, D}, b.experts[e].gateWeight);
            visit(x + "w2.weight", Shape {D, F}, b.experts[e].downWeight);
            visit(x + "w3.weight", Shape {F, D}, b.experts[e].upWeight);
        }
        return;
    }
    linear(f + "gate_proj", F, D, c.mlpBias, b.gateWeight, b.gateBias);
    linear(f + "up_proj", F, D, c.mlpBias, b.upWeight, b.upBias);
    linear(f + "down_proj", D, F, c.mlpBias, b.downWeight, b.downBias);
}

// GPT-NeoX's block i (GPTNeoXLayer), and GPT-Neo's (GPTNeoBlock).
template <typename Block, typename Visit>
void forEachNeoBlockParameter(Block &b, const ModelConfig &c, int i, Visit &visit)
{
    const int64_t D = c.dModel, F = c.dFF;
    auto linear = [&](const std::string &name, int64_t out, int64_t in, bool bias, auto &weight, auto &biasTensor) {
        visit(name + ".weight", Shape {out, in}, weight);
        if (bias)
            visit(name + ".bias", Shape {out}, biasTensor);
    };
    auto norm = [&](const std::string &name, auto &weight, auto &bias) {
        visit(name + ".weight", Shape {D}, weight);
        visit(name + ".bias", Shape {D}, bias);
    };
    if (c.family == Family::GptNeoX) {
        const std::string p = "layers." + std::to_string(i) + ".";
        norm(p + "input_layernorm", b.ln1Weight, b.ln1Bias);
        linear(p + "attention.query_key_value", 3 * D, D, c.qkvBias, b.qkvWeight, b.qkvBias);
        linear(p + "attention.dense", D, D, c.outBias, b.oWeight, b.oBias);
        norm(p + "post_attention_layernorm", b.ln2Weight, b.ln2Bias);
        linear(p + "mlp.dense_h_to_4h", F, D, true, b.upWeight, b.upBias);
        linear(p + "mlp.dense_4h_to_h", D, F, true, b.downWeight, b.downBias);
        return;
    }
    const std::string p = "h." + std::to_string(i) + ".", a = p + "attn.attention.";
    norm(p + "ln_1", b.ln1Weight, b.ln1Bias);
    linear(a + "q_proj", D, D, false, b.qWeight, b.qBias);
    linear(a + "k_proj", D, D, false, b.kWeight, b.kBias);
    linear(a + "v_proj", D, D, false, b.vWeight, b.vBias);
    linear(a + "out_proj", D, D, true, b.oWeight, b.oBias);
    norm(p + "ln_2", b.ln2Weight, b.ln2Bias);
    linear(p + "mlp.c_fc", F, D, true, b.upWeight, b.upBias);
    linear(p + "mlp.c_proj", D, F, true, b.downWeight, b.downBias);
}

// BERT's block i (BertLayer), post-LN: attention, output.dense, LayerNorm; intermediate, output, LayerNorm.
template <typename Block, typename Visit>
void forEachBertBlockParameter(Block &b, const ModelConfig &c, int i, Visit &visit)
{
    const int64_t D = c.dModel, F = c.dFF;
    const std::string p = "encoder.layer." + std::to_string(i) + ".";
    auto linear = [&](const std::string &name, int64_t out, int64_t in, auto &weight, auto &bias) {
        visit(name + ".weight", Shape {out, in}, weight);
        visit(name + ".bias", Shape {out}, bias);
    };
    linear(p + "attention.self.query", D, D, b.qWeight, b.qBias);
    linear(p + "attention.self.key", D, D, b.kWeight, b.kBias);
    linear(p + "attention.self.value", D, D, b.vWeight, b.vBias);
    if (c.positions == PositionKind::Shaw) // position_embedding_type relative_key
        visit(p + "attention.self.distance_embedding.weight", Shape {2 * int64_t(c.relativeClip) + 1, c.headDim()},
            b.relativeKey);
    linear(p + "attention.output.dense", D, D, b.oWeight, b.oBias);
    visit(p + "attention.output.LayerNorm.weight", Shape {D}, b.ln1Weight);
    visit(p + "attention.output.LayerNorm.bias", Shape {D}, b.ln1Bias);
    linear(p + "intermediate.dense", F, D, b.upWeight, b.upBias);
    linear(p + "output.dense", D, F, b.downWeight, b.downBias);
    visit(p + "output.LayerNorm.weight", Shape {D}, b.ln2Weight);
    visit(p + "output.LayerNorm.bias", Shape {D}, b.ln2Bias);
}

// BERT's embeddings, blocks and heads (BertForMaskedLM, BertForPreTraining).
template <typename ModelT, typename Visit> void forEachBertParameter(ModelT &m, Visit &visit)
{
    const ModelConfig &c = m.config;
    const int64_t D = c.dModel;
    visit("embeddings.word_embeddings.weight", Shape {c.vocab, D}, m.wte);
    visit("embeddings.position_embeddings.weight", Shape {c.context, D}, m.wpe);
    visit("embeddings.token_type_embeddings.weight", Shape {c.tokenTypes, D}, m.wtt);
    visit("embeddings.LayerNorm.weight", Shape {D}, m.embedLnWeight);
    visit("embeddings.LayerNorm.bias", Shape {D}, m.embedLnBias);
    for (size_t i = 0; i < m.blocks.size(); ++i)
        forEachBertBlockParameter(m.blocks[i], c, int(i), visit);
    visit("cls.predictions.transform.dense.weight", Shape {D, D}, m.headDenseWeight);
    visit("cls.predictions.transform.dense.bias", Shape {D}, m.headDenseBias);
    visit("cls.predictions.transform.LayerNorm.weight", Shape {D}, m.lnfWeight);
    visit("cls.predictions.transform.LayerNorm.bias", Shape {D}, m.lnfBias);
    visit("cls.predictions.bias", Shape {c.vocab}, m.outputBias);
    if (!c.nspHead)
        return;
    visit("pooler.dense.weight", Shape {D, D}, m.poolerWeight);
    visit("pooler.dense.bias", Shape {D}, m.poolerBias);
    visit("cls.seq_relationship.weight", Shape {2, D}, m.nspWeight);
    visit("cls.seq_relationship.bias", Shape {2}, m.nspBias);
}

// T5's stacks (T5ForConditionalGeneration): block i of the encoder holds layer.0 (self-attention) and layer.1 (the
// feed-forward sub-layer); of the decoder, layer.0, layer.1 (cross-attention, EncDecAttention) and layer.2. Each
// stack's block 0 holds its relative position table. nn.Linear layout, no biases, RMS layer norms.
template <typename ModelT, typename Visit> void forEachT5Parameter(ModelT &m, Visit &visit)
{
    const ModelConfig &c = m.config;
    const int64_t D = c.dModel, F = c.dFF, I = c.innerDim();
    visit("shared.weight", Shape {c.vocab, D}, m.wte);
    for (const bool encoder : {true, false}) {
        const std::string stack = encoder ? "encoder." : "decoder.";
        auto &blocks = encoder ? m.encoderBlocks : m.blocks;
        for (size_t i = 0; i < blocks.size(); ++i) {
            auto &b = blocks[i];
            const std::string p = stack + "block." + std::to_string(i) + ".layer.";
            const std::string a = p + "0.SelfAttention.", f = p + (encoder ? "1" : "2") + ".";
            visit(a + "q.weight", Shape {I, D}, b.qWeight);
            visit(a + "k.weight", Shape {I, D}, b.kWeight);
            visit(a + "v.weight", Shape {I, D}, b.vWeight);
            visit(a + "o.weight", Shape {D, I}, b.oWeight);
            if (i == 0)
                visit(a + "relative_attention_bias.weight", Shape {c.relativeBuckets, c.heads},
                    encoder ? m.encoderRelativeBias : m.relativeBias);
            visit(p + "0.layer_norm.weight", Shape {D}, b.ln1Weight);
            if (!encoder) {
                const std::string x = p + "1.EncDecAttention.";
                visit(x + "q.weight", Shape {I, D}, b.crossQWeight);
                visit(x + "k.weight", Shape {I, D}, b.crossKWeight);
                visit(x + "v.weight", Shape {I, D}, b.crossVWeight);
                visit(x + "o.weight", Shape {D, I}, b.crossProjWeight);
                visit(p + "1.layer_norm.weight", Shape {D}, b.lnCrossWeight);
            }
            if (c.gatedFfn) {
                visit(f + "DenseReluDense.wi_0.weight", Shape {F, D}, b.gateWeight);
                visit(f + "DenseReluDense.wi_1.weight", Shape {F, D}, b.upWeight);
            } else {
                visit(f + "DenseReluDense.wi.weight", Shape {F, D}, b.upWeight);
            }
            visit(f + "DenseReluDense.wo.weight", Shape {D, F}, b.downWeight);
            visit(f + "layer_norm.weight", Shape {D}, b.ln2Weight);
        }
        visit(stack + "final_layer_norm.weight", Shape {D}, encoder ? m.encoderLnfWeight : m.lnfWeight);
    }
    if (!c.tiedHead)
        visit(kLmHead, Shape {c.vocab, D}, m.lmHead);
}

// Every parameter the config requires, of a model whose blocks are allocated: visit(name, expected shape, tensor). The
// one table load, save, random and parameters() read; Model::random draws its values in this order, which the
// shipped models' training commands depend on (tests/tst_model.cpp pins it).
template <typename ModelT, typename Visit> void forEachParameter(ModelT &m, Visit &&visit)
{
    const ModelConfig &c = m.config;
    const int64_t D = c.dModel;
    if (c.family == Family::Bert)
        return forEachBertParameter(m, visit);
    if (c.family == Family::T5)
        return forEachT5Parameter(m, visit);
    if (c.family == Family::Llama) {
        visit("embed_tokens.weight", Shape {c.vocab, D}, m.wte);
        for (size_t i = 0; i < m.blocks.size(); ++i)
            forEachLlamaBlockParameter(m.blocks[i], c, int(i), visit);
        visit("norm.weight", Shape {D}, m.lnfWeight);
        if (!c.tiedHead)
            visit(kLmHead, Shape {c.vocab, D}, m.lmHead);
        return;
    }
    if (c.family == Family::GptNeoX || c.family == Family::GptNeo) {
        const bool neox = c.family == Family::GptNeoX;
        visit(neox ? "embed_in.weight" : "wte.weight", Shape {c.vocab, D}, m.wte);
        if (!neox)
            visit("wpe.weight", Shape {c.context, D}, m.wpe);
        for (size_t i = 0; i < m.blocks.size(); ++i)
            forEachNeoBlockParameter(m.blocks[i], c, int(i), visit);
        visit(neox ? "final_layer_norm.weight" : "ln_f.weight", Shape {D}, m.lnfWeight);
        visit(neox ? "final_layer_norm.bias" : "ln_f.bias", Shape {D}, m.lnfBias);
        if (!c.tiedHead)
            visit(neox ? kEmbedOut : kLmHead, Shape {c.vocab, D}, m.lmHead);
        return;
    }
    visit("wte.weight", Shape {c.vocab, D}, m.wte);
    if (c.positions == PositionKind::Learned)
        visit("wpe.weight", Shape {c.context, D}, m.wpe);
    if (c.positions == PositionKind::T5)
        visit("relative_attention_bias.weight", Shape {c.relativeBuckets, c.heads}, m.relativeBias);
    if (c.isEncoderDecoder()) {
        for (size_t i = 0; i < m.encoderBlocks.size(); ++i)
            forEachBlockParameter(m.encoderBlocks[i], c, names::kEncoderStack, int(i), visit);
        const std::string lnf = std::string(names::kEncoderStack.parameters) + "ln_f.";
        visit(lnf + "weight", Shape {D}, m.encoderLnfWeight);
        visit(lnf + "bias", Shape {D}, m.encoderLnfBias);
    }
    const names::Stack decoder = c.isEncoderDecoder() ? names::kDecoderStack : names::kOnlyStack;
    for (size_t i = 0; i < m.blocks.size(); ++i)
        forEachBlockParameter(m.blocks[i], c, decoder, int(i), visit);
    visit("ln_f.weight", Shape {D}, m.lnfWeight);
    visit("ln_f.bias", Shape {D}, m.lnfBias);
}

template <typename ModelT, typename Ptr> std::map<std::string, Ptr> parameterMap(ModelT &m)
{
    std::map<std::string, Ptr> out;
    forEachParameter(m, [&out](const std::string &name, const Shape &, auto &tensor) { out[name] = &tensor; });
    return out;
}

// Hugging Face files may prefix every key with "transformer." (GPT2LMHeadModel) or not (GPT2Model); the Llama family
// with "model." (LlamaForCausalLM) or not (LlamaModel), lm_head.weight never.
std::string detectPrefix(const SafetensorsCheckpoint &file, const ModelConfig &config)
{
    const auto [embedding, prefixed] = embeddingAndPrefix(config.family);
    if (file.contains(embedding))
        return "";
    if (file.contains(prefixed + embedding))
        return prefixed;
    if (!config.modelTypeGiven) // read as GPT-2's, which it may not be
        throw Error(file.describe() + ": no '" + embedding + "' (nor '" + prefixed + embedding
            + "'), GPT-2's embedding: config.json has no 'model_type', so it was read as a gpt2 config; add the "
              "model's \"model_type\" (llama, mistral, qwen2, mixtral, gpt_neox, gpt_neo, bert or t5)");
    throw Error(file.describe() + ": no '" + embedding + "' (nor '" + prefixed + embedding + "'): not a "
        + config.modelType + " model file");
}

// The heads outside the base model keep their own names (lm_head, embed_out, BERT's cls.*).
std::string checkpointKey(const std::string &prefix, const std::string &name)
{
    return name == kLmHead || name == kEmbedOut || name.starts_with("cls.") ? name : prefix + name;
}

// Older BERT checkpoints name a LayerNorm's weight and bias gamma and beta (transformers renames them on loading).
std::string legacyLayerNormKey(const std::string &key)
{
    if (key.ends_with("LayerNorm.weight"))
        return key.substr(0, key.size() - 6) + "gamma";
    if (key.ends_with("LayerNorm.bias"))
        return key.substr(0, key.size() - 4) + "beta";
    return key;
}

// Before the weights are allocated: a shape over this machine's memory is refused with the figure, as train and
// memory refuse it (the weights alone here; a training step needs more).
void checkWeightsFit(const ModelConfig &config, const std::string &what)
{
    const int64_t parameters = Model::parameterCountOf(config);
    checkFitsInMemory(double(parameters) * sizeof(float),
        what + ": its " + std::to_string(parameters) + " parameters, held as float32,");
}

} // namespace

namespace {

// Model::load's work; Model::load names the directory when memory runs out.
Model loadModelFiles(const std::string &directory)
{
    const fs::path dir(directory);
    if (!fs::is_directory(dir))
        throw Error(directory + ": not a model directory (expected config.json and model.safetensors in it)");
    const std::string configPath = (dir / "config.json").string();
    if (!fs::exists(configPath))
        throw Error(configPath + ": missing (a model directory needs config.json and model.safetensors)");
    Model m;
    m.config = ModelConfig::fromJson(readModelFile(configPath, limits::kSpecBytes), configPath);
    m.directory = directory;
    m.name = dir.filename().empty() ? dir.parent_path().filename().string() : dir.filename().string();
    checkWeightsFit(m.config, directory);
    m.allocateBlocks();

    const SafetensorsCheckpoint file(directory);
    const std::string prefix = detectPrefix(file, m.config);
    if (m.config.family == Family::T5 && !file.contains("decoder.final_layer_norm.weight"))
        throw Error(file.describe() + ": no decoder (decoder.*): a T5 encoder alone (T5EncoderModel) has no logits to "
            + "show; T5ForConditionalGeneration checkpoints open");
    if (m.config.family == Family::Bert) {
        if (!file.contains("cls.predictions.bias"))
            throw Error(file.describe() + ": no masked-LM head (cls.predictions.*): a BertModel without heads has no "
                + "logits to show; BertForMaskedLM and BertForPreTraining checkpoints open");
        m.config.nspHead = file.contains("cls.seq_relationship.weight");
    }
    forEachParameter(m, [&](const std::string &name, const Shape &shape, Tensor &tensor) {
        std::string key = checkpointKey(prefix, name);
        if (!file.contains(key) && file.contains(legacyLayerNormKey(key)))
            key = legacyLayerNormKey(key);
        if (!file.contains(key))
            throw Error(file.describe() + ": tensor '" + key + "' is missing (required by config.json)");
        const SafetensorsFile::Entry &entry = file.entry(key);
        if (entry.shape != shape)
            throw Error(file.pathOf(key) + ": tensor '" + key + "' has shape " + Tensor::shapeString(entry.shape)
                + ", config.json implies " + Tensor::shapeString(shape));
        tensor = file.tensor(key);
    });
    m.dtype = file.dtype();
    return m;
}

} // namespace

Model Model::load(const std::string &directory)
{
    try {
        return loadModelFiles(directory);
    } catch (const std::bad_alloc &) { // a shape checkFitsInMemory let through, on a machine already short of memory
        throw Error(directory + ": out of memory while reading the model (its config.json shape, held as float32, "
            + "did not fit in the memory free now)");
    }
}

void Model::save(const std::string &directory, const std::map<std::string, std::string> &metadata) const
{
    std::map<std::string, std::string> header = {{"format", "pt"}, {"producer", "transformer-atlas"}};
    header.insert(metadata.begin(), metadata.end());
    std::error_code ec;
    fs::create_directories(directory, ec);
    if (ec)
        throw Error(directory + ": cannot create directory: " + ec.message());
    std::map<std::string, const Tensor *> tensors = parameters();
    if (config.family != Family::Gpt2) { // as the family's …ForCausalLM class saves them
        std::map<std::string, const Tensor *> prefixed;
        for (const auto &[name, tensor] : tensors)
            prefixed[checkpointKey(embeddingAndPrefix(config.family).second, name)] = tensor;
        tensors = std::move(prefixed);
    }
    writeSafetensors((fs::path(directory) / "model.safetensors").string(), tensors, header);
    writeFileAtomically((fs::path(directory) / "config.json").string(), config.toJson());
}

double Model::forwardFlopsOf(const ModelConfig &config, int tokens)
{
    const double T = tokens, layers = config.layers + config.encoderLayers;
    return 2.0 * double(parameterCountOf(config)) * T + 4.0 * layers * T * T * double(config.dModel);
}

Model Model::random(const ModelConfig &config, uint64_t seed)
{
    config.validate("model config");
    checkWeightsFit(config, "a model of this shape");
    Model m;
    m.config = config;
    m.name = "random";
    m.allocateBlocks();
    std::mt19937_64 rng(seed);
    std::normal_distribution<float> normal(0.0f, 0.02f);
    forEachParameter(m, [&](const std::string &name, const Shape &shape, Tensor &tensor) {
        const bool isNorm = name.find("ln_") != std::string::npos || name.find("norm") != std::string::npos
            || name.find("LayerNorm") != std::string::npos;
        const bool isBias = name.ends_with(".bias");
        const bool isSpan = name.ends_with("attn.span_fraction"); // spans start at 0 and grow, as the paper's
        tensor = Tensor(shape, isNorm && !isBias ? 1.0f : 0.0f);
        if (!isNorm && !isBias && !isSpan)
            for (float &v : tensor.values())
                v = normal(rng);
    });
    return m;
}

std::vector<float> Model::attentionAlphas(int layer) const
{
    switch (config.normaliser) {
    case Normaliser::Softmax:
        return {};
    case Normaliser::Sparsemax:
        return {2.0f};
    case Normaliser::Entmax15:
        return {1.5f};
    default: {
        // α = 1 + σ(a) lies in (1, 2); far out a would round it to 1 or 2 exactly, so it stays a step inside.
        std::vector<float> alpha;
        for (const float a : blocks.at(size_t(layer)).alphaLogit.values())
            alpha.push_back(std::clamp(1.0f + 1.0f / (1.0f + std::exp(-a)), 1.001f, 2.0f));
        return alpha;
    }
    }
}

std::vector<float> Model::attentionSpans(int layer) const
{
    if (!config.adaptiveSpan())
        return {};
    std::vector<float> spans;
    for (const float v : blocks.at(size_t(layer)).spanFraction.values())
        spans.push_back(std::clamp(v, 0.0f, 1.0f) * float(config.context));
    return spans;
}

void Model::clampSpanFractions()
{
    for (BlockWeights &b : blocks)
        for (float &v : b.spanFraction.values())
            v = std::clamp(v, 0.0f, 1.0f);
}

Model Model::withPositions(PositionKind kind, const std::string &field) const
{
    if (kind == config.positions)
        return *this;
    const bool learnedTable = kind == PositionKind::Learned || kind == PositionKind::Shaw || kind == PositionKind::T5;
    if (learnedTable)
        throw Error(field + " " + positionKindName(kind) + ": this model has no learned " + positionKindName(kind)
            + " parameters (it uses " + positionKindName(config.positions)
            + "); only kinds without parameters can replace its own: sinusoidal, rope, rope-half, alibi, none");
    Model m = *this;
    m.config.positions = kind;
    m.config.validate(field);
    m.wpe = Tensor();
    m.relativeBias = Tensor();
    m.encoderRelativeBias = Tensor();
    for (BlockWeights &b : m.blocks)
        b.relativeKey = Tensor();
    return m;
}

Model Model::withRouting(double capacityFactor, int topK, const std::string &field) const
{
    if (!config.hasExperts())
        throw Error(field + ": this model has no mixture-of-experts layers (its config.json has no atlas_experts)");
    if (capacityFactor != 0 && !(capacityFactor > 0 && capacityFactor <= 1024))
        throw Error(field + ": the capacity factor must be in (0, 1024], is " + std::to_string(capacityFactor));
    if (topK < 0 || topK > config.experts)
        throw Error(field + ": top-k must be in 1.." + std::to_string(config.experts) + " (the model's experts), is "
            + std::to_string(topK));
    Model m = *this;
    if (capacityFactor > 0)
        m.config.capacityFactor = float(capacityFactor);
    if (topK > 0)
        m.config.expertTopK = topK;
    return m;
}

void Model::allocateBlocks()
{
    blocks.assign(size_t(config.layers), BlockWeights {});
    encoderBlocks.assign(size_t(config.encoderLayers), BlockWeights {});
    for (int i = 0; i < config.layers; ++i)
        if (config.isMoeLayer(i))
            blocks[size_t(i)].experts.resize(size_t(config.experts));
}

std::shared_ptr<const Model> stretchedForLength(std::shared_ptr<const Model> model, size_t tokens)
{
    if (tokens <= size_t(model->config.context) || model->config.positions == PositionKind::Learned
        || tokens > size_t(std::numeric_limits<int>::max()))
        return model;
    auto stretched = std::make_shared<Model>(*model);
    stretched->config.context = int(tokens);
    return stretched;
}

std::map<std::string, const Tensor *> Model::parameters() const
{
    return parameterMap<const Model, const Tensor *>(*this);
}

std::map<std::string, Tensor *> Model::parameters()
{
    return parameterMap<Model, Tensor *>(*this);
}

int64_t Model::parameterCountOf(const ModelConfig &config)
{
    Model m;
    m.config = config;
    m.allocateBlocks();
    int64_t n = 0;
    forEachParameter(m, [&n](const std::string &, const Shape &shape, Tensor &) {
        int64_t elements = 1;
        for (const int64_t d : shape)
            elements *= d;
        n += elements;
    });
    return n;
}

int64_t Model::parameterCount() const
{
    int64_t n = 0;
    for (const auto &[name, t] : parameters())
        n += t->numel();
    return n;
}

} // namespace atlas
