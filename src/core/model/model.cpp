#include "model/model.h"

#include "io/atomicfile.h"
#include "io/limits.h"
#include "io/modelfile.h"
#include "io/safetensors.h"
#include "model/configjson.h"
#include "model/parameternames.h"
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

// The family's embedding and the prefix its …ForCausalLM class adds to every other key.
std::pair<std::string, std::string> embeddingAndPrefix(const ModelConfig &c)
{
    return {modelParameter(c, ModelPart::Embedding) + ".weight", modelPrefix(c.family)};
}

// Every parameter of block `i` of stack `s`: visit(name, expected shape, the tensor that holds it), in the order of
// Hugging Face's GPT-2 files.
template <typename Block, typename Visit>
void forEachBlockParameter(Block &b, const ModelConfig &c, const names::Stack &s, int i, Visit &visit)
{
    const int64_t D = c.dModel, F = c.dFF;
    auto name = [&](BlockPart part) { return blockParameter(c, s, i, part); };
    auto conv1d = [&](BlockPart part, int64_t in, int64_t out, auto &weight, auto &bias) { // GPT-2's [in, out]
        visit(name(part) + ".weight", Shape {in, out}, weight);
        visit(name(part) + ".bias", Shape {out}, bias);
    };
    auto norm = [&](BlockPart part, auto &weight, auto &bias) {
        visit(name(part) + ".weight", Shape {D}, weight);
        visit(name(part) + ".bias", Shape {D}, bias);
    };
    if (c.positions == PositionKind::Shaw)
        visit(name(BlockPart::RelativeKey) + ".weight", Shape {2 * int64_t(c.relativeClip) + 1, c.headDim()},
            b.relativeKey);
    if (c.normaliser == Normaliser::LearnedEntmax)
        visit(name(BlockPart::AlphaLogit), Shape {c.heads}, b.alphaLogit);
    if (c.adaptiveSpan())
        visit(name(BlockPart::SpanFraction), Shape {c.heads}, b.spanFraction);
    if (c.sinkhorn.active()) {
        const int64_t N = c.sinkhorn.blocks(c.context);
        conv1d(BlockPart::SortFc, D, D, b.sortFcWeight, b.sortFcBias);
        conv1d(BlockPart::SortProj, D, N, b.sortProjWeight, b.sortProjBias);
    }
    norm(BlockPart::NormAttention, b.ln1Weight, b.ln1Bias);
    conv1d(BlockPart::Qkv, D, 3 * D, b.attnWeight, b.attnBias);
    conv1d(BlockPart::Out, D, D, b.attnProjWeight, b.attnProjBias);
    if (s == names::kDecoderStack) {
        norm(BlockPart::NormCross, b.lnCrossWeight, b.lnCrossBias);
        conv1d(BlockPart::CrossQ, D, D, b.crossQWeight, b.crossQBias);
        conv1d(BlockPart::CrossKv, D, 2 * D, b.crossKvWeight, b.crossKvBias);
        conv1d(BlockPart::CrossOut, D, D, b.crossProjWeight, b.crossProjBias);
    }
    norm(BlockPart::NormFfn, b.ln2Weight, b.ln2Bias);
    if (!c.isMoeLayer(i)) {
        conv1d(BlockPart::Up, D, F, b.fcWeight, b.fcBias);
        conv1d(BlockPart::Down, F, D, b.fcProjWeight, b.fcProjBias);
        return;
    }
    visit(name(BlockPart::Router) + ".weight", Shape {D, c.experts}, b.routerWeight);
    for (size_t e = 0; e < b.experts.size(); ++e) {
        const std::string up = expertParameter(c, i, int(e), BlockPart::Up),
                          down = expertParameter(c, i, int(e), BlockPart::Down);
        visit(up + ".weight", Shape {D, F}, b.experts[e].fcWeight);
        visit(up + ".bias", Shape {F}, b.experts[e].fcBias);
        visit(down + ".weight", Shape {F, D}, b.experts[e].fcProjWeight);
        visit(down + ".bias", Shape {D}, b.experts[e].fcProjBias);
    }
}

// Every parameter of block `i` of a Llama-family model (Hugging Face's LlamaDecoderLayer, MistralDecoderLayer,
// Qwen2DecoderLayer), in nn.Linear layout [out, in].
template <typename Block, typename Visit>
void forEachLlamaBlockParameter(Block &b, const ModelConfig &c, int i, Visit &visit)
{
    const int64_t D = c.dModel, F = c.dFF, Q = int64_t(c.heads) * c.headDim(),
                  KV = int64_t(c.kvHeadCount()) * c.headDim();
    auto name = [&](BlockPart part) { return blockParameter(c, names::kOnlyStack, i, part); };
    auto linear = [&](BlockPart part, int64_t out, int64_t in, bool bias, auto &weight, auto &biasTensor) {
        visit(name(part) + ".weight", Shape {out, in}, weight);
        if (bias)
            visit(name(part) + ".bias", Shape {out}, biasTensor);
    };
    // OLMo 2 normalises each sub-layer's output and nothing before it; Gemma 2 both (its "sandwich").
    const bool afterSublayer = c.layerNorm == LayerNormPlacement::AfterSublayer,
               normsOutputs = afterSublayer || c.layerNorm == LayerNormPlacement::Sandwich;
    if (!afterSublayer)
        visit(name(BlockPart::NormAttention) + ".weight", Shape {D}, b.ln1Weight);
    if (c.fusesProjections()) { // Phi-3's qkv_proj: rows [Q K V]
        linear(BlockPart::Qkv, Q + 2 * KV, D, false, b.qkvWeight, b.qkvBias);
    } else {
        linear(BlockPart::Q, Q, D, c.qkvBias, b.qWeight, b.qBias);
        linear(BlockPart::K, KV, D, c.qkvBias, b.kWeight, b.kBias);
        linear(BlockPart::V, KV, D, c.qkvBias, b.vWeight, b.vBias);
    }
    linear(BlockPart::Out, D, Q, c.outBias, b.oWeight, b.oBias);
    if (c.qkNorm != QkNorm::None) { // Qwen3's q_norm and k_norm over one head's d, OLMo 2's over the projections
        const bool heads = c.qkNorm == QkNorm::Heads;
        visit(name(BlockPart::QNorm) + ".weight", Shape {heads ? c.headDim() : Q}, b.qNormWeight);
        visit(name(BlockPart::KNorm) + ".weight", Shape {heads ? c.headDim() : KV}, b.kNormWeight);
    }
    if (normsOutputs)
        visit(name(BlockPart::NormAttentionOut) + ".weight", Shape {D}, b.attnOutNormWeight);
    if (!afterSublayer)
        visit(name(BlockPart::NormFfn) + ".weight", Shape {D}, b.ln2Weight);
    if (c.isMoeLayer(i)) { // Mixtral's block_sparse_moe: a router (gate) and SwiGLU experts
        visit(name(BlockPart::Router) + ".weight", Shape {c.experts, D}, b.routerWeight);
        for (size_t e = 0; e < b.experts.size(); ++e) {
            auto expert = [&](BlockPart part) { return expertParameter(c, i, int(e), part) + ".weight"; };
            visit(expert(BlockPart::Gate), Shape {F, D}, b.experts[e].gateWeight);
            visit(expert(BlockPart::Down), Shape {D, F}, b.experts[e].downWeight);
            visit(expert(BlockPart::Up), Shape {F, D}, b.experts[e].upWeight);
        }
        return;
    }
    if (c.fusesProjections()) { // Phi-3's gate_up_proj: the gate's rows, then up's
        visit(name(BlockPart::Gate) + ".weight", Shape {2 * F, D}, b.gateUpWeight);
    } else {
        linear(BlockPart::Gate, F, D, c.mlpBias, b.gateWeight, b.gateBias);
        linear(BlockPart::Up, F, D, c.mlpBias, b.upWeight, b.upBias);
    }
    linear(BlockPart::Down, D, F, c.mlpBias, b.downWeight, b.downBias);
    if (normsOutputs)
        visit(name(BlockPart::NormFfnOut) + ".weight", Shape {D}, b.ffnOutNormWeight);
}

// GPT-NeoX's block i (GPTNeoXLayer), and GPT-Neo's (GPTNeoBlock).
template <typename Block, typename Visit>
void forEachNeoBlockParameter(Block &b, const ModelConfig &c, int i, Visit &visit)
{
    const int64_t D = c.dModel, F = c.dFF;
    auto name = [&](BlockPart part) { return blockParameter(c, names::kOnlyStack, i, part); };
    auto linear = [&](BlockPart part, int64_t out, int64_t in, bool bias, auto &weight, auto &biasTensor) {
        visit(name(part) + ".weight", Shape {out, in}, weight);
        if (bias)
            visit(name(part) + ".bias", Shape {out}, biasTensor);
    };
    auto norm = [&](BlockPart part, auto &weight, auto &bias) {
        visit(name(part) + ".weight", Shape {D}, weight);
        visit(name(part) + ".bias", Shape {D}, bias);
    };
    norm(BlockPart::NormAttention, b.ln1Weight, b.ln1Bias);
    if (c.family == Family::GptNeoX) {
        linear(BlockPart::Qkv, 3 * D, D, c.qkvBias, b.qkvWeight, b.qkvBias);
    } else {
        linear(BlockPart::Q, D, D, false, b.qWeight, b.qBias);
        linear(BlockPart::K, D, D, false, b.kWeight, b.kBias);
        linear(BlockPart::V, D, D, false, b.vWeight, b.vBias);
    }
    linear(BlockPart::Out, D, D, c.family == Family::GptNeoX ? c.outBias : true, b.oWeight, b.oBias);
    norm(BlockPart::NormFfn, b.ln2Weight, b.ln2Bias);
    linear(BlockPart::Up, F, D, true, b.upWeight, b.upBias);
    linear(BlockPart::Down, D, F, true, b.downWeight, b.downBias);
}

// BERT's block i (BertLayer), post-LN: attention, output.dense, LayerNorm; intermediate, output, LayerNorm.
template <typename Block, typename Visit>
void forEachBertBlockParameter(Block &b, const ModelConfig &c, int i, Visit &visit)
{
    const int64_t D = c.dModel, F = c.dFF;
    auto name = [&](BlockPart part) { return blockParameter(c, names::kOnlyStack, i, part); };
    auto linear = [&](BlockPart part, int64_t out, int64_t in, auto &weight, auto &bias) {
        visit(name(part) + ".weight", Shape {out, in}, weight);
        visit(name(part) + ".bias", Shape {out}, bias);
    };
    linear(BlockPart::Q, D, D, b.qWeight, b.qBias);
    linear(BlockPart::K, D, D, b.kWeight, b.kBias);
    linear(BlockPart::V, D, D, b.vWeight, b.vBias);
    if (c.positions == PositionKind::Shaw) // position_embedding_type relative_key
        visit(name(BlockPart::RelativeKey) + ".weight", Shape {2 * int64_t(c.relativeClip) + 1, c.headDim()},
            b.relativeKey);
    auto norm = [&](BlockPart part, auto &weight, auto &bias) {
        visit(name(part) + ".weight", Shape {D}, weight);
        visit(name(part) + ".bias", Shape {D}, bias);
    };
    linear(BlockPart::Out, D, D, b.oWeight, b.oBias);
    norm(BlockPart::NormAttention, b.ln1Weight, b.ln1Bias);
    linear(BlockPart::Up, F, D, b.upWeight, b.upBias);
    linear(BlockPart::Down, D, F, b.downWeight, b.downBias);
    norm(BlockPart::NormFfn, b.ln2Weight, b.ln2Bias);
}

// BERT's embeddings, blocks and heads (BertForMaskedLM, BertForPreTraining).
template <typename ModelT, typename Visit> void forEachBertParameter(ModelT &m, Visit &visit)
{
    const ModelConfig &c = m.config;
    const int64_t D = c.dModel;
    auto name = [&](ModelPart part) { return modelParameter(c, part); };
    auto linear = [&](ModelPart part, int64_t out, int64_t in, auto &weight, auto &bias) {
        visit(name(part) + ".weight", Shape {out, in}, weight);
        visit(name(part) + ".bias", Shape {out}, bias);
    };
    visit(name(ModelPart::Embedding) + ".weight", Shape {c.vocab, D}, m.wte);
    visit(name(ModelPart::Positions) + ".weight", Shape {c.context, D}, m.wpe);
    visit(name(ModelPart::TokenTypes) + ".weight", Shape {c.tokenTypes, D}, m.wtt);
    visit(name(ModelPart::EmbeddingNorm) + ".weight", Shape {D}, m.embedLnWeight);
    visit(name(ModelPart::EmbeddingNorm) + ".bias", Shape {D}, m.embedLnBias);
    for (size_t i = 0; i < m.blocks.size(); ++i)
        forEachBertBlockParameter(m.blocks[i], c, int(i), visit);
    linear(ModelPart::MlmTransform, D, D, m.headDenseWeight, m.headDenseBias);
    visit(name(ModelPart::MlmNorm) + ".weight", Shape {D}, m.lnfWeight);
    visit(name(ModelPart::MlmNorm) + ".bias", Shape {D}, m.lnfBias);
    visit(name(ModelPart::MlmOutput) + ".bias", Shape {c.vocab}, m.outputBias);
    if (!c.nspHead)
        return;
    linear(ModelPart::Pooler, D, D, m.poolerWeight, m.poolerBias);
    linear(ModelPart::NextSentence, 2, D, m.nspWeight, m.nspBias);
}

// T5's stacks (T5ForConditionalGeneration): block i of the encoder holds layer.0 (self-attention) and layer.1 (the
// feed-forward sub-layer); of the decoder, layer.0, layer.1 (cross-attention, EncDecAttention) and layer.2. Each
// stack's block 0 holds its relative position table. nn.Linear layout, no biases, RMS layer norms.
template <typename ModelT, typename Visit> void forEachT5Parameter(ModelT &m, Visit &visit)
{
    const ModelConfig &c = m.config;
    const int64_t D = c.dModel, F = c.dFF, I = c.innerDim();
    visit(modelParameter(c, ModelPart::Embedding) + ".weight", Shape {c.vocab, D}, m.wte);
    for (const bool encoder : {true, false}) {
        const names::Stack &stack = encoder ? names::kEncoderStack : names::kDecoderStack;
        auto &blocks = encoder ? m.encoderBlocks : m.blocks;
        for (size_t i = 0; i < blocks.size(); ++i) {
            auto &b = blocks[i];
            auto weight = [&](BlockPart part, const Shape &shape, auto &tensor) {
                visit(blockParameter(c, stack, int(i), part) + ".weight", shape, tensor);
            };
            weight(BlockPart::Q, Shape {I, D}, b.qWeight);
            weight(BlockPart::K, Shape {I, D}, b.kWeight);
            weight(BlockPart::V, Shape {I, D}, b.vWeight);
            weight(BlockPart::Out, Shape {D, I}, b.oWeight);
            if (i == 0)
                weight(BlockPart::RelativeBias, Shape {c.relativeBuckets, c.heads},
                    encoder ? m.encoderRelativeBias : m.relativeBias);
            weight(BlockPart::NormAttention, Shape {D}, b.ln1Weight);
            if (!encoder) {
                weight(BlockPart::CrossQ, Shape {I, D}, b.crossQWeight);
                weight(BlockPart::CrossK, Shape {I, D}, b.crossKWeight);
                weight(BlockPart::CrossV, Shape {I, D}, b.crossVWeight);
                weight(BlockPart::CrossOut, Shape {D, I}, b.crossProjWeight);
                weight(BlockPart::NormCross, Shape {D}, b.lnCrossWeight);
            }
            if (c.gatedFfn)
                weight(BlockPart::Gate, Shape {F, D}, b.gateWeight);
            weight(BlockPart::Up, Shape {F, D}, b.upWeight);
            weight(BlockPart::Down, Shape {D, F}, b.downWeight);
            weight(BlockPart::NormFfn, Shape {D}, b.ln2Weight);
        }
        visit(modelParameter(c, ModelPart::FinalNorm, stack) + ".weight", Shape {D},
            encoder ? m.encoderLnfWeight : m.lnfWeight);
    }
    if (!c.tiedHead)
        visit(modelParameter(c, ModelPart::OutputHead) + ".weight", Shape {c.vocab, D}, m.lmHead);
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
    auto name
        = [&](ModelPart part, const names::Stack &stack = names::kOnlyStack) { return modelParameter(c, part, stack); };
    auto finalNorm = [&](const names::Stack &stack, auto &weight, auto &bias) {
        visit(name(ModelPart::FinalNorm, stack) + ".weight", Shape {D}, weight);
        if (c.family != Family::Llama) // RMSNorm there, without a bias
            visit(name(ModelPart::FinalNorm, stack) + ".bias", Shape {D}, bias);
    };
    visit(name(ModelPart::Embedding) + ".weight", Shape {c.vocab, D}, m.wte);
    if (c.positions == PositionKind::Learned)
        visit(name(ModelPart::Positions) + ".weight", Shape {c.context, D}, m.wpe);
    if (c.positions == PositionKind::T5)
        visit(name(ModelPart::RelativeBias) + ".weight", Shape {c.relativeBuckets, c.heads}, m.relativeBias);
    if (c.isEncoderDecoder()) {
        for (size_t i = 0; i < m.encoderBlocks.size(); ++i)
            forEachBlockParameter(m.encoderBlocks[i], c, names::kEncoderStack, int(i), visit);
        finalNorm(names::kEncoderStack, m.encoderLnfWeight, m.encoderLnfBias);
    }
    const names::Stack decoder = c.isEncoderDecoder() ? names::kDecoderStack : names::kOnlyStack;
    for (size_t i = 0; i < m.blocks.size(); ++i) {
        if (c.family == Family::Llama)
            forEachLlamaBlockParameter(m.blocks[i], c, int(i), visit);
        else if (c.family == Family::GptNeoX || c.family == Family::GptNeo)
            forEachNeoBlockParameter(m.blocks[i], c, int(i), visit);
        else
            forEachBlockParameter(m.blocks[i], c, decoder, int(i), visit);
    }
    finalNorm(decoder, m.lnfWeight, m.lnfBias);
    if (!c.tiedHead && c.family != Family::Gpt2)
        visit(name(ModelPart::OutputHead) + ".weight", Shape {c.vocab, D}, m.lmHead);
}

template <typename ModelT, typename Ptr> std::map<std::string, Ptr> parameterMap(ModelT &m)
{
    std::map<std::string, Ptr> out;
    forEachParameter(m, [&out](const std::string &name, const Shape &, auto &tensor) { out[name] = &tensor; });
    return out;
}

// Hugging Face files may prefix every key with "transformer." (GPT2LMHeadModel) or not (GPT2Model); the Llama family
// with "model." (LlamaForCausalLM) or not (LlamaModel), lm_head.weight never; a multimodal model's language model with
// its wrapper's prefix (ModelConfig::checkpointPrefixes).
std::string detectPrefix(const SafetensorsCheckpoint &file, const ModelConfig &config)
{
    const auto [embedding, prefixed] = embeddingAndPrefix(config);
    if (file.contains(embedding) && config.multimodalType.empty())
        return "";
    for (const std::string &prefix : config.checkpointPrefixes())
        if (file.contains(prefix + embedding))
            return prefix;
    if (!config.multimodalType.empty())
        throw Error(file.describe() + ": no '" + config.checkpointPrefixes().front() + embedding + "' (nor '"
            + config.checkpointPrefixes().back() + embedding + "'): not the language model of a "
            + config.multimodalType + " checkpoint");
    if (!config.modelTypeGiven) // read as GPT-2's, which it may not be
        throw Error(file.describe() + ": no '" + embedding + "' (nor '" + prefixed + embedding
            + "'), GPT-2's embedding: config.json has no 'model_type', so it was read as a gpt2 config; add the "
              "model's \"model_type\" ("
            + configjson::knownModelTypes() + ")");
    throw Error(file.describe() + ": no '" + embedding + "' (nor '" + prefixed + embedding + "'): not a "
        + config.modelType + " model file");
}

// The heads outside the base model keep their own names (lm_head, embed_out, BERT's cls.*); a multimodal wrapper
// saved before transformers 4.52 kept its language model's head inside it (language_model.lm_head).
std::string checkpointKey(const ModelConfig &c, const std::string &prefix, const std::string &name)
{
    const bool head = name == modelParameter(c, ModelPart::OutputHead) + ".weight" || name.starts_with("cls.");
    if (head && prefix == "language_model.model.")
        return "language_model." + name;
    return head ? name : prefix + name;
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
        std::string key = checkpointKey(m.config, prefix, name);
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
            prefixed[checkpointKey(config, modelPrefix(config.family), name)] = tensor;
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
        // A norm scales by 1 at the start: γ = 1, or Gemma's stored γ − 1 = 0 (Gemma2RMSNorm's zeros).
        tensor = Tensor(shape, isNorm && !isBias && !config.normAddsOne ? 1.0f : 0.0f);
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
