#include "engine/outputhead.h"

#include "ops/ops.h"
#include "trace/names.h"
#include "util/error.h"

#include <algorithm>
#include <set>

namespace atlas {

Tensor rowsOf(const Tensor &x, const std::vector<int> &positions)
{
    const int64_t N = x.dim(1);
    Tensor rows({int64_t(positions.size()), N});
    for (size_t r = 0; r < positions.size(); ++r) {
        if (positions[r] < 0 || positions[r] >= x.dim(0))
            throw Error("position " + std::to_string(positions[r]) + " is outside the input's "
                + std::to_string(x.dim(0)) + " positions");
        std::copy(x.data() + positions[r] * N, x.data() + (positions[r] + 1) * N, rows.data() + int64_t(r) * N);
    }
    return rows;
}

bool allTraced(const Trace &trace, const std::vector<std::string> &names)
{
    return !names.empty()
        && std::all_of(names.begin(), names.end(), [&trace](const std::string &n) { return trace.contains(n); });
}

OutputHead outputHead(const Program &program)
{
    OutputHead head;
    int last = program.producerOf("logits");
    if (last < 0)
        last = program.producerOf("ln_f");
    if (last < 0)
        return head;
    head.stack = program.ops[size_t(last)].stack;
    std::set<int> chain;
    std::set<std::string> seeds;
    std::vector<int> todo = {last};
    while (!todo.empty()) {
        const int op = todo.back();
        todo.pop_back();
        if (!chain.insert(op).second)
            continue;
        for (const std::string &in : program.ops[size_t(op)].inputs) {
            const int from = program.producerOf(in);
            if (from >= 0 && program.ops[size_t(from)].layer < 0
                && program.ops[size_t(from)].name != names::haltingTensor("out"))
                todo.push_back(from);
            else
                seeds.insert(in);
        }
    }
    head.ops.assign(chain.begin(), chain.end()); // a std::set: ascending, the program's order
    head.seeds.assign(seeds.begin(), seeds.end());
    return head;
}

std::vector<std::string> streamsAfter(const OutputHead &head, int layers, int blocks)
{
    std::vector<std::string> out;
    for (const std::string &seed : head.seeds) {
        if (seed == names::residualStream(head.stack, layers))
            out.push_back(names::residualStream(head.stack, blocks));
        else if (seed == names::haltingTensor("out"))
            out.push_back(blocks == layers ? seed : names::residualStream(head.stack, blocks));
        else if (seed == names::reversibleStream(layers, 1) || seed == names::reversibleStream(layers, 2))
            out.push_back(names::reversibleStream(blocks, seed == names::reversibleStream(layers, 1) ? 1 : 2));
        else
            return {};
    }
    return out;
}

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
    if (head.ops.empty() || !allTraced(trace, streams))
        throw Error("the output head cannot read the stream after " + std::to_string(blocks) + " blocks: not traced");
    Trace scratch;
    for (size_t s = 0; s < streams.size(); ++s)
        scratch.put(head.seeds[s], {}, -1, rowsOf(trace.tensor(streams[s]), positions));
    // The program's operations are built for its input's length: for fewer rows, the same head built for as many.
    // A program that stops at ln_f (a trace kept on demand) borrows the whole head the same way.
    const bool whole
        = program.producerOf("logits") >= 0 && int64_t(positions.size()) == trace.tensor(streams.front()).dim(0);
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

Tensor nextTokenLogits(const Model &model, const Program &program, const Trace &trace, const Input &input,
    const std::vector<int> &positions)
{
    if (const TraceEntry *logits = trace.find("logits"))
        return rowsOf(logits->tensor, positions);
    return outputHeadLogits(model, program, trace, input, model.config.layers, positions);
}

Tensor nextTokenProbs(const Model &model, const Program &program, const Trace &trace, const Input &input,
    const std::vector<int> &positions)
{
    if (const TraceEntry *probs = trace.find("next_probs"))
        return rowsOf(probs->tensor, positions);
    return nextTokenProbsOf(outputHeadLogits(model, program, trace, input, model.config.layers, positions));
}

Tensor nextTokenProbsOf(const Tensor &logits)
{
    Tensor probs(logits.shape());
    ops::softmax_forward(probs, logits); // row by row, the program's own "next_probs" op
    return probs;
}

bool nextTokenReadable(const ModelConfig &config, const Program &program, const Trace &trace)
{
    if (trace.contains("next_probs"))
        return true;
    if (program.producerOf("next_probs") >= 0)
        return false; // a whole run not there yet
    const OutputHead head = outputHead(program);
    return !head.ops.empty() && allTraced(trace, streamsAfter(head, config.layers, config.layers));
}

} // namespace atlas
