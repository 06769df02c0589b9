#pragma once

#include "io/ggmltypes.h"
#include "model/model.h"
#include "trace/names.h"
#include "trace/trace.h"

#include <atomic>
#include <memory>
#include <string>
#include <vector>

// What quantization does to one layer's matrices (the Quantization view). Each matrix is taken as ggml stores it,
// [out, in], so that a row is one output's weights, cut into blocks along it:
//   - a GGUF model's matrices as its file holds them: their types, their blocks' bytes, the model's weights read back;
//   - any other model's quantized here to the type asked for, as `save` would write them (io/ggmltypes.h), and read
//     back.
// Against a float reference of the same shapes (the model itself when quantized here; for a GGUF file, the model it
// was saved from, or one the user names) each matrix gets the relative error of its weights, ‖W_q − W‖ / ‖W‖, and of
// its output on this input's traced rows x, ‖x W_qᵀ − x Wᵀ‖ / ‖x Wᵀ‖.
namespace atlas {

struct QuantizedMatrix
{
    std::string role; // "W_q", "W_k", "W_v", "W_qkv", "W_o", "W_up", "W_gate", "W_down", "W_q cross" …
    std::string name; // its quant_matrix value: "q" … "down", "cross_q" …
    std::string parameter; // the model's parameter name
    std::string type; // the ggml type it is stored as: "Q4_0"
    double bitsPerWeight = 0;
    int64_t rows = 0, columns = 0; // [out, in]
    double weightError = -1; // relative; −1 without a reference
    double outputError = -1; // relative; −1 without a reference or when its input is not traced
};

struct QuantizationEffect
{
    int layer = 0;
    std::string stack; // "encoder" or "decoder" in an encoder–decoder, else ""
    bool fromFile = false; // the model's own GGUF types, or quantized here
    std::string reference; // what the float weights compared with are ("" when none)
    std::string referenceProblem; // why a reference given was not compared with (its shapes), or ""
    std::vector<QuantizedMatrix> matrices;
    int chosen = 0; // the matrix the block and the histogram are of
    // Block `block` of the chosen matrix, at row `row` from column `column`: its weights read back and, with a
    // reference, the float weights it stores; the type's formula and the block's scales (io/ggmltypes.h).
    int64_t block = 0, blocks = 0, row = 0, column = 0;
    std::vector<float> values, referenceValues;
    GgmlBlockScales scales;
    // Histograms of the chosen matrix's weights read back and (with a reference) of the float ones, over
    // [low, high] in `counts.size()` bins.
    double low = 0, high = 0;
    std::vector<double> counts, referenceCounts;
};

// The roles a quantization_matrix value names ("q" … "down") and the matrices a layer of `c` has of them.
const std::vector<std::string> &quantizationRoles();
// The traced tensors of block `layer` the matrices' outputs are measured from: each product and what it reads.
std::vector<std::string> quantizationReads(int layer);

// Why layer `layer` of `model` (of `stack`, an encoder–decoder's encoder or decoder) cannot be shown (no dense matrix
// in it), or empty.
std::string quantizationProblem(const Model &model, int layer, const names::Stack &stack = names::kOnlyStack);

// The effect for layer `layer`: `type` is what a model that is not a GGUF file is quantized to (F16, Q8_0, Q4_0,
// Q4_K), `role` the matrix the block and histogram are of (its first one when the layer has no such matrix), `block`
// its block (clamped), `reference` a float model of the same shapes or null. Throws atlas::Error; stops early,
// returning what it has, when `cancelled` is set.
QuantizationEffect quantizationEffect(const Model &model, const Trace &trace, int layer, GgmlType type,
    const std::string &role, int64_t block, const Model *reference, const std::atomic<bool> &cancelled,
    const names::Stack &stack = names::kOnlyStack);

// The float model a GGUF file written by `save` was saved from (its transformer_atlas.saved_from, when that names a
// built-in model of the same shapes), or empty.
std::string savedFromModel(const Model &model);

} // namespace atlas
