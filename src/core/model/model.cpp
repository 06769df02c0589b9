#include "model/model.h"

#include "io/atomicfile.h"
#include "io/limits.h"
#include "io/safetensors.h"
#include "trace/names.h"
#include "util/error.h"

#include <filesystem>
#include <random>

namespace atlas {

namespace {

namespace fs = std::filesystem;

struct ParamSlot
{
    std::string name;
    Shape shape;
};

// Every parameter of block `i` of stack `s`, with its name and expected shape.
void blockParameters(std::vector<ParamSlot> &slots, const ModelConfig &c, const names::Stack &s, int i)
{
    const int64_t D = c.dModel, F = c.dFF;
    const std::string p = names::parameterPrefix(s, i);
    if (c.positions == PositionKind::Shaw)
        slots.push_back({p + "attn.relative_key.weight", {2 * int64_t(c.relativeClip) + 1, c.headDim()}});
    slots.insert(slots.end(),
        {
            {p + "ln_1.weight", {D}},
            {p + "ln_1.bias", {D}},
            {p + "attn.c_attn.weight", {D, 3 * D}},
            {p + "attn.c_attn.bias", {3 * D}},
            {p + "attn.c_proj.weight", {D, D}},
            {p + "attn.c_proj.bias", {D}},
        });
    if (s == names::kDecoderStack)
        slots.insert(slots.end(),
            {
                {p + "ln_cross_attn.weight", {D}},
                {p + "ln_cross_attn.bias", {D}},
                {p + "crossattention.q_attn.weight", {D, D}},
                {p + "crossattention.q_attn.bias", {D}},
                {p + "crossattention.c_attn.weight", {D, 2 * D}},
                {p + "crossattention.c_attn.bias", {2 * D}},
                {p + "crossattention.c_proj.weight", {D, D}},
                {p + "crossattention.c_proj.bias", {D}},
            });
    slots.insert(slots.end(), {{p + "ln_2.weight", {D}}, {p + "ln_2.bias", {D}}});
    if (!c.isMoeLayer(i)) {
        slots.insert(slots.end(),
            {{p + "mlp.c_fc.weight", {D, F}}, {p + "mlp.c_fc.bias", {F}}, {p + "mlp.c_proj.weight", {F, D}},
                {p + "mlp.c_proj.bias", {D}}});
        return;
    }
    slots.push_back({p + "mlp.router.weight", {D, c.experts}});
    for (int e = 0; e < c.experts; ++e) {
        const std::string x = names::expertPrefix(i, e);
        slots.insert(slots.end(),
            {{x + "c_fc.weight", {D, F}}, {x + "c_fc.bias", {F}}, {x + "c_proj.weight", {F, D}},
                {x + "c_proj.bias", {D}}});
    }
}

// Every parameter the config requires, with its name and expected shape.
std::vector<ParamSlot> expectedParameters(const ModelConfig &c)
{
    const int64_t D = c.dModel;
    std::vector<ParamSlot> slots = {{"wte.weight", {c.vocab, D}}};
    if (c.positions == PositionKind::Learned)
        slots.push_back({"wpe.weight", {c.context, D}});
    if (c.positions == PositionKind::T5)
        slots.push_back({"relative_attention_bias.weight", {c.relativeBuckets, c.heads}});
    if (c.isEncoderDecoder()) {
        for (int i = 0; i < c.encoderLayers; ++i)
            blockParameters(slots, c, names::kEncoderStack, i);
        const std::string lnf = std::string(names::kEncoderStack.parameters) + "ln_f.";
        slots.insert(slots.end(), {{lnf + "weight", {D}}, {lnf + "bias", {D}}});
    }
    const names::Stack decoder = c.isEncoderDecoder() ? names::kDecoderStack : names::kOnlyStack;
    for (int i = 0; i < c.layers; ++i)
        blockParameters(slots, c, decoder, i);
    slots.push_back({"ln_f.weight", {D}});
    slots.push_back({"ln_f.bias", {D}});
    return slots;
}

template <typename Block, typename Ptr>
void blockParameterMap(std::map<std::string, Ptr> &out, Block &b, const ModelConfig &c, const names::Stack &s, int i)
{
    const std::string p = names::parameterPrefix(s, i);
    if (c.positions == PositionKind::Shaw)
        out[p + "attn.relative_key.weight"] = &b.relativeKey;
    out[p + "ln_1.weight"] = &b.ln1Weight;
    out[p + "ln_1.bias"] = &b.ln1Bias;
    out[p + "attn.c_attn.weight"] = &b.attnWeight;
    out[p + "attn.c_attn.bias"] = &b.attnBias;
    out[p + "attn.c_proj.weight"] = &b.attnProjWeight;
    out[p + "attn.c_proj.bias"] = &b.attnProjBias;
    if (s == names::kDecoderStack) {
        out[p + "ln_cross_attn.weight"] = &b.lnCrossWeight;
        out[p + "ln_cross_attn.bias"] = &b.lnCrossBias;
        out[p + "crossattention.q_attn.weight"] = &b.crossQWeight;
        out[p + "crossattention.q_attn.bias"] = &b.crossQBias;
        out[p + "crossattention.c_attn.weight"] = &b.crossKvWeight;
        out[p + "crossattention.c_attn.bias"] = &b.crossKvBias;
        out[p + "crossattention.c_proj.weight"] = &b.crossProjWeight;
        out[p + "crossattention.c_proj.bias"] = &b.crossProjBias;
    }
    out[p + "ln_2.weight"] = &b.ln2Weight;
    out[p + "ln_2.bias"] = &b.ln2Bias;
    if (!c.isMoeLayer(i)) {
        out[p + "mlp.c_fc.weight"] = &b.fcWeight;
        out[p + "mlp.c_fc.bias"] = &b.fcBias;
        out[p + "mlp.c_proj.weight"] = &b.fcProjWeight;
        out[p + "mlp.c_proj.bias"] = &b.fcProjBias;
        return;
    }
    out[p + "mlp.router.weight"] = &b.routerWeight;
    for (size_t e = 0; e < b.experts.size(); ++e) {
        const std::string x = names::expertPrefix(i, int(e));
        out[x + "c_fc.weight"] = &b.experts[e].fcWeight;
        out[x + "c_fc.bias"] = &b.experts[e].fcBias;
        out[x + "c_proj.weight"] = &b.experts[e].fcProjWeight;
        out[x + "c_proj.bias"] = &b.experts[e].fcProjBias;
    }
}

template <typename ModelT, typename Ptr> std::map<std::string, Ptr> parameterMap(ModelT &m)
{
    std::map<std::string, Ptr> out = {{"wte.weight", &m.wte}, {"ln_f.weight", &m.lnfWeight}, {"ln_f.bias", &m.lnfBias}};
    if (m.config.positions == PositionKind::Learned)
        out["wpe.weight"] = &m.wpe;
    if (m.config.positions == PositionKind::T5)
        out["relative_attention_bias.weight"] = &m.relativeBias;
    if (m.config.isEncoderDecoder()) {
        for (size_t i = 0; i < m.encoderBlocks.size(); ++i)
            blockParameterMap(out, m.encoderBlocks[i], m.config, names::kEncoderStack, int(i));
        const std::string lnf = std::string(names::kEncoderStack.parameters) + "ln_f.";
        out[lnf + "weight"] = &m.encoderLnfWeight;
        out[lnf + "bias"] = &m.encoderLnfBias;
    }
    const names::Stack decoder = m.config.isEncoderDecoder() ? names::kDecoderStack : names::kOnlyStack;
    for (size_t i = 0; i < m.blocks.size(); ++i)
        blockParameterMap(out, m.blocks[i], m.config, decoder, int(i));
    return out;
}

// Hugging Face files may prefix every key with "transformer." (GPT2LMHeadModel) or not (GPT2Model).
std::string detectPrefix(const SafetensorsFile &file)
{
    if (file.contains("wte.weight"))
        return "";
    if (file.contains("transformer.wte.weight"))
        return "transformer.";
    throw Error(file.path() + ": no 'wte.weight' (nor 'transformer.wte.weight'): not a GPT-2 model file");
}

} // namespace

Model Model::load(const std::string &directory)
{
    const fs::path dir(directory);
    if (!fs::is_directory(dir))
        throw Error(directory + ": not a model directory (expected config.json and model.safetensors in it)");
    const std::string configPath = (dir / "config.json").string();
    if (!fs::exists(configPath))
        throw Error(configPath + ": missing (a model directory needs config.json and model.safetensors)");
    Model m;
    m.config = ModelConfig::fromJson(readFile(configPath, limits::kSpecBytes), configPath);
    m.directory = directory;
    m.name = dir.filename().empty() ? dir.parent_path().filename().string() : dir.filename().string();
    m.allocateBlocks();

    const std::string weightsPath = (dir / "model.safetensors").string();
    if (!fs::exists(weightsPath))
        throw Error(weightsPath + ": missing (a model directory needs config.json and model.safetensors)");
    const SafetensorsFile file(weightsPath);
    const std::string prefix = detectPrefix(file);
    auto params = m.parameters();
    for (const ParamSlot &slot : expectedParameters(m.config)) {
        const std::string key = prefix + slot.name;
        if (!file.contains(key))
            throw Error(weightsPath + ": tensor '" + key + "' is missing (required by config.json)");
        Tensor t = file.tensor(key);
        if (t.shape() != slot.shape)
            throw Error(weightsPath + ": tensor '" + key + "' has shape " + t.shapeString() + ", config.json implies "
                + Tensor::shapeString(slot.shape));
        *params.at(slot.name) = std::move(t);
    }
    return m;
}

void Model::save(const std::string &directory, const std::map<std::string, std::string> &metadata) const
{
    std::map<std::string, std::string> header = {{"format", "pt"}, {"producer", "transformer-atlas"}};
    header.insert(metadata.begin(), metadata.end());
    std::error_code ec;
    fs::create_directories(directory, ec);
    if (ec)
        throw Error(directory + ": cannot create directory: " + ec.message());
    writeSafetensors((fs::path(directory) / "model.safetensors").string(), parameters(), header);
    writeFileAtomically((fs::path(directory) / "config.json").string(), config.toJson());
}

Model Model::random(const ModelConfig &config, uint64_t seed)
{
    config.validate("model config");
    Model m;
    m.config = config;
    m.name = "random";
    m.allocateBlocks();
    std::mt19937_64 rng(seed);
    std::normal_distribution<float> normal(0.0f, 0.02f);
    for (const ParamSlot &slot : expectedParameters(config)) {
        const bool isNorm = slot.name.find("ln_") != std::string::npos;
        const bool isBias = slot.name.ends_with(".bias");
        Tensor t(slot.shape, isNorm && !isBias ? 1.0f : 0.0f);
        if (!isNorm && !isBias)
            for (float &v : t.values())
                v = normal(rng);
        *m.parameters().at(slot.name) = std::move(t);
    }
    return m;
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

int64_t Model::parameterCount() const
{
    int64_t n = 0;
    for (const auto &[name, t] : parameters())
        n += t->numel();
    return n;
}

} // namespace atlas
