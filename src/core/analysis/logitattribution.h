#pragma once

#include "engine/input.h"
#include "engine/program.h"
#include "model/model.h"
#include "trace/trace.h"

#include <string>
#include <vector>

// Direct logit attribution (Elhage et al. 2021, "A Mathematical Framework for Transformer Circuits"; TransformerLens's
// decompose_resid and logit_attrs): the residual stream the output head reads is the sum of what the embedding and
// every sub-layer wrote into it, so with the final norm's scale frozen at its value in this run the logit is a sum
// too, one part per writer:
//   z = Σ_parts  w · N(part)  +  w · β  (+ the head's own constant),   w = W_U[target] (− W_U[contrast])
// where N(v) = γ ⊙ (v − mean(v)) / σ for LayerNorm (each part centred as the norm centres their sum: TransformerLens's
// convention) or γ ⊙ v / rms for RMSNorm, σ and rms those of the whole stream at that position. A head's part is its
// context through its rows of the output projection, C_h W_O[h]; the projection's bias is a part of its own; a
// feed-forward (or a mixture of experts) is one part. A model that normalises a sub-layer's output before its
// residual add (OLMo 2, Gemma's sandwich) has that norm frozen the same way at that position. Soft-capped logits
// (Gemma 2) are attributed before the cap.
namespace atlas {

struct LogitAttributionOptions
{
    int position = -1; // −1 = the last
    int target = 0;
    int contrast = -1; // ≥ 0: attribute logit(target) − logit(contrast)
};

struct LogitAttribution
{
    int layers = 0, heads = 0, position = 0, target = 0, contrast = -1;
    bool crossAttention = false; // an encoder–decoder's decoder: each block's cross-attention heads too
    double embedding = 0; // the stream the first block reads: token (and position) embeddings
    std::vector<double> selfHeads; // [layers, heads]
    std::vector<double> crossHeads; // [layers, heads] with crossAttention, else empty
    std::vector<double> attentionBias; // [layers]: the output projections' biases (and an output norm's shift)
    std::vector<double> feedForward; // [layers]: each block's feed-forward or experts, bias included
    // A mixture-of-experts layer's feed-forward part split by the experts that took the token: per layer, each chosen
    // expert's gate · FFN_e(x) read like any part (their sum is feedForward's); empty for a dense layer.
    struct ExpertPart
    {
        int expert = 0;
        double gate = 0, value = 0;
    };
    std::vector<std::vector<ExpertPart>> experts; // [layers]
    double normShift = 0; // the final norm's β read by the unembedding (0 for RMSNorm)
    // What the final norm's centring took out of the uncentred parts (LayerNorm; 0 for RMSNorm): it is already
    // subtracted from each part above, and shown so that the uncentred sum can be checked too.
    double centring = 0;
    double frozenScale = 0; // 1/σ (LayerNorm) or 1/rms (RMSNorm) of the final norm at this position
    double sum = 0; // every part above plus normShift: the attributed logit (difference)
    double modelLogit = 0; // the model's own logit (difference) before any soft-cap, from its output head
    double softcap = 0; // the model's final_logit_softcapping, 0 for none
    // The largest gap between the stream the head reads and the embedding plus every sub-layer's output, relative to
    // the stream's largest entry: rounding only (about 1e-6) when the stream is the sum of its parts.
    double streamGap = 0;

    double selfHead(int layer, int head) const { return selfHeads[size_t(layer) * size_t(heads) + size_t(head)]; }
    double crossHead(int layer, int head) const { return crossHeads[size_t(layer) * size_t(heads) + size_t(head)]; }
};

// A part by name ("embedding", "final norm's β", "L3 H2", a cross-attention head "L3 X2", "L3 bias", "L3 FFN") and
// what it writes into the logit.
struct NamedPart
{
    std::string name;
    double value = 0;
};
// Every part that writes something (a value not exactly 0), the largest |value| first: the view's list of the largest
// writers and `dla`'s.
std::vector<NamedPart> largestWriters(const LogitAttribution &a);

// Why the logit cannot be split into direct parts for this model and trace ("" when it can): an output head that
// is not a norm and a linear map (BERT's masked-LM transform), a residual stream that is not the sum of what was
// written into it (post-LN blocks, reversible blocks, a funnel, adaptive computation time), or a trace not run to the
// end.
std::string logitAttributionProblem(const ModelConfig &config, const Program &program, const Trace &trace);
// The attribution at one position. Throws atlas::Error when logitAttributionProblem says why, for a token or position
// outside the model's range, and when the stream is not the sum of its parts (its gap over 1e-3).
LogitAttribution logitAttribution(const Model &model, const Program &program, const Trace &trace, const Input &input,
    const LogitAttributionOptions &options);

} // namespace atlas
