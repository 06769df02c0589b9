#include "model/ggufmodel.h"

#include "io/gguf.h"
#include "model/ggufconfig.h"
#include "model/gguflayout.h"
#include "model/parameterbinding.h"
#include "model/parameternames.h"
#include "tensor/packedrows.h"
#include "util/error.h"
#include "util/memorycheck.h"
#include "util/text.h"

#include <filesystem>
#include <fstream>
#include <optional>
#include <set>

namespace atlas {

namespace {

namespace fs = std::filesystem;

// gpt-oss's parameters that llama.cpp holds otherwise: self_attn.sinks from attn_sinks.weight, and the stacked
// experts from its per-matrix tensors: mlp.experts.gate_up_proj [E, D, 2F] (x W, the gate in the even columns) from
// ffn_gate_exps and ffn_up_exps [E, F, D], its bias [E, 2F] from theirs [E, F], down_proj [E, F, D] from
// ffn_down_exps [E, D, F], and its bias as it is; the matrices kept in the file's blocks when quantized, restacked as
// float32 otherwise (or when gate and up differ in type). `name` is the parameter's; nothing for the others.
std::optional<Tensor> gptOssTensor(const GgufFile &f, const std::string &name, std::set<std::string> &used)
{
    const size_t layerAt = name.find('.') + 1, at = name.find(".mlp.experts.");
    const auto read = [&](const std::string &key) {
        ggufRequiredTensor(f, key, "every gpt-oss layer has it");
        used.insert(key);
        return f.tensor(key, SafetensorsFile::NonFinite::Refuse);
    };
    if (name.ends_with(".self_attn.sinks"))
        return read("blk." + name.substr(layerAt, name.find('.', layerAt) - layerAt) + ".attn_sinks.weight");
    if (at == std::string::npos)
        return std::nullopt;
    const std::string blk = "blk." + name.substr(layerAt, at - layerAt) + ".", matrix = name.substr(at + 13);
    if (matrix == "down_proj_bias")
        return read(blk + "ffn_down_exps.bias");
    // A quantized file's experts stay in its blocks: each expert's Wᵀ as rows (gate and up interleaved), read as
    // the transposed stacks gpt-oss's layout names (PackedRows::asTransposedStacks).
    const auto packable = [&](const std::string &key) {
        const GgufFile::Entry &e = ggufRequiredTensor(f, key, "every gpt-oss layer has it");
        return e.type != GgmlType::F32 && e.shape.size() == 3;
    };
    const auto packed = [&](const std::string &key) {
        used.insert(key);
        return f.packedTensor(key);
    };
    if (matrix == "down_proj" && packable(blk + "ffn_down_exps.weight")) {
        const Tensor down = packed(blk + "ffn_down_exps.weight"); // [E, D, F]: E stacks of D rows
        return Tensor::packed(down.packing()->asTransposedStacks(f.find(blk + "ffn_down_exps.weight")->shape[0]));
    }
    if (matrix == "gate_up_proj" && packable(blk + "ffn_gate_exps.weight") && packable(blk + "ffn_up_exps.weight")
        && f.find(blk + "ffn_gate_exps.weight")->type == f.find(blk + "ffn_up_exps.weight")->type) {
        const Tensor gate = packed(blk + "ffn_gate_exps.weight"), up = packed(blk + "ffn_up_exps.weight");
        const int64_t experts = f.find(blk + "ffn_gate_exps.weight")->shape[0];
        return Tensor::packed(PackedRows::interleaved(*gate.packing(), *up.packing())->asTransposedStacks(experts));
    }
    if (matrix == "down_proj") {
        const Tensor down = read(blk + "ffn_down_exps.weight");
        if (down.rank() != 3)
            throw Error(f.path() + ": tensor '" + blk + "ffn_down_exps.weight' has shape " + down.shapeString()
                + ", not [experts, embedding_length, expert_feed_forward_length]");
        const int64_t E = down.dim(0), D = down.dim(1), F = down.dim(2);
        Tensor out = Tensor::uninitialized({E, F, D});
        for (int64_t e = 0; e < E; ++e) // each expert's [D, F] transposed
            out.slice(e) = down.slice(e).transpose();
        return out;
    }
    const bool bias = matrix == "gate_up_proj_bias";
    if (!bias && matrix != "gate_up_proj")
        return std::nullopt;
    const std::string suffix = bias ? ".bias" : ".weight";
    const Tensor gate = read(blk + "ffn_gate_exps" + suffix), up = read(blk + "ffn_up_exps" + suffix);
    if (gate.shape() != up.shape() || gate.rank() != (bias ? 2 : 3))
        throw Error(f.path() + ": tensors '" + blk + "ffn_gate_exps" + suffix + "' " + gate.shapeString() + " and '"
            + blk + "ffn_up_exps" + suffix + "' " + up.shapeString() + " are not two stacks of one shape");
    const int64_t E = gate.dim(0), F = gate.dim(1), D = bias ? 1 : gate.dim(2);
    Tensor out = Tensor::uninitialized(bias ? Shape {E, 2 * F} : Shape {E, D, 2 * F});
    for (int64_t e = 0; e < E; ++e)
        for (int64_t k = 0; k < F; ++k)
            for (int64_t d = 0; d < D; ++d) {
                float *cell = out.data() + (e * D + d) * 2 * F + 2 * k;
                cell[0] = gate.data()[(e * F + k) * D + d];
                cell[1] = up.data()[(e * F + k) * D + d];
            }
    return out;
}

// The expert number in a parameter's name ("layers.0.block_sparse_moe.experts.3.w1.weight" gives 3).
int expertOf(const std::string &name)
{
    const size_t at = name.find(".experts.");
    return at == std::string::npos ? -1 : std::stoi(name.substr(at + 9));
}

} // namespace

bool isGgufFile(const std::string &path)
{
    std::error_code ec;
    if (!fs::is_regular_file(path, ec))
        return false;
    if (fs::path(path).extension() == ".gguf")
        return true;
    std::ifstream in(path, std::ios::binary);
    char magic[4] = {};
    return in.read(magic, 4) && std::string(magic, 4) == "GGUF";
}

std::string ggufFileTypeName(uint64_t t)
{
    // llama.h's llama_ftype
    static const std::map<uint64_t, const char *> names
        = {{0, "F32"}, {1, "F16"}, {2, "Q4_0"}, {3, "Q4_1"}, {7, "Q8_0"}, {8, "Q5_0"}, {9, "Q5_1"}, {10, "Q2_K"},
            {11, "Q3_K_S"}, {12, "Q3_K_M"}, {13, "Q3_K_L"}, {14, "Q4_K_S"}, {15, "Q4_K_M"}, {16, "Q5_K_S"},
            {17, "Q5_K_M"}, {18, "Q6_K"}, {19, "IQ2_XXS"}, {20, "IQ2_XS"}, {21, "Q2_K_S"}, {22, "IQ3_XS"},
            {23, "IQ3_XXS"}, {24, "IQ1_S"}, {25, "IQ4_NL"}, {26, "IQ3_S"}, {27, "IQ3_M"}, {28, "IQ2_S"}, {29, "IQ2_M"},
            {30, "IQ4_XS"}, {31, "IQ1_M"}, {32, "BF16"}, {36, "TQ1_0"}, {37, "TQ2_0"}, {38, "MXFP4_MOE"}};
    const auto it = names.find(t);
    return it == names.end() ? "" : it->second;
}

Model loadGgufModel(const std::string &path)
{
    const GgufFile f(path);
    Model m;
    m.config = ggufModelConfig(f);
    m.directory = path;
    m.name = fs::path(path).stem().string();
    const std::string &architecture = f.string("general.architecture");
    // The matrices stay in the file's encoding (weights a product reads a tile at a time, tensor/packedrows.h); the
    // vectors and the float32 matrices become float32.
    const auto packed = [&](const GgufFile::Entry &e) { return e.type != GgmlType::F32 && e.shape.size() >= 2; };
    double bytes = 0;
    for (const GgufFile::Entry &e : f.entries())
        bytes += packed(e) ? double(e.bytes) : double(Tensor::count(e.shape)) * sizeof(float);
    checkFitsInMemory(bytes,
        path + ": its " + std::to_string(Model::parameterCountOf(m.config))
            + " parameters, the matrices kept in the file's encoding and the rest as float32,");
    m.allocateBlocks();

    const std::map<std::string, std::string> names = ggufParameterNames(m.config);
    std::set<std::string> used;
    std::map<std::string, Tensor> stacks; // an [E, rows, columns] tensor of experts, read once
    forEachParameter(m, [&](const std::string &name, const Shape &shape, Tensor &tensor, bool) {
        if (architecture == "gpt-oss")
            if (std::optional<Tensor> held = gptOssTensor(f, name, used)) {
                if (held->shape() != shape)
                    throw Error(path + ": the tensors of " + name + " make shape " + held->shapeString()
                        + ", the metadata implies " + Tensor::shapeString(shape));
                tensor = std::move(*held);
                return;
            }
        const auto found = names.find(name);
        if (found == names.end())
            throw Error(path + ": the " + m.config.modelType + " parameter '" + name + "' has no GGUF name");
        // llama.cpp's t5 reads its head from the embedding when the file has no output (TENSOR_DUPLICATED)
        const std::string &key = architecture == "t5" && found->second == "output.weight" && !f.find(found->second)
            ? std::string("token_embd.weight")
            : found->second;
        const GgufFile::Entry &entry
            = ggufRequiredTensor(f, key, "a " + m.config.modelType + " model of these keys has it");
        used.insert(key);
        const int expert = expertOf(name);
        Shape expected = shape;
        if (expert >= 0)
            expected.insert(expected.begin(), m.config.experts);
        if (entry.shape != expected)
            throw Error(path + ": tensor '" + key + "' has shape " + Tensor::shapeString(entry.shape)
                + ", the metadata implies " + Tensor::shapeString(expected));
        const auto read
            = [&] { return packed(entry) ? f.packedTensor(key) : f.tensor(key, SafetensorsFile::NonFinite::Refuse); };
        if (expert < 0) {
            tensor = ggufLayout(m.config, architecture, key, read(), GgufDirection::FromGguf);
        } else {
            auto stack = stacks.find(key);
            if (stack == stacks.end())
                stack = stacks.emplace(key, read()).first;
            if (const PackedRows *rows = stack->second.packing()) {
                tensor = Tensor::packed(rows->rowRange(int64_t(expert) * shape[0], shape[0]));
            } else {
                tensor = Tensor::uninitialized(shape);
                std::copy_n(stack->second.data() + int64_t(expert) * tensor.numel(), tensor.numel(), tensor.data());
            }
        }
    });
    if (f.find("rope_freqs.weight"))
        used.insert("rope_freqs.weight");
    if (architecture == "t5") // llama.cpp loads a cross-attention's relative bias and never computes with it
        for (const GgufFile::Entry &e : f.entries())
            if (e.name.starts_with("dec.blk.") && e.name.ends_with(".cross_attn_rel_b.weight"))
                used.insert(e.name);
    if (architecture == "phi3") // read into the config
        for (const char *factors : {kPhi3LongFactors, kPhi3ShortFactors})
            if (f.find(factors))
                used.insert(factors);
    for (const GgufFile::Entry &e : f.entries())
        if (!used.count(e.name))
            throw Error(path + ": tensor '" + shownText(e.name) + "' has no place in a " + m.config.modelType
                + " model of these keys (llama.cpp refuses such a file too)");
    Model::GgufSource source;
    source.architecture = f.string("general.architecture");
    source.fileBytes = fs::file_size(path);
    double fileBytes = 0, elements = 0;
    for (const GgufFile::Entry &e : f.entries()) {
        fileBytes += double(e.bytes);
        elements += double(Tensor::count(e.shape));
    }
    source.bitsPerWeight = elements > 0 ? 8 * fileBytes / elements : 0;
    source.pairedRope = architecture == "llama" || architecture == "smollm3";
    m.gguf = source;
    m.dtype = f.has("general.file_type") ? ggufFileTypeName(f.unsignedValue("general.file_type")) : "";
    if (m.dtype.empty())
        m.dtype = "mixed";
    return m;
}

} // namespace atlas
