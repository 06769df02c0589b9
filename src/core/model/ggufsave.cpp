#include "io/atomicfile.h"
#include "io/gguf.h"
#include "io/ggufwriter.h"
#include "model/gguflayout.h"
#include "model/ggufmodel.h"
#include "model/modeltokenizer.h"
#include "model/parameterbinding.h"
#include "model/parameternames.h"
#include "tokenize/ggufvocabulary.h"
#include "tokenize/huggingfacetokenizer.h"
#include "tokenize/pipeline.h"
#include "util/error.h"
#include "util/memorycheck.h"
#include "util/text.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <functional>
#include <iomanip>
#include <sstream>

#include <sys/mman.h>
#include <unistd.h>

namespace atlas {

namespace {

namespace fs = std::filesystem;

constexpr const char *kSavedFromKey = "transformer_atlas.saved_from";

// llama.h's llama_ftype for a file whose matrices are mostly `type` (Q4_K: "Q4_K_S", the mostly-Q4_K kind).
uint32_t fileTypeOf(GgmlType type)
{
    switch (type) {
    case GgmlType::F32:
        return 0;
    case GgmlType::F16:
        return 1;
    case GgmlType::Q4_0:
        return 2;
    case GgmlType::Q8_0:
        return 7;
    case GgmlType::Q4_K:
        return 14;
    default:
        throw Error(std::string("no llama.cpp file type for ") + ggmlTypeInfo(type).name);
    }
}

// What a forward pass of a config computes, one line per property, for comparing a model with what its GGUF file
// says when read back: a property the architecture cannot hold comes back different.
std::vector<std::pair<std::string, std::string>> computedProperties(const ModelConfig &c)
{
    std::vector<std::pair<std::string, std::string>> out;
    const auto add = [&out](const char *name, const auto &value) {
        std::ostringstream s;
        s << std::boolalpha << value;
        out.emplace_back(name, s.str());
    };
    add("architecture", architectureName(c.architecture()));
    add("encoder blocks", c.encoderLayers);
    if (c.positions == PositionKind::T5) {
        add("relative position buckets", c.relativeBuckets);
        add("relative distance of the last bucket", c.relativeMaxDistance); // llama.cpp's t5: 128
    }
    add("reversible blocks", c.reversible);
    add("Funnel pooling", c.funnel.active());
    add("Sinkhorn sorting", c.sinkhorn.active());
    add("attention normaliser", normaliserName(c.normaliser));
    add("adaptive span", c.spanRamp);
    add("adaptive computation time", c.act.enabled);
    add("Fourier mixing (FNet) blocks", c.fourier.layers.size());
    add("blocks sharing one set of weights", c.shared.enabled);
    add("a step signal before each block", c.shared.timestepSignal);
    add("experts", c.experts);
    add("positional encoding", positionKindName(c.positions));
    add("blocks", c.layers);
    add("heads", c.heads);
    add("K/V heads", c.kvHeadCount());
    add("width (d_model)", c.dModel);
    add("head width", c.headDim());
    add("feed-forward width", c.dFF);
    add("vocabulary", c.vocab);
    add("context", c.context);
    add("norm epsilon", c.lnEpsilon);
    add("activation", int(c.activation));
    add("gated feed-forward", c.gatedFfn);
    add("norm kind (LayerNorm, RMSNorm)", int(c.norm));
    add("norm placement (pre, post, after the sub-layer, sandwich)", int(c.layerNorm));
    add("norms of 1 + w", c.normAddsOne);
    add("embedding scale", c.embeddingScale);
    add("QK-norm (none, per head, per projection)", int(c.qkNorm));
    add("q, k, v biases", c.qkvBias);
    add("output projection bias", c.outBias);
    add("feed-forward biases", c.mlpBias);
    add("parallel residual", c.parallelResidual);
    add("scores scaled", c.scaleScores);
    add("query scale base", c.queryScaleBase > 0 ? double(c.queryScaleBase) : double(c.headDim()));
    add("attention soft-cap", c.attentionSoftcap);
    add("logit soft-cap", c.logitSoftcap);
    add("segment embeddings", c.tokenTypes);
    add("experts per token", c.hasExperts() ? c.expertTopK : 0);
    add("experts' SwiGLU clamp", c.gluClamp); // gpt-oss's swiglu_limit: llama.cpp's constant 7
    add("attention sinks", c.attentionSinks);
    add("dropless routing", c.hasExperts() && c.droplessRouting);
    for (int l = 0; l < c.layers; ++l) {
        std::ostringstream layer;
        layer << "window " << (c.windowed(l) ? c.slidingWindow : 0) << ", experts " << c.isMoeLayer(l) << ", RoPE "
              << c.rotates(l);
        if (c.rotates(l)) {
            layer << " on " << c.rotatedDims() << " dimensions, amplitude " << c.ropeAmplitude(l) << ", frequencies";
            for (double f : c.ropeFrequencies(l)) // to 5 digits: Llama 3's rule and its factors differ in the last bits
                layer << " " << std::setprecision(5) << f;
        }
        out.emplace_back("layer " + std::to_string(l), layer.str());
    }
    return out;
}

void architectureKeys(GgufWriter &w, const ModelConfig &c, const std::string &a)
{
    const auto key = [&a](const char *suffix) { return a + "." + suffix; };
    w.setUInt32(key("context_length"), uint32_t(c.context));
    w.setUInt32(key("embedding_length"), uint32_t(c.dModel));
    if (a == "t5") { // as llama.cpp's T5Model converter writes T5Config
        w.setUInt32(key("block_count"), uint32_t(c.encoderLayers));
        w.setUInt32(key("decoder_block_count"), uint32_t(c.layers));
        w.setUInt32(key("feed_forward_length"), uint32_t(c.dFF));
        w.setUInt32(key("attention.head_count"), uint32_t(c.heads));
        w.setUInt32(key("attention.key_length"), uint32_t(c.headDim()));
        w.setUInt32(key("attention.value_length"), uint32_t(c.headDim()));
        w.setFloat32(key("attention.layer_norm_epsilon"), c.lnEpsilon);
        w.setFloat32(key("attention.layer_norm_rms_epsilon"), c.lnEpsilon);
        w.setUInt32(key("attention.relative_buckets_count"), uint32_t(c.relativeBuckets));
        w.setUInt32(key("decoder_start_token_id"), uint32_t(std::max(0, c.decoderStart)));
        return;
    }
    w.setUInt32(key("block_count"), uint32_t(c.layers));
    w.setUInt32(key("feed_forward_length"), uint32_t(c.dFF));
    w.setUInt32(key("attention.head_count"), uint32_t(c.heads));
    if (a == "gpt2" || a == "gptneox" || a == "mpt") {
        w.setFloat32(key("attention.layer_norm_epsilon"), c.lnEpsilon);
        if (a == "mpt") // ALiBi's slopes for n heads, 2^(−8h/n), as ggml computes them from the maximum
            w.setFloat32(key("attention.max_alibi_bias"), 8.0f);
        if (a == "gptneox") {
            w.setUInt32(key("rope.dimension_count"), uint32_t(c.rotatedDims()));
            w.setFloat32(key("rope.freq_base"), c.ropeBase);
            w.setBool(key("use_parallel_residual"), c.parallelResidual);
            if (c.activation == Activation::GeluTanh || c.activation == Activation::GeluErf)
                w.setString(kGgufGeluKey, c.activation == Activation::GeluTanh ? "tanh" : "erf");
        }
        return;
    }
    w.setUInt32(key("attention.head_count_kv"), uint32_t(c.kvHeadCount()));
    w.setFloat32(key("attention.layer_norm_rms_epsilon"), c.lnEpsilon);
    w.setFloat32(key("rope.freq_base"), c.ropeBase);
    w.setUInt32(key("rope.dimension_count"), uint32_t(c.rotatedDims())); // Phi-3's partial rotary
    w.setUInt32(key("attention.key_length"), uint32_t(c.headDim()));
    w.setUInt32(key("attention.value_length"), uint32_t(c.headDim()));
    if (c.ropeScaling.kind == RopeScaling::Kind::Linear) {
        w.setString(key("rope.scaling.type"), "linear");
        w.setFloat32(key("rope.scaling.factor"), float(c.ropeScaling.factor));
    }
    if (c.ropeScaling.kind == RopeScaling::Kind::LongRope) { // Phi-3's, as Phi3MiniModel writes it; the factors below
        w.setUInt32(key("rope.scaling.original_context_length"), uint32_t(c.ropeScaling.originalContext));
        w.setFloat32(key("rope.scaling.attn_factor"), float(c.ropeScaling.attentionFactor));
    }
    if (c.hasExperts()) {
        w.setUInt32(key("expert_count"), uint32_t(c.experts));
        w.setUInt32(key("expert_used_count"), uint32_t(c.expertTopK));
        if (a == "qwen3moe" || a == "gpt-oss")
            w.setUInt32(key("expert_feed_forward_length"), uint32_t(c.dFF));
    }
    if (a == "gpt-oss") { // a window on the even layers (llama.cpp's pattern of 2), the model's own checked below
        w.setUInt32(key("attention.sliding_window"), uint32_t(c.slidingWindow));
        if (c.ropeScaling.kind == RopeScaling::Kind::Yarn) { // as GptOssModel writes it; the ramp's rounding is read
            w.setString(key("rope.scaling.type"), "yarn"); // as llama.cpp's, whole pairs, and checked below
            w.setFloat32(key("rope.scaling.factor"), float(c.ropeScaling.factor));
            w.setUInt32(key("rope.scaling.original_context_length"), uint32_t(c.ropeScaling.originalContext));
            w.setFloat32(key("rope.scaling.yarn_beta_fast"), float(c.ropeScaling.betaFast));
            w.setFloat32(key("rope.scaling.yarn_beta_slow"), float(c.ropeScaling.betaSlow));
        }
    }
    if (a == "gemma2" || a == "gemma3") {
        if (c.slidingWindow > 0) {
            w.setUInt32(key("attention.sliding_window"), uint32_t(c.slidingWindow));
            // llama.cpp's pattern count n: layer i is local when i mod n < n − 1 (n past the last layer: all local); a
            // model no count describes is refused by the check of the file read back
            for (int n = 1; n <= c.layers + 1; ++n) {
                bool fits = true;
                for (int i = 0; i < c.layers; ++i)
                    fits = fits && c.windowed(i) == (i % n < n - 1);
                if (fits) {
                    w.setUInt32(key("attention.sliding_window_pattern"), uint32_t(n));
                    break;
                }
            }
        }
        if (c.attentionSoftcap > 0)
            w.setFloat32(key("attn_logit_softcapping"), c.attentionSoftcap);
        if (c.logitSoftcap > 0)
            w.setFloat32(key("final_logit_softcapping"), c.logitSoftcap);
        if (a == "gemma3" && c.ropeLocalBase > 0)
            w.setFloat32(key("rope.freq_base_swa"), c.ropeLocalBase);
    }
}

// llama.cpp's rope_freqs: pair j's frequency divided by factor j, for a scaling that divides each pair's frequency by
// its own constant: factors read from a GGUF file, or Llama 3's (as llama.cpp's converter computes them).
std::vector<float> ropeFactors(const ModelConfig &c)
{
    if (c.ropeScaling.kind == RopeScaling::Kind::Factors)
        return {c.ropeScaling.frequencyFactors.begin(), c.ropeScaling.frequencyFactors.end()};
    ModelConfig unscaled = c;
    unscaled.ropeScaling = {};
    const std::vector<double> base = unscaled.ropeFrequencies(), scaled = c.ropeFrequencies();
    std::vector<float> factors(base.size());
    for (size_t j = 0; j < base.size(); ++j)
        factors[j] = float(base[j] / scaled[j]);
    return factors;
}

// The tokenizer's keys: a GGUF file's own, copied; the project's byte-level tokenizer as a BPE vocabulary of the 256
// bytes (spelled with GPT-2's byte-level characters) and no merges, its special tokens as control tokens.
void tokenizerKeys(GgufWriter &w, const Model &m)
{
    if (m.gguf) {
        const GgufFile source(m.directory);
        for (const auto &[key, value] : source.metadata())
            if (key.starts_with("tokenizer."))
                w.set(key, value);
        return;
    }
    if (m.config.tokenizer != "bytes") { // a Hugging Face directory's own
        const GgufVocabulary v = huggingFaceGgufVocabulary(m.directory, m.config.vocab);
        w.setString("tokenizer.ggml.model", v.model);
        w.setString("tokenizer.ggml.pre", v.pre);
        w.setStrings("tokenizer.ggml.tokens", v.tokens);
        w.setInt32s("tokenizer.ggml.token_type", v.types);
        if (v.scores.empty()) // 'gpt2': merges; 'llama': scores
            w.setStrings("tokenizer.ggml.merges", v.merges);
        else
            w.setFloat32s("tokenizer.ggml.scores", v.scores);
        if (v.bos >= 0)
            w.setUInt32("tokenizer.ggml.bos_token_id", uint32_t(v.bos));
        if (v.eos >= 0)
            w.setUInt32("tokenizer.ggml.eos_token_id", uint32_t(v.eos));
        if (v.unknown >= 0)
            w.setUInt32("tokenizer.ggml.unknown_token_id", uint32_t(v.unknown));
        w.setBool("tokenizer.ggml.add_bos_token", v.addBos);
        w.setBool("tokenizer.ggml.add_eos_token", v.addEos);
        if (v.model == "t5") {
            w.setBool("tokenizer.ggml.add_space_prefix", v.addSpacePrefix);
            w.setBool("tokenizer.ggml.remove_extra_whitespaces", v.removeExtraWhitespaces);
            if (!v.charsmap.empty())
                w.setBytes("tokenizer.ggml.precompiled_charsmap", v.charsmap);
        }
        return;
    }
    std::vector<std::string> tokens;
    std::vector<int32_t> types;
    for (int id = 0; id < m.config.vocab; ++id) {
        if (id < 256) {
            tokens.emplace_back(pipeline::byteLevelUtf8(static_cast<unsigned char>(id)));
            types.push_back(1); // normal
            continue;
        }
        std::string name = "<unused" + std::to_string(id) + ">";
        int type = 5; // unused
        for (const auto &[special, specialId] : m.config.specialTokens)
            if (specialId == id) {
                name = special;
                type = 3; // control
            }
        tokens.push_back(name);
        types.push_back(type);
    }
    w.setString("tokenizer.ggml.model", "gpt2");
    w.setString("tokenizer.ggml.pre", "default");
    w.setStrings("tokenizer.ggml.tokens", tokens);
    w.setInt32s("tokenizer.ggml.token_type", types);
    w.setStrings("tokenizer.ggml.merges", {});
    w.setBool("tokenizer.ggml.add_bos_token", false);
    w.setBool("tokenizer.ggml.add_eos_token", false);
}

// gpt-oss's parameters that llama.cpp holds otherwise (ggufmodel.cpp's gptOssTensor, undone), passed to `add` by
// their GGUF names: the sinks as attn_sinks; mlp.experts.gate_up_proj [E, D, 2F] (x W, the gate in the even columns)
// split into ffn_gate_exps and ffn_up_exps [E, F, D], its bias [E, 2F] into two [E, F]; down_proj [E, F, D] as
// ffn_down_exps [E, D, F], its bias as it is. False for the other parameters.
bool addGptOssTensor(
    const std::string &name, const Tensor &tensor, const std::function<void(const std::string &, const Tensor &)> &add)
{
    const size_t layerAt = name.find("layers.");
    if (layerAt == std::string::npos)
        return false;
    const size_t numberAt = layerAt + 7, numberEnd = name.find('.', numberAt);
    const std::string blk = "blk." + name.substr(numberAt, numberEnd - numberAt) + ".",
                      part = name.substr(numberEnd + 1);
    if (!part.starts_with("self_attn.sinks") && !part.starts_with("mlp.experts."))
        return false;
    const Tensor t = tensor.unpacked();
    if (part == "self_attn.sinks") {
        add(blk + "attn_sinks.weight", t);
        return true;
    }
    if (part == "mlp.experts.down_proj_bias") {
        add(blk + "ffn_down_exps.bias", t);
        return true;
    }
    if (part == "mlp.experts.down_proj") {
        const int64_t E = t.dim(0), F = t.dim(1), D = t.dim(2);
        Tensor down = Tensor::uninitialized({E, D, F});
        for (int64_t e = 0; e < E; ++e) // each expert's [F, D] transposed
            down.slice(e) = t.slice(e).transpose();
        add(blk + "ffn_down_exps.weight", down);
        return true;
    }
    const bool bias = part == "mlp.experts.gate_up_proj_bias";
    if (!bias && part != "mlp.experts.gate_up_proj")
        return false;
    const int64_t E = t.dim(0), D = bias ? 1 : t.dim(1), F = t.dim(t.rank() - 1) / 2;
    const Shape shape = bias ? Shape {E, F} : Shape {E, F, D};
    Tensor gate = Tensor::uninitialized(shape), up = Tensor::uninitialized(shape);
    for (int64_t e = 0; e < E; ++e)
        for (int64_t k = 0; k < F; ++k)
            for (int64_t d = 0; d < D; ++d) {
                const float *cell = t.data() + (e * D + d) * 2 * F + 2 * k;
                gate.data()[(e * F + k) * D + d] = cell[0];
                up.data()[(e * F + k) * D + d] = cell[1];
            }
    const std::string suffix = bias ? ".bias" : ".weight";
    add(blk + "ffn_gate_exps" + suffix, gate);
    add(blk + "ffn_up_exps" + suffix, up);
    return true;
}

// A text of the kinds a pre-tokenizer cuts differently: contractions, runs of digits, punctuation, spaces and newlines,
// accented, Cyrillic, Chinese and emoji characters, and a special token.
constexpr const char *kTokenizerCheckText
    = "Hello world! It's 2026; they'd paid $1,234.56 for 12345678 items...\n\n  Indented\tline\r\nCafé "
      "naïve — Привет, 世界 🙂 <|endoftext|> the end";

// Where the tokenizer read back from the file encodes the check text otherwise than the model's own: empty when not.
std::string tokenizerDifference(const Model &m, const GgufFile &back)
{
    const auto ours = tokenizerForModel(m);
    const auto theirs = HuggingFaceTokenizer::fromGguf(back);
    const auto show = [](const std::vector<int> &ids) { return shownNumbers(ids, ",", 12); };
    for (const bool special : {false, true}) {
        const std::vector<int> a
            = special ? ours->encodeWithSpecialTokens(kTokenizerCheckText) : ours->encode(kTokenizerCheckText),
            b = special ? theirs->encodeWithSpecialTokens(kTokenizerCheckText) : theirs->encode(kTokenizerCheckText);
        if (a != b)
            return std::string("tokenizer: its own gives ") + show(a) + (special ? " with special tokens" : "")
                + ", the file's " + show(b);
    }
    return "";
}

// A descriptor of an anonymous file holding `bytes`, for reading them back as a GgufFile.
int inMemoryFile(const std::string &bytes)
{
    const int fd = ::memfd_create("transformer-atlas-gguf", MFD_CLOEXEC);
    if (fd < 0)
        throw Error(std::string("cannot make an in-memory file to check the GGUF file: ") + std::strerror(errno));
    size_t done = 0;
    while (done < bytes.size()) {
        const ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            const int error = errno;
            ::close(fd);
            throw Error(std::string("cannot fill the in-memory file to check the GGUF file: ") + std::strerror(error));
        }
        done += size_t(n);
    }
    return fd;
}

void refuseToReplace(const std::string &path)
{
    std::error_code ec;
    const fs::file_status status = fs::symlink_status(path, ec);
    if (ec || !fs::exists(status))
        return;
    if (!fs::is_regular_file(status))
        throw Error(path + " exists and is not a regular file: save writes a new file or replaces one it wrote");
    bool ours = false;
    try {
        ours = GgufFile(path).has(kSavedFromKey);
    } catch (const Error &) {
    }
    if (!ours)
        throw Error(path + " exists and was not written by save (it has no " + kSavedFromKey
            + " key): choose another name, or move the file yourself");
}

} // namespace

GgmlType ggufStoredType(const std::string &key, const Shape &shape, GgmlType wanted)
{
    // T5's relative biases stay F32 too, as llama-quantize keeps attn_rel_b
    if (shape.size() < 2 || key.ends_with(".bias") || key.starts_with("position_embd")
        || key.find("_rel_b") != std::string::npos || key.find("relative_attention_bias") != std::string::npos
        || key.find("ffn_gate_inp") != std::string::npos || key.starts_with("rope_freqs"))
        return GgmlType::F32;
    GgmlType type = wanted;
    if (type == GgmlType::Q4_K && shape.back() % 256 != 0)
        type = GgmlType::Q4_0;
    if (shape.back() % ggmlTypeInfo(type).blockElements != 0)
        type = GgmlType::F16;
    return type;
}

GgufSaveReport saveGgufModel(const Model &model, const std::string &path, GgmlType type, const std::string &description)
{
    // llama.cpp's architectures hold a block per layer: a shared block (model/sharedblocks.h) is written at every
    // layer, the same weights each time, which runs the same forward. What else the model needs (halting, the step
    // signal) is refused below by the properties read back.
    Model perLayer;
    if (model.config.shared.enabled) {
        perLayer = model;
        perLayer.config.shared.enabled = false;
    }
    const Model &m = model.config.shared.enabled ? perLayer : model;
    const ModelConfig &c = m.config;
    const std::string architecture
        = c.family == Family::Bert || c.family == Family::GptNeo ? std::string() : ggufArchitecture(c);
    if (architecture.empty())
        throw Error(m.name + ": a " + c.modelType
            + " model has no llama.cpp architecture this program writes (it writes llama, qwen2, qwen3, qwen3moe, "
              "olmo2, smollm3, gemma2, gemma3, phi3, gpt2, mpt, gptneox, gpt-oss and t5)");
    if (!ggmlTypeInfo(type).written())
        throw Error(
            std::string("GGUF files are written as ") + writtenGgmlTypeNames() + ", not " + ggmlTypeInfo(type).name);
    refuseToReplace(path);
    checkFitsInMemory(double(Model::parameterCountOf(c)) * sizeof(float) * 2,
        m.name + ": its " + std::to_string(Model::parameterCountOf(c)) + " parameters, converted in memory,");

    // llama.cpp's gpt2 adds a learned table of positions to the embedding. A sinusoidal encoding is such a table, whose
    // values the model computes instead of learning them, and no encoding a table of zeros; an embedding scale is
    // folded into token_embd, so a tied head is written unscaled as a matrix of its own.
    const bool positionTable
        = architecture == "gpt2" && (c.positions == PositionKind::Sinusoidal || c.positions == PositionKind::None);
    const bool scaledEmbedding = architecture == "gpt2" && c.embeddingScale != 1.0f;
    // llama.cpp's gptneox, olmo2 and gpt-oss read an output matrix always (a tied one is written twice); gemma2's
    // never. Its t5 reads the head unscaled, where a tied T5 reads the embedding through d_model^(−½): that head is
    // written as a matrix of its own, the scale folded in.
    const bool headRequired = c.tiedHead
        && (architecture == "gptneox" || architecture == "olmo2" || architecture == "gpt-oss" || architecture == "t5"
            || scaledEmbedding);
    const float headScale = architecture == "t5" ? 1.0f / std::sqrt(float(c.dModel)) : 1.0f;
    if (architecture == "gemma2" && !c.tiedHead)
        throw Error(m.name
            + ": llama.cpp's gemma2 architecture reads the output head from the embedding, and this "
              "model's head is a matrix of its own; nothing was written");
    GgufWriter w;
    w.setString("general.architecture", architecture);
    w.setString("general.name", m.name);
    if (!description.empty())
        w.setString("general.description", description);
    w.setUInt32("general.file_type", fileTypeOf(type));
    w.setUInt32("general.quantization_version", 2);
    w.setString(kSavedFromKey, m.name); // the model's name, not where it lies on this machine
    architectureKeys(w, c, architecture);
    tokenizerKeys(w, m);

    GgufSaveReport report;
    const auto add = [&](const std::string &key, const Tensor &t, GgmlType wanted) {
        const GgmlType stored = ggufStoredType(key, t.shape(), wanted);
        const Tensor values = t.unpacked(); // a packed weight decoded for the writing only
        w.addTensor(key, t.shape(), stored, quantizeGgml(stored, values.data(), t.numel()));
        ++report.tensorsByType[ggmlTypeInfo(stored).name];
        if (stored != wanted && t.shape().size() >= 2 && stored != GgmlType::F32)
            ++report.fellBack[ggmlTypeInfo(stored).name];
    };
    const std::map<std::string, std::string> names = ggufParameterNames(c);
    std::map<std::string, std::vector<const Tensor *>> stacks; // a mixture's experts, stacked per matrix
    std::vector<std::string> order;
    std::vector<std::string> unplaced; // parameters no GGUF tensor holds (entmax's α …): refused below
    forEachParameter(m, [&](const std::string &name, const Shape &, const Tensor &tensor, bool) {
        if (c.stacksExperts()
            && addGptOssTensor(name, tensor, [&](const std::string &key, const Tensor &t) { add(key, t, type); }))
            return;
        const auto named = names.find(name);
        if (named == names.end()) {
            unplaced.push_back(name);
            return;
        }
        const std::string &key = named->second;
        if (name.find(".experts.") != std::string::npos) {
            if (!stacks.count(key))
                order.push_back(key);
            stacks[key].push_back(&tensor);
            return;
        }
        if (key == "token_embd.weight" && (headRequired || scaledEmbedding)) {
            Tensor embedding = tensor.unpacked();
            if (scaledEmbedding)
                embedding.matrix() *= c.embeddingScale;
            add(key, embedding, type);
            if (headRequired) {
                Tensor head = tensor.unpacked();
                if (headScale != 1.0f)
                    head.matrix() *= headScale;
                add("output.weight", head, type);
            }
            return;
        }
        add(key, ggufLayout(c, architecture, key, tensor, GgufDirection::ToGguf), type);
    });
    for (const std::string &key : order) {
        const std::vector<const Tensor *> &experts = stacks[key];
        Shape shape = experts.front()->shape();
        shape.insert(shape.begin(), int64_t(experts.size()));
        Tensor stack = Tensor::uninitialized(shape);
        for (size_t e = 0; e < experts.size(); ++e)
            std::copy_n(
                experts[e]->unpacked().data(), experts[e]->numel(), stack.data() + int64_t(e) * experts[e]->numel());
        add(key, stack, type);
    }
    if (positionTable) {
        Tensor table({int64_t(c.context), int64_t(c.dModel)}); // zeros: no encoding
        if (c.positions == PositionKind::Sinusoidal)
            Model::sinusoidalPositions(table);
        add("position_embd.weight", table, type);
    }
    if (c.ropeScaling.kind == RopeScaling::Kind::Llama3 || c.ropeScaling.kind == RopeScaling::Kind::Factors) {
        const std::vector<float> factors = ropeFactors(c);
        Tensor t = Tensor::uninitialized({int64_t(factors.size())});
        std::copy(factors.begin(), factors.end(), t.data());
        add("rope_freqs.weight", t, GgmlType::F32);
    }
    if (c.ropeScaling.kind == RopeScaling::Kind::LongRope)
        for (const bool longFactors : {true, false}) {
            const std::vector<double> &factors = longFactors ? c.ropeScaling.longFactors : c.ropeScaling.shortFactors;
            Tensor t = Tensor::uninitialized({int64_t(factors.size())});
            std::transform(factors.begin(), factors.end(), t.data(), [](double f) { return float(f); });
            add(longFactors ? "rope_factors_long.weight" : "rope_factors_short.weight", t, GgmlType::F32);
        }
    const std::string bytes = w.bytes();

    // The file read back must describe the model that was saved: what the architecture cannot hold comes back
    // otherwise, and is refused before anything is written.
    const GgufFile back(path + " (as written, read back)", inMemoryFile(bytes));
    ModelConfig written = c;
    if (architecture == "gptneox" && c.family == Family::Gpt2) // its q and k rows regrouped for NeoX's rotation
        written.positions = PositionKind::RopeHalf;
    if (positionTable)
        written.positions = PositionKind::Learned;
    if (scaledEmbedding)
        written.embeddingScale = 1.0f;
    const auto want = computedProperties(written), got = computedProperties(ggufModelConfig(back));
    std::string mismatch;
    for (size_t i = 0; i < want.size() && mismatch.empty(); ++i)
        if (want[i] != got[i])
            mismatch = want[i].first + ": the model has " + want[i].second + ", a " + architecture
                + " file can only say " + got[i].second;
    if (mismatch.empty() && !unplaced.empty())
        mismatch = "its parameter " + unplaced.front() + " has no GGUF tensor";
    if (mismatch.empty() && !m.gguf && c.tokenizer != "bytes")
        mismatch = tokenizerDifference(m, back);
    if (!mismatch.empty())
        throw Error(m.name + ": llama.cpp's " + architecture + " architecture cannot hold this model (" + mismatch
            + "); nothing was written");
    writeFileAtomically(path, bytes);
    report.bytes = bytes.size();
    report.architecture = architecture;
    return report;
}

} // namespace atlas
