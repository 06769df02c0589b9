#include "engine/recompute.h"

#include "util/error.h"

#include <functional>

namespace atlas {

Tensor recomputeTensor(
    const Model &m, const Program &program, const Input &input, const Trace &trace, const std::string &name)
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
    need(name);
    return scratch.tensor(name);
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
