#pragma once
// A checkpointed trace (Program::build's `checkpoints`) frees most of a block's tensors once the forward has read
// them. Any of them is computed again on request, by the same ops on the same inputs, from the tensors it kept.
#include "engine/input.h"
#include "engine/program.h"
#include "model/model.h"
#include "trace/trace.h"

#include <string>
#include <vector>

namespace atlas {

// A checkpointed program's choice (Program::build, BlockKeeping): marks each block's outputs `kept` or not, for
// `tokens` tokens through a stream `width` wide.
void keepCheckpoints(Program &program, BlockKeeping keeping, int64_t tokens, int64_t width);

// Tensor `name`: the trace's own when it holds it, else its op run again on its inputs, each taken from the trace or
// itself recomputed. Reads the trace only, so it may run on a worker while views read the same trace. Throws
// atlas::Error when no op of the program makes it. The caller knows the op has run (isRecomputable).
Tensor recomputeTensor(
    const Model &m, const Program &program, const Input &input, const Trace &trace, const std::string &name);
// Several at once, in the order asked: an op they share runs once (a layer's scored queries and keys come from one
// rotation of one projection).
std::vector<Tensor> recomputeTensors(const Model &m, const Program &program, const Input &input, const Trace &trace,
    const std::vector<std::string> &names);

// The bytes the program's outputs `names` take (their shapes are known before they run).
size_t outputBytes(const Program &program, const std::vector<std::string> &names);

// Puts a recomputed tensor into `trace` (a snapshot the views read) with the formula and op the program gives it.
void putRecomputed(Trace &trace, const Program &program, const std::string &name, Tensor tensor);
// The same for tensors `names` made together (recomputeTensors, Engine::recompute), in the same order.
void putRecomputed(
    Trace &trace, const Program &program, const std::vector<std::string> &names, std::vector<Tensor> made);

// Whether `name` is an output of the program that the trace no longer holds although the op making it has run:
// freed by a checkpointed trace, so recomputeTensor gives it.
bool isRecomputable(const Program &program, const Trace &trace, const std::string &name);

} // namespace atlas
