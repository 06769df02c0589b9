#include "needle/haystack.h"

#include "engine/attentiontrace.h"
#include "engine/engine.h"
#include "engine/recompute.h"
#include "tokenize/tokenizer.h"
#include "trace/names.h"
#include "util/error.h"

#include <algorithm>
#include <cmath>

namespace atlas {

namespace {

// Whether token `id` ends a sentence or a line: its text's last visible character is . ! ? or a newline.
bool endsSentence(const Tokenizer &tokenizer, int id)
{
    const std::string text = tokenizer.decode({id});
    for (auto c = text.rbegin(); c != text.rend(); ++c) {
        if (*c == '\n')
            return true;
        if (*c != ' ' && *c != '\t' && *c != '\r')
            return *c == '.' || *c == '!' || *c == '?';
    }
    return false;
}

std::vector<int> encoded(const Tokenizer &tokenizer, const std::string &text, const char *what)
{
    std::vector<int> ids = tokenizer.encode(text);
    if (ids.empty())
        throw Error(std::string(what) + " has no tokens");
    return ids;
}

// Head-averaged share of query `row`'s attention on keys [from, to) in block `layer` of the engine's run: from the
// trace, or from its queries and keys recomputed when each block kept only its input.
float attentionShare(const Engine &engine, int layer, int row, int from, int to)
{
    const Model &model = engine.model();
    const std::vector<int> &padding = engine.input().padding;
    std::optional<LayerAttention> found = LayerAttention::find(&model, padding, engine.trace(), {}, layer);
    Trace recomputed; // this layer's q and k alone, freed on return (in the run's trace every layer's would pile up)
    if (!found) {
        const std::vector<std::string> names = readoutInputs(model.config, layer);
        putRecomputed(recomputed, engine.program(), names, engine.recompute(names));
        const std::string lse = names::layerTensor(layer, "attn.lse");
        const TraceEntry *kept = engine.trace().find(lse);
        if (!kept)
            throw Error("the run kept no " + lse + " to read layer " + std::to_string(layer) + "'s attention from");
        recomputed.put(lse, kept->formula, kept->op, kept->tensor);
        found = LayerAttention::find(&model, padding, recomputed, {}, layer);
        if (!found)
            throw Error("layer " + std::to_string(layer) + "'s attention could not be read back");
    }
    std::vector<float> buffer;
    double sum = 0;
    for (int64_t h = 0; h < found->heads(); ++h) {
        const float *p = found->rows(ops::ScoreStage::Probs, h, row, row + 1, buffer);
        for (int key = from; key < to; ++key)
            sum += p[key];
    }
    return float(sum / double(found->heads()));
}

} // namespace

std::string needleProblem(const Model &model)
{
    const ModelConfig &c = model.config;
    if (c.isEncoderDecoder())
        return model.name + " is an encoder\u2013decoder; the test reads one stack that predicts the next token";
    if (!c.causal)
        return model.name + " is an encoder: it sees the whole text at once and predicts no next token";
    return "";
}

std::string contextTooLong(const Model &model, int tokens)
{
    if (tokens <= model.config.context)
        return "";
    return "a context of " + std::to_string(tokens) + " tokens is past " + model.name + "'s context of "
        + std::to_string(model.config.context) + " tokens";
}

NeedleTokens needleTokens(const Tokenizer &tokenizer, const NeedleTest &test)
{
    std::vector<int> document = tokenizer.encodeWithSpecialTokens(test.haystack);
    while (!document.empty() && tokenizer.role(document.back()) == TokenRole::Special) // an EOS the tokenizer adds
        document.pop_back();
    size_t lead = 0; // a BOS and any special token before the text stay first
    while (lead < document.size() && tokenizer.role(document[lead]) == TokenRole::Special)
        ++lead;
    NeedleTokens t;
    t.leading.assign(document.begin(), document.begin() + int64_t(lead));
    t.body.assign(document.begin() + int64_t(lead), document.end());
    if (t.body.empty())
        throw Error("the document has no tokens");
    t.needle = encoded(tokenizer, test.needle, "the needle");
    t.question = encoded(tokenizer, test.question, "the question");
    t.answer = encoded(tokenizer, test.answer, "the answer");
    return t;
}

std::vector<int> needleContext(
    const Tokenizer &tokenizer, const NeedleTest &test, double depth, int *needleStart, int *needleEnd)
{
    return needleContext(tokenizer, needleTokens(tokenizer, test), test.tokens, depth, needleStart, needleEnd);
}

std::vector<int> needleContext(
    const Tokenizer &tokenizer, const NeedleTokens &pieces, int tokens, double depth, int *needleStart, int *needleEnd)
{
    const std::vector<int> &leading = pieces.leading, &body = pieces.body, &needle = pieces.needle,
                           &question = pieces.question, &answer = pieces.answer;
    const int64_t fixed = int64_t(leading.size() + needle.size() + question.size() + answer.size() - 1);
    const int64_t room = int64_t(tokens) - fixed;
    if (room < 1)
        throw Error("a context of " + std::to_string(tokens) + " tokens cannot hold the needle ("
            + std::to_string(needle.size()) + " tokens), the question (" + std::to_string(question.size())
            + ") and the answer (" + std::to_string(answer.size()) + ") with any of the document");
    std::vector<int> filler;
    filler.reserve(size_t(room));
    while (int64_t(filler.size()) < room)
        filler.push_back(body[filler.size() % body.size()]);
    const int64_t wanted
        = std::clamp(int64_t(std::lround(std::clamp(depth, 0.0, 1.0) * double(room))), int64_t(0), room);
    int64_t at = wanted;
    const int64_t reach = std::min<int64_t>(64, room / 20); // so that nearby depths keep apart
    for (int64_t back = 0; back <= reach && wanted - back >= 0; ++back) {
        const int64_t q = wanted - back;
        if (q == 0 || endsSentence(tokenizer, filler[size_t(q - 1)])) {
            at = q;
            break;
        }
    }
    std::vector<int> ids = leading;
    ids.insert(ids.end(), filler.begin(), filler.begin() + at);
    *needleStart = int(ids.size());
    ids.insert(ids.end(), needle.begin(), needle.end());
    *needleEnd = int(ids.size());
    ids.insert(ids.end(), filler.begin() + at, filler.end());
    ids.insert(ids.end(), question.begin(), question.end());
    ids.insert(ids.end(), answer.begin(), answer.end() - 1);
    return ids;
}

namespace {

void checkTest(const Model &model, const NeedleTest &test, int tokens)
{
    if (const std::string why = needleProblem(model); !why.empty())
        throw Error(why);
    if (const std::string why = contextTooLong(model, tokens); !why.empty())
        throw Error(why);
    if (test.depths < 2 || test.depths > kMaxNeedleDepths)
        throw Error("the test takes 2 to " + std::to_string(kMaxNeedleDepths)
            + " depths (from the start to the end, one forward pass each), not " + std::to_string(test.depths));
}

// The test at test.tokens, each depth's pass counted in `progress` (its total set by the caller).
NeedleResult runAtLength(const std::shared_ptr<const Model> &model, const Tokenizer &tokenizer, const NeedleTest &test,
    const NeedleTokens &pieces, size_t memoryBudget, AnalysisProgress *progress, const std::atomic<bool> *cancel)
{
    const ModelConfig &c = model->config;
    NeedleResult result;
    result.model = model->name;
    result.tokens = test.tokens;
    result.layers = c.layers;
    result.answer = pieces.answer;
    for (int d = 0; d < test.depths; ++d) {
        if (cancel && cancel->load())
            return {};
        NeedleAtDepth at;
        at.depth = double(d) / double(test.depths - 1);
        Input input;
        input.tokens = needleContext(tokenizer, pieces, test.tokens, at.depth, &at.needleStart, &at.needleEnd);
        result.questionPosition = int(input.tokens.size() - result.answer.size() + 1) - 1;
        EngineOptions options;
        options.memoryBudget = memoryBudget;
        if (onDemandObstacle(c, input).empty()) { // the least memory: each layer's q and k recomputed for its share
            options.attention = EngineOptions::Attention::OnDemand;
            options.checkpoints = EngineOptions::Checkpoints::InputOnly;
        }
        Engine engine(model, input, options);
        if (!engine.runToEnd([cancel](int, int) { return !(cancel && cancel->load()); }))
            return {};
        std::vector<int> positions;
        for (size_t i = 0; i < result.answer.size(); ++i)
            positions.push_back(result.questionPosition + int(i));
        const Tensor probs = engine.nextTokenProbs(positions);
        at.answerProbability = 1;
        at.greedy = true;
        for (size_t i = 0; i < positions.size(); ++i) {
            const float *row = probs.data() + int64_t(i) * probs.dim(1);
            const float p = row[result.answer[i]];
            at.answerProbability *= p;
            if (i == 0)
                at.firstTokenProbability = p;
            at.greedy = at.greedy && int(std::max_element(row, row + probs.dim(1)) - row) == result.answer[i];
        }
        for (int l = 0; l < c.layers; ++l)
            at.attention.push_back(attentionShare(engine, l, result.questionPosition, at.needleStart, at.needleEnd));
        result.depths.push_back(std::move(at));
        if (progress)
            ++progress->done;
    }
    return result;
}

} // namespace

std::vector<int> needleLengths(const NeedleTest &test)
{
    std::vector<int> lengths;
    for (int k = 1; k <= test.lengths; ++k)
        lengths.push_back(int(std::lround(double(test.tokens) * k / test.lengths)));
    return lengths;
}

NeedleResult needleInAHaystack(std::shared_ptr<const Model> model, const Tokenizer &tokenizer, const NeedleTest &test,
    size_t memoryBudget, AnalysisProgress *progress, const std::atomic<bool> *cancel)
{
    checkTest(*model, test, test.tokens);
    if (progress)
        progress->total = test.depths;
    return runAtLength(model, tokenizer, test, needleTokens(tokenizer, test), memoryBudget, progress, cancel);
}

std::vector<NeedleResult> needleGrid(std::shared_ptr<const Model> model, const Tokenizer &tokenizer,
    const NeedleTest &test, size_t memoryBudget, AnalysisProgress *progress, const std::atomic<bool> *cancel)
{
    if (test.lengths < 1 || test.lengths > kMaxNeedleLengths)
        throw Error("the grid takes 1 to " + std::to_string(kMaxNeedleLengths)
            + " context lengths (each a row of depths), not " + std::to_string(test.lengths));
    checkTest(*model, test, test.tokens);
    const std::vector<int> lengths = needleLengths(test);
    const NeedleTokens pieces = needleTokens(tokenizer, test); // the texts encoded once for every length and depth
    for (int length : lengths) { // every length's context built before the first pass: a bad one fails at once
        int start = 0, end = 0;
        (void)needleContext(tokenizer, pieces, length, 0, &start, &end);
    }
    if (progress)
        progress->total = int(lengths.size()) * test.depths;
    std::vector<NeedleResult> runs;
    for (int length : lengths) {
        NeedleTest at = test;
        at.tokens = length;
        runs.push_back(runAtLength(model, tokenizer, at, pieces, memoryBudget, progress, cancel));
        if (runs.back().depths.empty())
            return {};
    }
    return runs;
}

} // namespace atlas
