#include "model/model.h"

#include "io/atomicfile.h"
#include "io/limits.h"
#include "io/modelfile.h"
#include "io/safetensors.h"
#include "model/configjson.h"
#include "model/ggufmodel.h"
#include "model/parameterbinding.h"
#include "model/parameternames.h"
#include "trace/names.h"
#include "util/error.h"
#include "util/memorycheck.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <random>
#include <set>

namespace atlas {

namespace {

namespace fs = std::filesystem;

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
    const SafetensorsCheckpoint file(directory);
    const std::string prefix = detectPrefix(file, m.config);
    m.allocateBlocks();
    // float32, but for gpt-oss's experts where the checkpoint holds MXFP4 blocks, kept as they are (17 bytes per 32)
    const auto mxfp4 = [&](const std::string &key) {
        return m.config.stacksExperts() && !file.contains(key) && file.containsMxfp4(key);
    };
    double bytes = 0, packed = 0;
    forEachParameter(m, [&](const std::string &name, const Shape &shape, Tensor &, bool) {
        const bool blocks = mxfp4(checkpointKey(m.config, prefix, name));
        bytes += double(Tensor::count(shape)) * (blocks ? 17.0 / 32.0 : double(sizeof(float)));
        packed += blocks ? double(Tensor::count(shape)) : 0.0;
    });
    checkFitsInMemory(bytes,
        directory + ": its " + std::to_string(Model::parameterCountOf(m.config)) + " parameters, held as float32"
            + (packed > 0 ? " but for the " + std::to_string(int64_t(packed)) + " kept in their MXFP4 blocks" : "")
            + ",");
    if (m.config.family == Family::T5 && !file.contains("decoder.final_layer_norm.weight"))
        throw Error(file.describe() + ": no decoder (decoder.*): a T5 encoder alone (T5EncoderModel) has no logits to "
            + "show; T5ForConditionalGeneration checkpoints open");
    if (m.config.family == Family::Bert) {
        if (!file.contains("cls.predictions.bias"))
            throw Error(file.describe() + ": no masked-LM head (cls.predictions.*): a BertModel without heads has no "
                + "logits to show; BertForMaskedLM and BertForPreTraining checkpoints open");
        m.config.nspHead = file.contains("cls.seq_relationship.weight");
    }
    forEachParameter(m, [&](const std::string &name, const Shape &shape, Tensor &tensor, bool conv1d) {
        std::string key = checkpointKey(m.config, prefix, name);
        if (!file.contains(key) && file.contains(legacyLayerNormKey(key)))
            key = legacyLayerNormKey(key);
        if (mxfp4(key)) {
            tensor = file.mxfp4Tensor(key);
            if (tensor.shape() != shape)
                throw Error(file.pathOf(key + "_blocks") + ": tensor '" + key + "_blocks' decodes to shape "
                    + tensor.shapeString() + ", config.json implies " + Tensor::shapeString(shape));
            return;
        }
        if (!file.contains(key))
            throw Error(file.describe() + ": tensor '" + key + "' is missing (required by config.json)");
        const SafetensorsFile::Entry &entry = file.entry(key);
        const Shape stored = conv1d ? Shape {shape[1], shape[0]} : shape; // Conv1D's [in, out]
        if (entry.shape != stored)
            throw Error(file.pathOf(key) + ": tensor '" + key + "' has shape " + Tensor::shapeString(entry.shape)
                + ", config.json implies " + Tensor::shapeString(stored));
        tensor = conv1d ? transposedMatrix(file.tensor(key)) : file.tensor(key);
    });
    m.dtype = file.dtype();
    m.tieSharedBlocks();
    return m;
}

} // namespace

Model Model::load(const std::string &directory)
{
    try {
        if (isGgufFile(directory))
            return loadGgufModel(directory);
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
    std::map<std::string, const Tensor *> tensors;
    std::vector<std::unique_ptr<Tensor>> conv1dCopies; // GPT-2's matrices back in its checkpoint's [in, out]
    forEachParameter(*this, [&](const std::string &name, const Shape &, const Tensor &tensor, bool conv1d) {
        if (conv1d)
            conv1dCopies.push_back(std::make_unique<Tensor>(transposedMatrix(tensor)));
        tensors[name] = conv1d ? conv1dCopies.back().get() : &tensor;
    });
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

namespace {

// The matrices that fuse Q, K and V (or K and V) into one: Xavier counts them as their query's matrix.
std::set<const Tensor *> fusedProjections(Model &m)
{
    std::set<const Tensor *> fused;
    for (std::vector<BlockWeights> *stack : {&m.blocks, &m.encoderBlocks})
        for (BlockWeights &b : *stack)
            for (const BlockPart part : {BlockPart::Qkv, BlockPart::CrossKv})
                fused.insert(&b.weight(part));
    return fused;
}

// Xavier-uniform's half-width a = √(6 / (fan_in + fan_out)) for a matrix of `shape` (a stack's per matrix: its last
// two sides); a fused projection counted as its query's matrix, D + H·d.
float xavierBound(const ModelConfig &c, const Shape &shape, bool fused)
{
    const size_t n = shape.size();
    const double fans = fused ? double(c.dModel + c.innerDim()) : double(shape[n - 2] + shape[n - 1]);
    return float(std::sqrt(6.0 / fans));
}

} // namespace

Model Model::random(const ModelConfig &config, uint64_t seed, WeightInit init)
{
    config.validate("model config");
    checkWeightsFit(config, "a model of this shape");
    Model m;
    m.config = config;
    m.name = "random";
    m.allocateBlocks();
    std::mt19937_64 rng(seed);
    std::normal_distribution<float> normal(0.0f, 0.02f);
    // By role: a norm's γ scales by 1 at the start (Gemma's stored γ − 1 by 0, Gemma2RMSNorm's zeros), its β and every
    // bias start at 0, and so do the spans, which grow, as the paper's; everything else is drawn.
    std::set<const Tensor *> norms, zeros;
    for (const ModelParameter &p : modelParameters(config))
        if (p.kind == ModelParameter::Kind::Parameter && isNormPart(p.part) && !p.bias)
            norms.insert(&m.tensorOf(p.part, p.stack, false));
    for (std::vector<BlockWeights> *stack : {&m.blocks, &m.encoderBlocks})
        for (BlockWeights &b : *stack) {
            for (size_t part = 0; part < kBlockPartCount; ++part) {
                if (isNormPart(BlockPart(part)))
                    norms.insert(&b.weight(BlockPart(part)));
                zeros.insert(&b.bias(BlockPart(part))); // gpt-oss's stacked experts' end in "_bias"
            }
            zeros.insert(&b.weight(BlockPart::SpanFraction));
        }
    const std::set<const Tensor *> fused = fusedProjections(m);
    // Drawn in the checkpoint's layout (a Conv1D matrix as [in, out], then transposed), so that a seed gives the
    // weights it gave before the model held every matrix as [out, in].
    forEachParameter(m, [&](const std::string &name, const Shape &shape, Tensor &tensor, bool conv1d) {
        const bool isNorm = norms.contains(&tensor), isBias = name.ends_with(".bias");
        tensor = Tensor(shape, isNorm && !config.normAddsOne ? 1.0f : 0.0f);
        if (isNorm || isBias || zeros.contains(&tensor))
            return;
        Tensor drawn = conv1d ? Tensor({shape[1], shape[0]}) : std::move(tensor);
        if (init == WeightInit::Xavier && shape.size() >= 2) {
            const float a = xavierBound(config, shape, fused.contains(&tensor));
            std::uniform_real_distribution<float> uniform(-a, a);
            for (float &v : drawn.values())
                v = uniform(rng);
        } else {
            for (float &v : drawn.values())
                v = normal(rng);
        }
        tensor = conv1d ? transposedMatrix(drawn) : std::move(drawn);
    });
    // σ(−3) ≈ 0.05: every token starts by running every block (the halting sums to 0.05 (L − 1)), and the ponder cost
    // teaches it to stop earlier. The Universal Transformer starts at σ(1), halting after two steps; its steps share
    // one block, which every step trains, but here a block after every token's halt would get no gradient at all.
    if (config.act.enabled)
        m.haltingBias.values()[0] = -3.0f;
    m.tieSharedBlocks();
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
        for (const float a : blocks.at(size_t(layer)).weight(BlockPart::AlphaLogit).values())
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
    for (const float v : blocks.at(size_t(layer)).weight(BlockPart::SpanFraction).values())
        spans.push_back(std::clamp(v, 0.0f, 1.0f) * float(config.context));
    return spans;
}

void Model::clampSpanFractions()
{
    for (BlockWeights &b : blocks)
        for (float &v : b.weight(BlockPart::SpanFraction).values())
            v = std::clamp(v, 0.0f, 1.0f);
}

void Model::sinusoidalPositions(Tensor &out, int64_t first)
{
    const int64_t T = out.dim(0), D = out.dim(1);
    MatrixMap o = out.matrix();
    for (int64_t t = 0; t < T; ++t)
        for (int64_t i = 0; i < D; i += 2) {
            const double angle = double(first + t) / std::pow(10000.0, double(i) / double(D));
            o(t, i) = static_cast<float>(std::sin(angle));
            if (i + 1 < D)
                o(t, i + 1) = static_cast<float>(std::cos(angle));
        }
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
        b.weight(BlockPart::RelativeKey) = Tensor();
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

Model Model::withDepth(int steps, const std::string &field) const
{
    if (!config.shared.enabled)
        throw Error(field + ": model '" + name + "' has a block of its own at each of its "
            + std::to_string(config.layers)
            + " layers; only a model whose layers share one block (atlas_shared_blocks) runs it another number of "
              "times");
    if (steps < 1 || steps > kMaxSharedSteps)
        throw Error(field + ": " + std::to_string(steps) + " steps; give 1 to " + std::to_string(kMaxSharedSteps));
    Model m = *this;
    m.config.layers = steps;
    m.blocks.assign(size_t(steps), blocks.at(0));
    return m;
}

void Model::tieSharedBlocks()
{
    if (config.shared.enabled)
        for (size_t i = 1; i < blocks.size(); ++i)
            blocks[i] = blocks[0];
}

void Model::allocateBlocks()
{
    blocks.assign(size_t(config.layers), BlockWeights {});
    encoderBlocks.assign(size_t(config.encoderLayers), BlockWeights {});
    for (int i = 0; i < config.layers; ++i)
        if (config.isMoeLayer(i) && !config.stacksExperts()) // gpt-oss's are block parts, stacked
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

namespace {

template <typename M> auto &ownTensor(M &m, ModelPart part, const names::Stack &stack, bool bias)
{
    const bool encoder = stack == names::kEncoderStack;
    switch (part) {
    case ModelPart::Embedding:
        if (!bias)
            return m.wte;
        break;
    case ModelPart::Positions:
        if (!bias)
            return m.wpe;
        break;
    case ModelPart::TokenTypes:
        if (!bias)
            return m.wtt;
        break;
    case ModelPart::EmbeddingNorm:
        return bias ? m.embedLnBias : m.embedLnWeight;
    case ModelPart::RelativeBias:
        if (!bias)
            return m.relativeBias;
        break;
    case ModelPart::FinalNorm:
        if (encoder)
            return bias ? m.encoderLnfBias : m.encoderLnfWeight;
        return bias ? m.lnfBias : m.lnfWeight;
    case ModelPart::OutputHead:
        if (!bias)
            return m.lmHead;
        break;
    case ModelPart::MlmTransform:
        return bias ? m.headDenseBias : m.headDenseWeight;
    case ModelPart::MlmNorm:
        return bias ? m.lnfBias : m.lnfWeight;
    case ModelPart::MlmOutput:
        if (bias)
            return m.outputBias;
        break;
    case ModelPart::Pooler:
        return bias ? m.poolerBias : m.poolerWeight;
    case ModelPart::NextSentence:
        return bias ? m.nspBias : m.nspWeight;
    case ModelPart::Halting:
        return bias ? m.haltingBias : m.haltingWeight;
    }
    throw Error(std::string("a model holds no ") + (bias ? "bias" : "weight") + " for this part");
}

} // namespace

Tensor &Model::tensorOf(ModelPart part, const names::Stack &stack, bool bias)
{
    return ownTensor(*this, part, stack, bias);
}

const Tensor &Model::tensorOf(ModelPart part, const names::Stack &stack, bool bias) const
{
    return ownTensor(*this, part, stack, bias);
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
    forEachParameter(m, [&n](const std::string &, const Shape &shape, Tensor &, bool) {
        int64_t elements = 1;
        for (const int64_t d : shape)
            elements *= d;
        n += elements;
    });
    return n;
}

std::set<std::string> Model::conv1dParameterNames() const
{
    std::set<std::string> names;
    forEachParameter(*this, [&](const std::string &name, const Shape &, const Tensor &, bool conv1d) {
        if (conv1d)
            names.insert(name);
    });
    return names;
}

void Model::transposeConv1dMatrices(std::map<std::string, Tensor> &tensors, size_t skip) const
{
    const std::set<std::string> conv1d = conv1dParameterNames();
    for (auto &[name, t] : tensors)
        if (name.size() >= skip && conv1d.contains(name.substr(skip)))
            t = transposedMatrix(t);
}

int64_t Model::parameterCount() const
{
    int64_t n = 0;
    for (const auto &[name, t] : parameters())
        n += t->numel();
    return n;
}

} // namespace atlas
