#include "analysis/logitlens.h"

#include "util/error.h"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace atlas {

std::string logitLensProblem(const ModelConfig &config, const Program &program, const Trace &trace)
{
    const OutputHead head = outputHead(program);
    if (head.ops.empty())
        return "this model has no output head to read the residual stream with";
    if (streamsAfter(head, config.layers, 0).empty())
        return "its output head reads " + head.seeds.front() + ", not the residual stream";
    if (!allTraced(trace, streamsAfter(head, config.layers, 0)))
        return "nothing computed yet: step past " + streamsAfter(head, config.layers, 0).front();
    return {};
}

LogitLens logitLens(
    const Model &model, const Program &program, const Trace &trace, const Input &input, const LogitLensOptions &options)
{
    const ModelConfig &config = model.config;
    if (const std::string why = logitLensProblem(config, program, trace); !why.empty())
        throw Error("logit lens: " + why);
    const OutputHead head = outputHead(program);
    LogitLens lens;
    lens.vocab = config.vocab;
    lens.topK = std::clamp(options.topK, 1, config.vocab);
    lens.target = options.target >= 0 && options.target < config.vocab ? options.target : -1;
    const size_t K = size_t(lens.topK), V = size_t(lens.vocab);
    std::vector<int> order(V);
    for (int blocks = 0; blocks <= config.layers; ++blocks) {
        const std::vector<std::string> streams = streamsAfter(head, config.layers, blocks);
        if (!allTraced(trace, streams) || (options.cancel && options.cancel->load()))
            break; // the stepper has not reached this block yet
        // The head's own operations, reading this stream as if it were the last.
        std::vector<int> positions(size_t(trace.tensor(streams.front()).dim(0)));
        std::iota(positions.begin(), positions.end(), 0);
        const Tensor logits = outputHeadLogits(model, program, trace, input, blocks, positions);
        const size_t T = size_t(logits.dim(0));
        if (lens.streams.empty())
            lens.tokens = int(T);
        lens.streams.push_back(streams.front());
        lens.blocks.push_back(blocks);
        lens.strides.push_back(blocks > 0 && config.funnel.active() ? config.funnel.stride(blocks - 1) : 1);
        if (options.onLogits)
            options.onLogits(lens.rows() - 1, logits);
        for (size_t t = 0; t < T; ++t) {
            const float *z = logits.data() + t * V;
            const float top = *std::max_element(z, z + V);
            double sum = 0, weighted = 0;
            for (size_t v = 0; v < V; ++v) {
                const double e = std::exp(double(z[v]) - top);
                sum += e;
                weighted += e * (double(z[v]) - top);
            }
            const double logSum = std::log(sum);
            lens.entropy.push_back(float(logSum - weighted / sum)); // H = log Σe − Σ p (z − max)
            std::iota(order.begin(), order.end(), 0);
            std::partial_sort(order.begin(), order.begin() + long(K), order.end(),
                [z](int a, int b) { return z[a] > z[b] || (z[a] == z[b] && a < b); });
            for (size_t k = 0; k < K; ++k) {
                lens.topIds.push_back(order[k]);
                lens.topProbs.push_back(float(std::exp(double(z[order[k]]) - top - logSum)));
            }
            if (lens.target >= 0) {
                const float zt = z[lens.target];
                lens.targetProb.push_back(float(std::exp(double(zt) - top - logSum)));
                lens.targetRank.push_back(1 + int(std::count_if(z, z + V, [zt](float x) { return x > zt; })));
            }
        }
    }
    return lens;
}

} // namespace atlas
