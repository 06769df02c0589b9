#include "quantization/quantizationeffect.h"

#include "io/gguf.h"
#include "model/builtinmodels.h"
#include "model/gguflayout.h"
#include "model/ggufmodel.h"
#include "model/parameternames.h"
#include "trace/names.h"
#include "util/error.h"

#include <algorithm>
#include <cmath>
#include <optional>

namespace atlas {

namespace {

struct Role
{
    const char *name, *label;
    BlockPart part;
    const char *output; // the traced tensor whose columns the matrix makes, from `offset` heads of queries on
    // 0: its first column; 1: after the queries (keys); 2: after the queries and the keys (values); 3: after the keys
    // of a product of keys and values (a cross-attention's values)
    int offset;
    // the traced tensors its rows may read, most likely first: "in" is the block's input, "source" the encoder's output
    std::vector<const char *> inputs;
};

const std::vector<Role> &roles()
{
    static const std::vector<Role> kRoles = {
        {"q", "W_q", BlockPart::Q, "attn.qkv", 0, {"ln_1", "in"}},
        {"k", "W_k", BlockPart::K, "attn.qkv", 1, {"ln_1", "in"}},
        {"v", "W_v", BlockPart::V, "attn.qkv", 2, {"ln_1", "in"}},
        {"qkv", "W_qkv", BlockPart::Qkv, "attn.qkv", 0, {"ln_1", "in"}},
        {"o", "W_o", BlockPart::Out, "attn.out", 0, {"attn.merged"}},
        {"up", "W_up", BlockPart::Up, "mlp.up", 0, {"ln_2", "mid"}},
        {"gate", "W_gate", BlockPart::Gate, "mlp.gate", 0, {"ln_2", "mid"}},
        {"down", "W_down", BlockPart::Down, "mlp.down", 0, {"mlp.act"}},
        {"cross_q", "W_q cross", BlockPart::CrossQ, "cross.query", 0, {"ln_cross"}},
        {"cross_k", "W_k cross", BlockPart::CrossK, "cross.kv", 0, {"source"}},
        {"cross_v", "W_v cross", BlockPart::CrossV, "cross.kv", 3, {"source"}},
        {"cross_kv", "W_kv cross", BlockPart::CrossKv, "cross.kv", 0, {"source"}},
        {"cross_o", "W_o cross", BlockPart::CrossOut, "cross.out", 0, {"cross.merged"}},
    };
    return kRoles;
}

// The traced rows a matrix reads: the first candidate whose product with the model's own weights (plus its bias)
// is the traced output; none when the output or every candidate is not traced, or none matches.
std::optional<Tensor> tracedInput(const Model &model, const Trace &trace, const names::Stack &stack, int layer,
    const Role &role, const Tensor &weights, const Tensor *bias)
{
    const TraceEntry *output = trace.find(names::layerTensor(stack, layer, role.output));
    const ModelConfig &c = model.config;
    const int64_t kv = int64_t(c.kvHeadCount()) * c.headDim();
    const int64_t from = role.offset == 0 ? 0
        : role.offset == 1                ? c.innerDim()
        : role.offset == 2                ? c.innerDim() + kv
                                          : kv;
    if (!output || output->tensor.shape().size() != 2 || output->tensor.dim(1) < from + weights.dim(0))
        return std::nullopt;
    const auto made = output->tensor.matrix().middleCols(from, weights.dim(0));
    std::vector<std::string> candidates;
    for (const char *input : role.inputs) {
        if (std::string(input) == "in")
            candidates.push_back(
                layer == 0 ? names::stackTensor(stack, "embed") : names::layerTensor(stack, layer - 1, "out"));
        else if (std::string(input) == "source")
            candidates.push_back(names::stackTensor(names::kEncoderStack, "ln_f"));
        else
            candidates.push_back(names::layerTensor(stack, layer, input));
    }
    for (const std::string &name : candidates) {
        const TraceEntry *x = trace.find(name);
        if (!x || x->tensor.shape().size() != 2 || x->tensor.dim(1) != weights.dim(1)
            || x->tensor.dim(0) != made.rows())
            continue;
        MatrixRM y = x->tensor.matrix() * weights.matrix().transpose();
        if (bias && bias->numel() == y.cols())
            y.rowwise() += Eigen::Map<const Eigen::RowVectorXf>(bias->data(), bias->numel());
        const double scale = std::max(1e-12, double(made.cwiseAbs().maxCoeff()));
        if (double((y - made).cwiseAbs().maxCoeff()) <= 1e-3 * scale)
            return x->tensor;
    }
    return std::nullopt;
}

double relativeError(const float *a, const float *b, int64_t n)
{
    double difference = 0, size = 0;
    for (int64_t i = 0; i < n; ++i) {
        difference += double(a[i] - b[i]) * double(a[i] - b[i]);
        size += double(b[i]) * double(b[i]);
    }
    return size > 0 ? std::sqrt(difference / size) : 0.0;
}

void histograms(QuantizationEffect &e, const Tensor &values, const Tensor *reference)
{
    constexpr int kBins = 80;
    float low = values.data()[0], high = low;
    for (const Tensor *t : {&values, reference})
        if (t)
            for (float v : t->values()) {
                low = std::min(low, v);
                high = std::max(high, v);
            }
    if (high <= low)
        high = low + 1;
    e.low = low;
    e.high = high;
    const auto count = [&](const Tensor &t) {
        std::vector<double> counts(kBins, 0.0);
        for (float v : t.values())
            counts[size_t(std::clamp(int((v - low) / (high - low) * kBins), 0, kBins - 1))] += 1;
        return counts;
    };
    e.counts = count(values);
    if (reference)
        e.referenceCounts = count(*reference);
}

} // namespace

const std::vector<std::string> &quantizationRoles()
{
    static const std::vector<std::string> names = [] {
        std::vector<std::string> out;
        for (const Role &r : roles())
            out.push_back(r.name);
        return out;
    }();
    return names;
}

std::vector<std::string> quantizationReads(int layer)
{
    std::vector<std::string> out;
    for (const Role &r : roles()) {
        if (std::string(r.output).starts_with("cross.")) // in encoder–decoders, whose traces keep everything
            continue;
        out.push_back(names::layerTensor(layer, r.output));
        for (const char *in : r.inputs)
            out.push_back(names::layerTensor(layer, in));
    }
    return out;
}

std::string quantizationProblem(const Model &model, int layer, const names::Stack &stack)
{
    const ModelConfig &c = model.config;
    const auto parameters = model.parameters();
    for (const Role &r : roles()) {
        try {
            if (parameters.count(blockParameter(c, stack, c.shared.heldBy(layer), r.part) + ".weight"))
                return {};
        } catch (const Error &) {
        }
    }
    return "layer " + std::to_string(layer) + " has no dense matrix (its feed-forward is a mixture of experts and its "
        + "attention is not read here)";
}

std::string savedFromModel(const Model &model)
{
    if (!model.gguf)
        return {};
    try {
        const GgufFile f(model.directory);
        if (!f.has("transformer_atlas.saved_from"))
            return {};
        const std::string name = f.string("transformer_atlas.saved_from");
        for (const BuiltinModel &b : builtinModels())
            if (b.name == name && b.directory != model.directory)
                return name;
    } catch (const Error &) {
    }
    return {};
}

QuantizationEffect quantizationEffect(const Model &model, const Trace &trace, int layer, GgmlType type,
    const std::string &role, int64_t block, const Model *reference, const std::atomic<bool> &cancelled,
    const names::Stack &stack)
{
    const ModelConfig &c = model.config;
    if (const std::string why = quantizationProblem(model, layer, stack); !why.empty())
        throw Error(why);
    QuantizationEffect e;
    e.layer = layer;
    e.stack = stack == names::kEncoderStack ? "encoder" : stack == names::kDecoderStack ? "decoder" : "";
    e.fromFile = model.gguf.has_value();
    std::unique_ptr<GgufFile> file;
    std::map<std::string, std::string> ggufNames;
    if (e.fromFile) {
        file = std::make_unique<GgufFile>(model.directory);
        ggufNames = ggufParameterNames(c);
    }
    const auto parameters = model.parameters();
    const auto referenceParameters = reference ? reference->parameters() : std::map<std::string, const Tensor *> {};

    struct Chosen
    {
        Tensor values, reference;
        std::string bytes;
        GgmlType type;
        bool hasReference;
    };
    std::optional<Chosen> chosen;
    std::vector<std::string> seen;
    bool compared = false; // a matrix had float weights of its shape
    for (const Role &r : roles()) {
        if (cancelled)
            break;
        std::string parameter;
        try {
            parameter = blockParameter(c, stack, c.shared.heldBy(layer), r.part) + ".weight";
        } catch (const Error &) {
            continue;
        }
        const auto found = parameters.find(parameter);
        if (found == parameters.end() || std::find(seen.begin(), seen.end(), parameter) != seen.end())
            continue;
        seen.push_back(parameter);
        const Tensor own = found->second->unpacked();
        const Tensor *referenceWeights = nullptr;
        if (reference && referenceParameters.count(parameter)
            && referenceParameters.at(parameter)->shape() == found->second->shape())
            referenceWeights = referenceParameters.at(parameter);

        QuantizedMatrix m;
        m.role = r.label;
        m.name = r.name;
        m.parameter = parameter;
        m.rows = own.dim(0);
        m.columns = own.dim(1);
        Tensor stored, floats;
        std::string bytes;
        GgmlType storedType = type;
        bool hasFloats = false;
        if (file) { // the file's blocks, in its layout; the reference brought to that layout
            const std::string &key = ggufNames.at(parameter);
            const GgufFile::Entry *entry = file->find(key);
            if (!entry)
                throw Error(model.directory + ": tensor '" + key + "' is missing");
            storedType = entry->type;
            // the model's weights are this tensor read back: put in the file's layout again, not dequantized twice
            stored = ggufLayout(c, model.gguf->architecture, key, *found->second, GgufDirection::ToGguf).unpacked();
            bytes.assign(reinterpret_cast<const char *>(file->data(*entry)), size_t(entry->bytes));
            if (referenceWeights) {
                floats
                    = ggufLayout(c, model.gguf->architecture, key, *referenceWeights, GgufDirection::ToGguf).unpacked();
                hasFloats = floats.shape() == stored.shape();
            }
        } else { // quantized here, as `save` writes it
            storedType = ggufStoredType(parameter, own.shape(), type);
            bytes = quantizeGgml(storedType, own.data(), own.numel());
            stored = Tensor::uninitialized(own.shape());
            dequantizeGgml(
                storedType, reinterpret_cast<const unsigned char *>(bytes.data()), own.numel(), stored.data());
            floats = own;
            hasFloats = true;
        }
        m.type = ggmlTypeInfo(storedType).name;
        m.bitsPerWeight = ggmlBitsPerWeight(storedType);
        if (hasFloats) {
            compared = true;
            m.weightError = relativeError(stored.data(), floats.data(), stored.numel());
            // the quantized weights are the model's when it is a GGUF file, and the reference is the float model's
            const Tensor quantized = file ? own : stored;
            const Tensor exact = file ? referenceWeights->unpacked() : own;
            const std::string biasName = parameter.substr(0, parameter.size() - 7) + ".bias";
            const auto bias = parameters.find(biasName);
            if (const std::optional<Tensor> x
                = tracedInput(model, trace, stack, layer, r, own, bias == parameters.end() ? nullptr : bias->second)) {
                const MatrixRM yq = x->matrix() * quantized.matrix().transpose(),
                               yf = x->matrix() * exact.matrix().transpose();
                m.outputError = relativeError(yq.data(), yf.data(), yq.size());
            }
        }
        e.matrices.push_back(m);
        if (!chosen || r.name == role) {
            e.chosen = int(e.matrices.size()) - 1;
            chosen = Chosen {stored, hasFloats ? floats : Tensor(), bytes, storedType, hasFloats};
        }
    }
    if (!chosen)
        return e;

    const GgmlTypeInfo &info = ggmlTypeInfo(chosen->type);
    const int64_t width = std::max<int64_t>(info.blockElements, 32), columns = chosen->values.dim(1);
    const int64_t perRow = std::max<int64_t>(1, columns / width);
    e.blocks = chosen->values.dim(0) * perRow;
    e.block = std::clamp<int64_t>(block, 0, e.blocks - 1);
    e.row = e.block / perRow;
    e.column = e.block % perRow * width;
    const int64_t shown = std::min(width, columns - e.column);
    const float *values = chosen->values.data() + e.row * columns + e.column;
    e.values.assign(values, values + shown);
    if (chosen->hasReference) {
        const float *floats = chosen->reference.data() + e.row * columns + e.column;
        e.referenceValues.assign(floats, floats + shown);
    }
    if (info.blockElements > 1) {
        const int64_t rowBytes = columns / info.blockElements * info.blockBytes;
        const auto *raw = reinterpret_cast<const unsigned char *>(chosen->bytes.data()) + e.row * rowBytes
            + e.column / info.blockElements * info.blockBytes;
        e.scales = ggmlBlockScales(chosen->type, raw);
    }
    histograms(e, chosen->values, chosen->hasReference ? &chosen->reference : nullptr);
    e.reference = reference && compared ? reference->name : std::string();
    if (reference && !compared)
        e.referenceProblem = reference->name + "'s matrices are not of this model's shapes";
    return e;
}

} // namespace atlas
