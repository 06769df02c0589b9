#include "train/memorystrategy.h"

#include "engine/program.h"
#include "model/blockrecipe.h"
#include "model/model.h"
#include "util/error.h"
#include "util/parallel.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <unordered_map>
#include <unordered_set>

namespace atlas {

const std::vector<std::string> &memoryStrategyNames()
{
    static const std::vector<std::string> names = {"plain", "checkpoint", "reversible"};
    return names;
}

std::string memoryStrategyName(MemoryStrategy strategy)
{
    return memoryStrategyNames()[size_t(strategy)];
}

MemoryStrategy parseMemoryStrategy(const std::string &text, const std::string &field)
{
    for (size_t i = 0; i < memoryStrategyNames().size(); ++i)
        if (memoryStrategyNames()[i] == text)
            return MemoryStrategy(i);
    throw Error(field + ": unknown memory strategy '" + text + "' (expected plain, checkpoint or reversible)");
}

int checkpointInterval(const MemoryOptions &options, int layers)
{
    if (options.checkpointEvery > 0)
        return options.checkpointEvery;
    return std::max(1, int(std::ceil(std::sqrt(double(layers)) - 1e-9)));
}

void validateMemoryOptions(
    const MemoryOptions &options, const ModelConfig &config, int tokens, const MemoryOptionFields &fields)
{
    if (options.strategy == MemoryStrategy::Reversible && !config.reversible)
        throw Error(fields.strategy + " reversible: this model has standard blocks, whose inputs cannot be rebuilt "
            + "from their outputs (open a reversible model such as reverse-rev, train one with train --reversible, or "
              "use plain or checkpoint)");
    if (options.checkpointEvery < 0 || options.checkpointEvery > config.layers)
        throw Error(fields.checkpointEvery + " " + std::to_string(options.checkpointEvery) + ": must be in 1.."
            + std::to_string(config.layers) + " (the model has " + std::to_string(config.layers)
            + " layers), or 0 for ⌈√L⌉");
    bool dense = false;
    for (int i = 0; i < config.layers; ++i)
        dense = dense || !config.isMoeLayer(i);
    if (options.ffnChunks > 1 && !dense)
        throw Error(fields.ffnChunks + " " + std::to_string(options.ffnChunks)
            + ": every feed-forward of this model is a mixture of experts, which runs each expert on its own tokens; "
              "chunks apply to a dense feed-forward (use 1)");
    if (options.ffnChunks < 1 || (tokens > 0 && options.ffnChunks > tokens))
        throw Error(fields.ffnChunks + " " + std::to_string(options.ffnChunks) + ": must be in 1.."
            + (tokens > 0 ? std::to_string(tokens) + " (the input has " + std::to_string(tokens) + " tokens)"
                          : std::string("the input's length")));
}

std::vector<std::string> attentionReadByBackward(const ModelConfig &c, const names::Stack &s, int i)
{
    const std::string p = names::layerPrefix(s, i);
    std::vector<std::string> read = {p + "attn.q", p + "attn.k", p + "attn.v", p + "attn.probs", p + "attn.merged"};
    const bool normed = c.qkNorm != QkNorm::None;
    if (c.rotates(i) || normed) // what the scores read, when it is not q and k as projected
        read.insert(
            read.end(), {names::queriesOf(s, i, c.rotates(i), normed), names::keysOf(s, i, c.rotates(i), normed)});
    if (c.adaptiveSpan()) // the span's gradient reads the mask
        read.push_back(p + "attn.span_mask");
    if (c.attentionSoftcap > 0) // the cap's gradient reads the capped scores
        read.push_back(p + "attn.capped");
    if (c.attentionSinks) // the sinks' gradient reads each row's share
        read.push_back(p + "attn.sink");
    return read;
}

std::vector<std::string> feedForwardReadByBackward(
    const ModelConfig &c, const MemoryOptions &options, const names::Stack &s, int i)
{
    const std::string p = names::layerPrefix(s, i);
    if (c.isMoeLayer(i))
        return {p + "router.logits", p + "router.probs", p + "router.choice", p + "router.gate", p + "router.aux_loss",
            p + "router.z_loss"};
    if (options.ffnChunks > 1) // the backward pass recomputes each chunk's activations from the block's input
        return {};
    if (c.gatedFfn) // SwiGLU's backward reads both halves of the gate product
        return {p + "mlp.gate", p + "mlp.up", p + "mlp.act"};
    return {p + "mlp.up", p + "mlp.act"};
}

std::vector<std::string> readByBlockBackward(
    const ModelConfig &c, const MemoryOptions &options, const names::Stack &s, int i)
{
    std::vector<std::string> read = attentionReadByBackward(c, s, i);
    if (s == names::kDecoderStack) // the cross-attention's backward reads these
        for (const char *what : {"q", "k", "v", "probs", "merged"})
            read.push_back(names::attentionTensor({s, true}, i, what));
    for (const std::string &local : blockRecipe(c, s, i).readByBackward()) // every norm's and sub-layer's input
        read.push_back(blockTensor(s, i, local));
    const std::vector<std::string> mlp = feedForwardReadByBackward(c, options, s, i);
    read.insert(read.end(), mlp.begin(), mlp.end());
    return read;
}

std::vector<std::string> readByHeadBackward(const ModelConfig &c)
{
    const names::Stack last = c.isEncoderDecoder() ? names::kDecoderStack : names::kOnlyStack;
    std::vector<std::string> read
        = {c.reversible ? names::streamMean() : names::residualStream(last, c.layers), "ln_f", "logits", "next_probs"};
    if (c.family == Family::Bert) // the masked-LM head's transform
        read.insert(read.end(), {"head.dense", "head.act"});
    return read;
}

std::vector<std::string> readByEmbeddingBackward(const ModelConfig &c)
{
    // BERT normalises E + P + S: its backward reads the sum, kept from the forward pass to the end.
    return c.family == Family::Bert ? std::vector<std::string> {"embed.sum"} : std::vector<std::string> {};
}

std::vector<std::string> encoderTail(const ModelConfig &c)
{
    if (!c.isEncoderDecoder())
        return {};
    return {names::encoderOutput(), names::residualStream(names::kEncoderStack, c.encoderLayers)};
}

namespace {

int64_t ceilDiv(int64_t a, int64_t b)
{
    return (a + b - 1) / b;
}

// The largest sum of the blocks of one segment [b, b + k), b = 0, k, 2k, …: what checkpointing holds at once.
int64_t largestSegment(const std::vector<int64_t> &blocks, int64_t k)
{
    int64_t largest = 0;
    for (size_t b = 0; b < blocks.size(); b += size_t(k)) {
        int64_t sum = 0;
        for (size_t i = b; i < std::min(blocks.size(), b + size_t(k)); ++i)
            sum += blocks[i];
        largest = std::max(largest, sum);
    }
    return largest;
}

} // namespace

int64_t predictedActivationBytes(const ModelConfig &c, int tokens, const MemoryOptions &options, int sourceTokens)
{
    if (tokens <= 0)
        return 0;
    const int64_t T = tokens, D = c.dModel, L = c.layers, f = sizeof(float);
    const bool twoStacks = c.isEncoderDecoder();
    const int64_t S = twoStacks ? std::max(sourceTokens, 1) : 0, E = twoStacks ? c.encoderLayers : 0;
    // The shapes the program gives every tensor, known before anything runs.
    Input input;
    input.tokens.assign(size_t(T), 0);
    input.source.assign(size_t(S), 0);
    const Program program = Program::build(c, input, false, options.ffnChunks);
    std::unordered_map<std::string, int64_t> bytes;
    for (const Op &op : program.ops)
        for (const OpOutput &o : op.outputs)
            bytes[o.name] = f * Tensor::count(o.shape);
    const auto count = [&bytes](const std::vector<std::string> &names) {
        std::unordered_set<std::string> seen;
        int64_t sum = 0;
        for (const std::string &name : names)
            if (const auto it = bytes.find(name); it != bytes.end() && seen.insert(name).second)
                sum += it->second;
        return sum;
    };
    std::vector<int64_t> blocks, encoderBlocks;
    for (int i = 0; i < L; ++i)
        blocks.push_back(
            count(readByBlockBackward(c, options, twoStacks ? names::kDecoderStack : names::kOnlyStack, i)));
    for (int i = 0; i < E; ++i)
        encoderBlocks.push_back(count(readByBlockBackward(c, options, names::kEncoderStack, i)));
    const int64_t head = count(readByHeadBackward(c)) + count(readByEmbeddingBackward(c));
    const int64_t tail = count(encoderTail(c));
    const int64_t stream = f * T * D * (c.reversible ? 2 : 1);
    const auto sum = [](const std::vector<int64_t> &v) { return std::accumulate(v.begin(), v.end(), int64_t(0)); };
    switch (options.strategy) {
    case MemoryStrategy::Plain:
        return sum(blocks) + sum(encoderBlocks) + tail + head;
    case MemoryStrategy::Checkpoint: {
        const int64_t k = std::min<int64_t>(checkpointInterval(options, int(L)), L);
        if (!twoStacks)
            return ceilDiv(L, k) * stream + largestSegment(blocks, k) + head;
        const int64_t kE = std::min<int64_t>(checkpointInterval(options, int(E)), E);
        return ceilDiv(L, k) * stream + ceilDiv(E, kE) * f * S * D
            + std::max(largestSegment(blocks, k), largestSegment(encoderBlocks, kE)) + tail + head;
    }
    case MemoryStrategy::Reversible:
        return 2 * f * T * D + largestSegment(blocks, 1) + head;
    }
    return 0;
}

namespace {

// What one sequence's forward and backward hold: predictedActivationBytes's plain count in double, an upper bound of
// the other strategies' counts that cannot wrap; the strategies' own count where it is smaller and representable.
double sequenceActivationBytes(const ModelConfig &c, int tokens, const MemoryOptions &options, int sourceTokens)
{
    const double T = tokens, D = c.dModel, F = c.dFF, H = c.heads, V = c.vocab, L = c.layers, f = sizeof(float);
    const double S = c.isEncoderDecoder() ? sourceTokens : 0, E = c.isEncoderDecoder() ? c.encoderLayers : 0;
    const double span = c.adaptiveSpan() ? 2 : 1;
    const double plain
        = L * f * (10 * T * D + 3 * T * F + H * T * T * span + (S > 0 ? 4 * T * D + 2 * S * D + H * T * S : 0))
        + E * f * (10 * S * D + 3 * S * F + H * S * S * span) + f * 2 * S * D + f * (2 * T * D + 2 * T * V);
    return plain < 1e18 ? double(predictedActivationBytes(c, tokens, options, sourceTokens)) : plain;
}

} // namespace

double estimatedTrainingStepBytes(const ModelConfig &c, int tokens, const MemoryOptions &options, int sourceTokens)
{
    return 16.0 * double(Model::parameterCountOf(c)) + sequenceActivationBytes(c, tokens, options, sourceTokens);
}

double estimatedTrainingBatchBytes(
    const ModelConfig &c, int tokens, int batch, const MemoryOptions &options, int sourceTokens)
{
    const double parameters = double(Model::parameterCountOf(c)), inFlight = std::min(batch, workerThreads());
    const double longest = std::max(tokens, c.isEncoderDecoder() ? sourceTokens : 0);
    const double workspace = 2.0 * c.heads * longest * longest * sizeof(float);
    const double oneSequence = sequenceActivationBytes(c, tokens, options, sourceTokens);
    return 16 * parameters + 4 * parameters * batch + inFlight * (oneSequence + workspace);
}

} // namespace atlas
