#pragma once

#include "engine/attentiontrace.h"
#include "engine/input.h"
#include "engine/program.h"
#include "model/model.h"
#include "tokenize/tokenizer.h"
#include "trace/trace.h"
#include "view/specrun.h"
#include "view/viewanalysis.h"

#include <QString>
#include <QStringList>

#include <functional>
#include <memory>
#include <string>
#include <vector>

// The view model: what a view draws from, with no widget in sight. The session fills it, `render` and the tests
// make it from a SpecRun; views only read it (docs/architecture.md).
namespace atlas {

// The analysis of the spec on screen (view/viewanalysis.h), as the session ran it.
struct AnalysisState
{
    std::shared_ptr<const ViewAnalysis> result; // null while none is ready
    std::string settings; // the view and its spec's values of what the analysis reads (AnalysisRequest::settings)
    bool pending = false; // a run for the current spec and trace is under way
    QString problem; // why there is no result: not computed yet, a bad head, the analysis failed
    int done = 0, total = 0; // a long run's progress while pending (total 0: none reported)
};

// Everything a view draws from: a trace (complete, or partial while the user steps; a view shows
// "not computed yet" for a tensor the trace lacks), the program that made it, how to label tokens, and the
// analysis of the spec when its view needs one.
// The whole layers a view asked of a trace that keeps attention on demand, recomputed once (findLayerTensor).
class OnDemandLayers;

struct ViewInput
{
    std::shared_ptr<const Trace> trace;
    std::shared_ptr<const Program> program;
    // The attention the attention views show (ViewSpec::site): an encoder-decoder's encoder, decoder or
    // cross-attention; a one-stack model's own. `tokens`, `tokenIds`, `padding`, `layers` and `causal` describe its
    // queries' stack; keyTokens and keyPadding its keys (the source for cross-attention, else the same).
    names::AttentionSite site;
    QStringList keyTokens;
    std::vector<int> keyPadding;
    QStringList tokens; // display label of each input position (readable, short)
    std::function<QString(int)> vocabLabel; // display label of any vocabulary id (next-token bars)
    std::shared_ptr<const Tokenizer> tokenizer; // the model's, made with the input (a BPE one reads its files)
    int layers = 0;
    int heads = 0;
    bool causal = true;
    std::vector<int> padding; // padding positions of the input
    std::shared_ptr<const Model> model; // what ran (analyses that train a step read it)
    std::vector<int> tokenIds; // the input's token ids
    std::vector<int> sourceIds; // an encoder–decoder's source, whatever the site (empty for one stack)
    std::vector<int> sourcePadding; // and its padding
    AnalysisState analysis;
    std::shared_ptr<OnDemandLayers> onDemandLayers; // made with the input: copies of it share what was recomputed

    // The analysis result as the type a view expects; nullptr while there is none (or another kind's).
    template <class A> const A *analysisAs() const { return dynamic_cast<const A *>(analysis.result.get()); }
};

// Token labels and vocabulary labels from the model's tokenizer; no analysis yet.
ViewInput makeViewInput(std::shared_ptr<const Model> model, const Input &input, std::shared_ptr<const Program> program,
    std::shared_ptr<const Trace> trace, const names::AttentionSite &site = {},
    std::shared_ptr<const Tokenizer> tokenizer = nullptr);
// The same for a run whose model's tokenizer is made already (a comparison's run B).
ViewInput makeViewInput(const SpecRun &run, std::shared_ptr<const Tokenizer> tokenizer = nullptr);
// What an analysis reads of a view input.
AnalysisContext analysisContext(const ViewInput &input);
// Runs the spec's analysis at once into input.analysis: `render` and tests draw the result, not "computing…".
// `checkOnly`: on the least work (AnalysisContext::checkOnly), for `lesson check`.
void analyzeNow(ViewInput &input, const ViewSpec &spec, bool checkOnly = false);

// Reading a ViewInput: the head tensors, token labels and numbers every view uses.

// The [H, T, S] tensor layer.{layer}.{suffix} of the input's attention site ("attn.probs" names
// dec.layer.{layer}.cross.probs for cross-attention; S = T but there) when it is in the trace and has head `head`;
// otherwise nullptr, with *problem empty when the tensor is simply not computed yet, or saying what is wrong.
const Tensor *findHeadTensor(const ViewInput &input, int layer, const char *suffix, int head, QString *problem);
// One head's [T, S] matrix of a stage of the site's attention ("attn.probs", "attn.masked", "attn.scores" or
// "attn.capped"): the trace's own when it keeps whole matrices, else computed now from a trace that keeps attention on
// demand (engine/attentiontrace.h). Null data with *problem as findHeadTensor's when there is none.
struct HeadMatrix
{
    const float *data = nullptr;
    int rows = 0, cols = 0;
    std::shared_ptr<const void> owner; // keeps `data` alive
    float at(int row, int col) const { return data[size_t(row) * size_t(cols) + size_t(col)]; }
    explicit operator bool() const { return data != nullptr; }
};
HeadMatrix findHeadMatrix(const ViewInput &input, int layer, const char *suffix, int head, QString *problem);
// The site's layer read back from a trace that keeps attention on demand (engine/attentiontrace.h); null for a whole
// trace. It points into input.trace: keep that alive while it is used.
std::shared_ptr<const AttentionReadout> findAttentionReadout(const ViewInput &input, int layer);
// The [H, T, S] tensor findHeadTensor reads, every head: the trace's own, or (a trace that keeps attention on demand)
// recomputed once and kept with the input, the last few layers asked, each at most kOnDemandLayerBytes; null with
// *problem saying why otherwise (empty when simply not computed yet).
std::shared_ptr<const Tensor> findLayerTensor(const ViewInput &input, int layer, const char *suffix, QString *problem);
inline constexpr size_t kOnDemandLayerBytes = size_t(1) << 30;
// Where head `head`'s queries cannot see its keys: −∞ there, anything finite elsewhere ([T, S]). The trace's masked
// scores, or from a trace that keeps attention on demand the mask's rule alone, with no product.
HeadMatrix findMaskedCells(const ViewInput &input, int layer, int head);
// One cell of the same, computed alone from an on-demand trace; false when there is none.
bool findHeadCell(const ViewInput &input, int layer, const char *suffix, int head, int row, int col, float *value);
// The model's probabilities at `positions` ([rows, V]): rows of the trace's next_probs, or (a trace kept on demand)
// computed from the last stream by the output head (engine/outputhead.h). An empty tensor with *problem saying why
// (a notComputedText) when neither is traced.
Tensor findNextTokenProbs(const ViewInput &input, const std::vector<int> &positions, QString *problem);
// The trace name findHeadTensor reads.
std::string siteTensorName(const ViewInput &input, int layer, std::string_view suffix);
// With grouped-query attention, the K/V head query head `head` reads and the query heads that share it:
// "K/V head 1, shared by heads 2–3"; empty for a model with one K/V head per query head (or cross-attention).
QString sharedKeyValueText(const ViewInput &input, int head);
// The K/V head group of query head `head` (head / (H / Hkv)), or −1 without grouped-query attention.
int keyValueGroup(const ViewInput &input, int head);
// "Encoder self-attention", "Decoder self-attention", "Cross-attention"; empty for a one-stack model.
QString siteTitle(const ViewInput &input);
// The normaliser of the site's attention when it gives allowed keys exactly 0 ("sparsemax", "entmax15", "entmax");
// empty for softmax (a cross-attention or an encoder–decoder has softmax's).
QString sparseNormaliserName(const ViewInput &input);
// "Not computed yet: step to <op> in layer <i> (<trace name>)", the op read from the program (viewanalysis.h).
QString notComputedText(const ViewInput &input, const std::string &traceName);
// The logits' formula as the program computes them (BERT's transform and bias, T5's scale, a tied or own matrix).
QString logitsFormula(const ViewInput &input);
// Token labels for positions 0..count-1 ("#i" where the input has none).
QString tokenLabel(const ViewInput &input, int position);
// The display label of vocabulary id `id` (input.vocabLabel; "#id" where the input has none).
QString vocabularyLabel(const ViewInput &input, int id);
QStringList tokenLabels(const ViewInput &input, int count);
// The same for the keys of the site's attention (the source tokens of cross-attention).
QString keyLabel(const ViewInput &input, int position);
QStringList keyLabels(const ViewInput &input, int count);
bool isKeyPadding(const ViewInput &input, int position);
// A model with attention sinks (gpt-oss): `layer.{l}.attn.sink` of the site's self-attention, [H, T] (each query
// row's share that its head's sink took), when it has `heads` rows of `queries`; null otherwise.
const Tensor *findSinkShares(const ViewInput &input, int layer, int heads, int queries);
// The mean weight a head's probabilities [T, K] give its first key, over the queries after it (query 0 of a causal
// head has no other key to give weight to): the first-token "attention sink" that models without a learned one learn
// (Xiao et al. 2023), to set beside gpt-oss's. −1 with fewer than two queries.
float firstKeyShare(const HeadMatrix &probs);
// "0", "1" … count − 1: labels for axes of positions, dimensions or neurons.
QStringList numberedLabels(int count);
// "query 'the' (#3) → key 'cat' (#1)"
QString cellPrefix(const ViewInput &input, int row, int col);
// What one cell of head `head`'s attention in `layer` holds, after cellPrefix's "query … → key …:": " masked (−∞
// before softmax)", " probability exactly 0, not masked …" under a sparse normaliser, or " [score s,] probability p"
// (the score when `withScore` and the trace holds it). Empty when the probabilities are not there.
QString attentionCellText(const ViewInput &input, int layer, int head, int row, int col, bool withScore);
// Every number the views print: at most `significant` significant digits (no trailing zeros), a Unicode minus,
// ×10ⁿ outside [10⁻³, 10⁵), ∞ for infinity.
QString formatNumber(double value, int significant = 4);
// A fraction as a percentage in formatNumber's digits and a narrow no-break space: "12.3 %", "0.0312 %".
QString formatPercent(double fraction, int significant = 3);

} // namespace atlas
