#include "engine/recompute.h"

#include "util/error.h"

#include <algorithm>
#include <functional>
#include <map>
#include <set>

namespace atlas {

// Its output (whatever another block or the head reads) is what the next block reads. At the Checkpoints level the
// residual stream and what each sub-layer adds to it (the logit lens's and the patching sites' tensors) are kept as
// well, and the scored queries and keys with attn.lse, what any head's attention is read back from. The tensors
// narrower than the stream (ℓ [H, T], a router's [T, E]) cost little and are kept at both.
void keepCheckpoints(Program &program, BlockKeeping keeping, int64_t tokens, int64_t width)
{
    const bool checkpoints = keeping == BlockKeeping::Checkpoints;
    std::set<std::string> kept;
    std::map<std::string, int> layerOf; // of each output: the block that makes it
    for (const Op &op : program.ops) {
        for (const std::string &in : op.inputs) // a block's output, read by the next block or the head
            if (const auto made = layerOf.find(in); made != layerOf.end() && made->second != op.layer)
                kept.insert(in);
        for (const OpOutput &o : op.outputs)
            layerOf[o.name] = op.layer;
        if (op.layer < 0 || (checkpoints && op.residual)) {
            for (const OpOutput &o : op.outputs)
                kept.insert(o.name);
            if (op.residual)
                kept.insert(op.inputs.begin(), op.inputs.end());
        }
        const bool tiledAttention
            = std::ranges::any_of(op.outputs, [](const OpOutput &o) { return o.name.ends_with(".attn.lse"); });
        if (checkpoints && tiledAttention)
            for (const std::string &in : op.inputs)
                if (!in.ends_with(".attn.v")) // the scored Q and K; V is recomputed
                    kept.insert(in);
    }
    for (Op &op : program.ops)
        for (OpOutput &o : op.outputs)
            o.kept = kept.count(o.name) != 0 || Tensor::count(o.shape) < width * tokens;
}

std::vector<Tensor> recomputeTensors(const Model &m, const Program &program, const Input &input, const Trace &trace,
    const std::vector<std::string> &names)
{
    Trace scratch; // the tensors the ops read, shared with the trace or recomputed
    std::function<void(const std::string &)> need = [&](const std::string &wanted) {
        if (scratch.contains(wanted))
            return;
        if (const TraceEntry *e = trace.find(wanted)) {
            scratch.put(e->name, e->formula, e->op, e->tensor);
            return;
        }
        const int producer = program.producerOf(wanted);
        if (producer < 0)
            throw Error("no operation of this run computes '" + wanted + "'");
        const Op &op = program.ops[size_t(producer)];
        for (const std::string &in : op.inputs)
            need(in);
        std::vector<Tensor> outputs = op.run(m, input, scratch);
        for (size_t i = 0; i < outputs.size(); ++i)
            scratch.put(op.outputs[i].name, op.outputs[i].formula, producer, std::move(outputs[i]));
    };
    std::vector<Tensor> made;
    for (const std::string &name : names) {
        need(name);
        made.push_back(scratch.tensor(name));
    }
    return made;
}

Tensor recomputeTensor(
    const Model &m, const Program &program, const Input &input, const Trace &trace, const std::string &name)
{
    return recomputeTensors(m, program, input, trace, {name}).front();
}

size_t outputBytes(const Program &program, const std::vector<std::string> &names)
{
    size_t bytes = 0;
    for (const std::string &name : names)
        if (const int producer = program.producerOf(name); producer >= 0)
            for (const OpOutput &o : program.ops[size_t(producer)].outputs)
                if (o.name == name)
                    bytes += o.bytes();
    return bytes;
}

void putRecomputed(Trace &trace, const Program &program, const std::string &name, Tensor tensor)
{
    const int producer = program.producerOf(name);
    if (producer < 0)
        throw Error("no operation of this run computes '" + name + "'");
    for (const OpOutput &o : program.ops[size_t(producer)].outputs)
        if (o.name == name)
            trace.put(name, o.formula, producer, std::move(tensor));
}

void putRecomputed(
    Trace &trace, const Program &program, const std::vector<std::string> &names, std::vector<Tensor> made)
{
    for (size_t i = 0; i < names.size(); ++i)
        putRecomputed(trace, program, names[i], std::move(made[i]));
}

bool isRecomputable(const Program &program, const Trace &trace, const std::string &name)
{
    if (trace.contains(name))
        return false;
    const int producer = program.producerOf(name);
    if (producer < 0)
        return false;
    // The op has run when an output of it or of a later op is in the trace.
    for (size_t i = size_t(producer); i < program.ops.size(); ++i)
        for (const OpOutput &o : program.ops[i].outputs)
            if (trace.contains(o.name))
                return true;
    return false;
}

} // namespace atlas
