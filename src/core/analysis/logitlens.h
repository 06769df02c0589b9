#pragma once

#include "engine/outputhead.h"
#include "engine/program.h"
#include "model/model.h"
#include "trace/trace.h"

#include <atomic>
#include <functional>
#include <string>
#include <vector>

// The logit lens (nostalgebraist 2020): the residual stream after each block read through the model's own output head
// (its final norm and unembedding, or BERT's masked-LM head), as if the model stopped there. Row 0 reads the
// embedding, row i the stream after block i, and the last row the stream the head reads: its logits are the model's.
// The head is the program's own operations after the last block, run again on each stream, so every family's head
// (RMSNorm, T5's d_model^-½, BERT's transform, a reversible model's mean of streams) is the one the model runs.
namespace atlas {

struct LogitLensOptions
{
    int topK = 5; // tokens kept per cell, most probable first
    int target = -1; // a token whose probability and rank every cell reports; −1 none
    // Called with each row's logits [T, V] as it is computed (`dump --logit-lens --full` writes them); the tensor is
    // reused for the next row.
    std::function<void(int row, const Tensor &logits)> onLogits;
    const std::atomic<bool> *cancel = nullptr; // polled between rows; a cancelled lens returns the rows done
};

struct LogitLens
{
    int tokens = 0, vocab = 0, topK = 0;
    // Per row: the trace name of the stream it reads ("input", "layer.0.out" …; a reversible model's two streams
    // are named by their first) and the blocks it has passed (0 … L).
    std::vector<std::string> streams;
    std::vector<int> blocks;
    // Per row: 1, or in a funnel model (model/funnel.h) the stride of the stream after that many blocks: a position
    // t with t mod stride ≠ 0 was pooled away there, and its cells read a stream no token owns.
    std::vector<int> strides;
    std::vector<int> topIds; // [rows, T, topK]
    std::vector<float> topProbs; // [rows, T, topK]
    std::vector<float> entropy; // [rows, T], nats
    int target = -1;
    std::vector<float> targetProb; // [rows, T] when target ≥ 0
    std::vector<int> targetRank; // [rows, T]: 1 = the most probable token
    int rows() const { return int(streams.size()); }
    bool present(int row, int t) const { return strides.empty() || t % strides[size_t(row)] == 0; }
    int topId(int row, int t, int k = 0) const { return topIds[(size_t(row) * size_t(tokens) + size_t(t)) * topK + k]; }
    float topProb(int row, int t, int k = 0) const
    {
        return topProbs[(size_t(row) * size_t(tokens) + size_t(t)) * topK + k];
    }
};

// Why the lens cannot read this trace yet ("" when it can): a program without an output head, or no stream traced.
std::string logitLensProblem(const ModelConfig &config, const Program &program, const Trace &trace);
// The lens of every stream in the trace (the stepper may be part way: the rows so far). Throws atlas::Error when
// logitLensProblem says why.
LogitLens logitLens(const Model &model, const Program &program, const Trace &trace, const Input &input,
    const LogitLensOptions &options = {});

} // namespace atlas
