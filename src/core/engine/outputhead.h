#pragma once
// The output head: the operations after the last block that lead to "logits" (a final norm, BERT's transform and
// bias, T5's d_model^-½, Gemma 2's soft-cap, a reversible model's mean of streams), run again on chosen rows of a
// residual stream. The logit lens reads every stream through it; a run that keeps its trace on demand
// (engine/attentiontrace.h) stops its program at ln_f and reads the model's own logits and probabilities through it,
// a few rows at a time, instead of keeping [T, V] tensors (Qwen's 151 936 tokens make them 1.2 GB each at 2048
// tokens).
#include "engine/input.h"
#include "engine/program.h"
#include "model/model.h"
#include "trace/names.h"
#include "trace/trace.h"

#include <string>
#include <vector>

namespace atlas {

struct OutputHead
{
    std::vector<int> ops; // in program order
    // The block outputs it reads: the last residual stream (a reversible model's two), or adaptive computation time's
    // mixture of every block's output (act.out), which the head reads as a stream: the logit lens reads the stream
    // after each block in its place, and the mixture itself after the last.
    std::vector<std::string> seeds;
    names::Stack stack = names::kOnlyStack;
};

// The program's output head: the chain to "logits", or (a program that stops at the final norm) to "ln_f", whose
// seeds are the same; empty for a program with neither.
OutputHead outputHead(const Program &program);
// The seeds of the head (read after the last of `layers` blocks) as they are named after `blocks` blocks; empty when
// a seed is not a residual stream.
std::vector<std::string> streamsAfter(const OutputHead &head, int layers, int blocks);
// Rows `positions` of a [T, N] tensor, [rows, N]; throws atlas::Error for a position outside it.
Tensor rowsOf(const Tensor &x, const std::vector<int> &positions);
// Whether the trace holds every one of `names` (and they are not none).
bool allTraced(const Trace &trace, const std::vector<std::string> &names);
// The first operation of the output head; −1 for a program without one.
int outputHeadStart(const Program &program);

// The logits [rows, V] the output head gives rows `positions` of the stream after `blocks` blocks, computed on those
// rows alone (every operation of a head works row by row): the model's own logits of those positions when `blocks`
// is the last. Throws atlas::Error when the stream is not traced.
Tensor outputHeadLogits(const Model &model, const Program &program, const Trace &trace, const Input &input, int blocks,
    const std::vector<int> &positions);

// The model's probabilities at `positions`, [rows, V] (the next token's, or a masked-LM encoder's token at each
// position): rows of the trace's `next_probs` when the run kept it, else softmax of outputHeadLogits of the last
// stream. Throws atlas::Error when neither is traced.
Tensor nextTokenProbs(const Model &model, const Program &program, const Trace &trace, const Input &input,
    const std::vector<int> &positions);
// The probabilities of logits rows [rows, V], as the program's `next_probs` op computes them (a softmax per row).
Tensor nextTokenProbsOf(const Tensor &logits);
// The same for the logits `Z` (after a soft-cap).
Tensor nextTokenLogits(const Model &model, const Program &program, const Trace &trace, const Input &input,
    const std::vector<int> &positions);
// Whether the model's own probabilities can be read from this trace: kept, or the stream the head reads traced.
bool nextTokenReadable(const ModelConfig &config, const Program &program, const Trace &trace);

} // namespace atlas
