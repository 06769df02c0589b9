#include "positions/positions.h"

#include "engine/attentiontrace.h"
#include "view/analysishelpers.h"
#include "view/viewkinds.h"

#include <algorithm>

// The Positions view: its descriptor and its analysis request.
namespace atlas::views::positions {

namespace {

using namespace atlas::analysis;

// The model's positional encoding, and for ALiBi, T5 and Shaw the chosen head's score term from the trace.
AnalysisRequest request(const ViewSpec &spec, const AnalysisContext &c)
{
    if (!c.model || !c.trace || c.tokens < 1)
        return problem(kNothingComputed);
    if (c.tokens > PositionsAnalysis::kMaxTokens)
        return problem("The Positions view compares every pair of positions: up to "
            + std::to_string(PositionsAnalysis::kMaxTokens) + " tokens; the input has " + std::to_string(c.tokens)
            + ".");
    // An encoder–decoder's stacks each add or apply their own positions; cross-attention has none of its own.
    const ModelConfig &config = c.model->config;
    if (config.isEncoderDecoder() && spec.site == "cross")
        return problem("Cross-attention adds no positions: each stack's own act before it. Show the encoder's or the "
                       "decoder's self-attention (Show: Encoder self-attention or Self-attention).");
    const names::Stack stack = !config.isEncoderDecoder() ? names::kOnlyStack
        : spec.site == "encoder"                          ? names::kEncoderStack
                                                          : names::kDecoderStack;
    const int layer = std::clamp(spec.layer, 0, c.layers - 1);
    const int head = std::clamp(spec.head, 0, config.heads - 1);
    // The traced tensor the profile reads (RoPE's pairs come from the rotated queries, when computed).
    const std::string source = config.addsPositions() ? names::stackTensor(stack, "pos.encoding")
        : config.biasesScores()                       ? names::layerTensor(stack, layer, "attn.bias")
                                                      : names::queriesOf(stack, layer, true);
    const TraceEntry *entry = config.positions == PositionKind::None ? nullptr : c.trace->find(source);
    if (!entry && (config.addsPositions() || config.biasesScores()))
        return problem(notComputedText(c.program.get(), source));
    AnalysisRequest r;
    r.key = "positions/" + modelIdentity(*c.model) + "/" + std::to_string(c.tokens)
        + (entry ? identity(entry->tensor) : std::string());
    r.pinned = {c.model->wte};
    if (entry)
        r.pinned.push_back(entry->tensor);
    // The pairs show the key the query attends to most: from its probabilities, or what recomputes them on demand.
    const TraceEntry *probs = nullptr;
    if (config.rotatesQueriesAndKeys()) {
        probs = c.trace->find(names::layerTensor(stack, layer, "attn.probs"));
        if (!probs)
            probs = c.trace->find(names::layerTensor(stack, layer, "attn.lse"));
    }
    if (probs) {
        r.key += identity(probs->tensor);
        r.pinned.push_back(probs->tensor);
    }
    r.key += "/" + std::string(stack.trace);
    r.run = [model = c.model, trace = c.trace, T = c.tokens, layer, head, query = spec.query, stack,
                padding = c.padding](const std::atomic<bool> &) {
        return timedResult<PositionsAnalysis>([&](PositionsAnalysis &result) {
            result.layer = layer;
            result.head = head;
            result.profile = positionProfile(*model, *trace, T, layer, head, query, stack, padding);
        });
    };
    return r;
}

// RoPE's pairs before the rotation, which a checkpointed trace frees, and the scored ones the probabilities are read
// back from, which a trace that keeps only each block's input frees too.
std::vector<std::string> recomputes(const ViewSpec &spec, const ModelConfig &config)
{
    const int layer = std::clamp(spec.layer, 0, config.layers - 1);
    std::vector<std::string> names = {names::layerTensor(layer, "attn.q"), names::layerTensor(layer, "attn.k")};
    if (!config.isEncoderDecoder())
        for (std::string &name : readoutInputs(config, layer))
            if (std::ranges::find(names, name) == names.end())
                names.push_back(std::move(name));
    return names;
}

} // namespace

ViewKind kind()
{
    return {.kind = "positions",
        .title = "Positions",
        .summary = "the model's positional encoding: what it adds or turns at each position, and how positions relate",
        .group = "Model",
        .showsSites = true,
        .showsEncoderDecoder = true,
        .request = request,
        .analysisKeys = {"site", "layer", "head", "query"},
        .recomputes = recomputes,
        .after = "tensor"};
}

} // namespace atlas::views::positions
