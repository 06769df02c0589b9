#include "analysis/logitlens.h"

#include "util/error.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <set>

namespace atlas {

namespace {

// The output head as the program runs it: the operations after the last block that lead to "logits", and the
// block outputs they read (the residual stream after the last block; a reversible model's two streams).
struct OutputHead
{
    std::vector<int> ops; // in program order
    std::vector<std::string> seeds;
    names::Stack stack = names::kOnlyStack;
};

OutputHead outputHead(const Program &program)
{
    OutputHead head;
    const int logits = program.producerOf("logits");
    if (logits < 0)
        return head;
    head.stack = program.ops[size_t(logits)].stack;
    std::set<int> chain;
    std::set<std::string> seeds;
    std::vector<int> todo = {logits};
    while (!todo.empty()) {
        const int op = todo.back();
        todo.pop_back();
        if (!chain.insert(op).second)
            continue;
        for (const std::string &in : program.ops[size_t(op)].inputs) {
            const int from = program.producerOf(in);
            if (from >= 0 && program.ops[size_t(from)].layer < 0)
                todo.push_back(from);
            else
                seeds.insert(in);
        }
    }
    head.ops.assign(chain.begin(), chain.end()); // a std::set: ascending, the program's order
    head.seeds.assign(seeds.begin(), seeds.end());
    return head;
}

// The seeds of the head (read after the last of `layers` blocks) as they are named after `blocks` blocks; empty when
// a seed is not a residual stream.
std::vector<std::string> streamsAfter(const OutputHead &head, int layers, int blocks)
{
    std::vector<std::string> out;
    for (const std::string &seed : head.seeds) {
        if (seed == names::residualStream(head.stack, layers))
            out.push_back(names::residualStream(head.stack, blocks));
        else if (seed == names::reversibleStream(layers, 1) || seed == names::reversibleStream(layers, 2))
            out.push_back(names::reversibleStream(blocks, seed == names::reversibleStream(layers, 1) ? 1 : 2));
        else
            return {};
    }
    return out;
}

bool traced(const Trace &trace, const std::vector<std::string> &names)
{
    return !names.empty()
        && std::all_of(names.begin(), names.end(), [&trace](const std::string &n) { return trace.contains(n); });
}

} // namespace

int outputHeadStart(const Program &program)
{
    const OutputHead head = outputHead(program);
    return head.ops.empty() ? -1 : head.ops.front();
}

Tensor outputHeadLogits(const Model &model, const Program &program, const Trace &trace, const Input &input, int blocks,
    const std::vector<int> &positions)
{
    const OutputHead head = outputHead(program);
    const std::vector<std::string> streams = streamsAfter(head, model.config.layers, blocks);
    if (head.ops.empty() || !traced(trace, streams))
        throw Error("the output head cannot read the stream after " + std::to_string(blocks) + " blocks: not traced");
    Trace scratch;
    for (size_t s = 0; s < streams.size(); ++s) {
        const Tensor &x = trace.tensor(streams[s]);
        const int64_t D = x.dim(1);
        Tensor rows({int64_t(positions.size()), D});
        for (size_t r = 0; r < positions.size(); ++r)
            std::copy(x.data() + positions[r] * D, x.data() + (positions[r] + 1) * D, rows.data() + int64_t(r) * D);
        scratch.put(head.seeds[s], {}, -1, std::move(rows));
    }
    // The program's operations are built for its input's length: for fewer rows, the same head built for as many.
    const bool whole = int64_t(positions.size()) == trace.tensor(streams.front()).dim(0);
    const Program sized
        = whole ? Program {} : Program::build(model.config, Input {std::vector<int>(positions.size(), 0), {}});
    const Program &run = whole ? program : sized;
    const OutputHead ops = whole ? head : outputHead(sized);
    for (int op : ops.ops) {
        const Op &o = run.ops[size_t(op)];
        std::vector<Tensor> outputs = o.run(model, input, scratch);
        for (size_t k = 0; k < outputs.size(); ++k)
            scratch.put(o.outputs[k].name, {}, op, std::move(outputs[k]));
    }
    return scratch.tensor("logits");
}

std::string logitLensProblem(const ModelConfig &config, const Program &program, const Trace &trace)
{
    const OutputHead head = outputHead(program);
    if (head.ops.empty())
        return "this model has no output head to read the residual stream with";
    if (streamsAfter(head, config.layers, 0).empty())
        return "its output head reads " + head.seeds.front() + ", not the residual stream";
    if (!traced(trace, streamsAfter(head, config.layers, 0)))
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
        if (!traced(trace, streams) || (options.cancel && options.cancel->load()))
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
