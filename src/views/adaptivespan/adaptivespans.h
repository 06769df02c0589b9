#pragma once

#include "model/model.h"
#include "trace/trace.h"

#include <string>
#include <vector>

namespace atlas {

// One head's learned span (Sukhbaatar et al. 2019) and where its attention sits on the traced input.
struct HeadSpan
{
    double span = 0; // z, in tokens
    double reach = 0; // z + R: keys at this distance or farther get exactly 0
    double meanDistance = 0; // Σⱼ aᵢⱼ (i − j), averaged over the queries: how far back the head's weight lies
};

// Every head's span in a model with adaptive attention span (ModelConfig::spanRamp), on one traced input.
struct AdaptiveSpans
{
    int ramp = 0; // R
    int limit = 0; // S, the longest span: n_positions
    int tokens = 0;
    std::vector<std::vector<HeadSpan>> heads; // [layer][head]
    double meanSpan() const; // z over every head
    // The share of a full context's keys an average head can reach, Σ min(z + R, S) / (heads · S): what attention's
    // compute and memory per query shrink to when keys out of reach are skipped.
    double reachShare() const;
};

// Why `trace` cannot give the spans: a model without adaptive span, or a layer not traced yet. Empty when it can.
std::string adaptiveSpanProblem(const Model &model, const Trace &trace);

// Throws atlas::Error with adaptiveSpanProblem's reason.
AdaptiveSpans adaptiveSpans(const Model &model, const Trace &trace);

} // namespace atlas
