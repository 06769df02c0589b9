#include "positionloss/positionloss.h"

#include "engine/outputhead.h"
#include "model/builtinmodels.h"
#include "train/evaluation.h"
#include "util/error.h"
#include "view/analysishelpers.h"
#include "view/viewkinds.h"

#include <algorithm>
#include <cmath>

namespace atlas::views::positionloss {

namespace {

constexpr int kRowsAtOnce = 256; // output-head rows read at once: [256, V] probabilities (155 MB for Qwen's vocabulary)

PositionLossCurve curveOf(const Model &model)
{
    PositionLossCurve curve;
    curve.model = model.name;
    curve.layers = model.config.layers;
    for (int l = 0; l < model.config.layers; ++l)
        curve.windowedLayers += model.config.windowed(l);
    if (curve.windowedLayers > 0)
        curve.slidingWindow = model.config.slidingWindow;
    return curve;
}

} // namespace

bool readsTaskWindows(const Model &model)
{
    if (model.config.task.empty() || !model.config.causal || model.config.isEncoderDecoder())
        return false;
    return Task::create(model.config.task, model.config.context)->takesContext();
}

int lossGroups(int windows)
{
    return windows >= 2 * PositionLossAnalysis::kGroups ? PositionLossAnalysis::kGroups : 1;
}

PositionLossCurve taskLossCurve(std::shared_ptr<const Model> model, int windows, const std::function<bool()> &scored)
{
    if (!readsTaskWindows(*model))
        throw Error(model->name + " has no task of corpus windows read token by token (chars, words) to score");
    PositionLossCurve curve = curveOf(*model);
    curve.windows = windows;
    const std::unique_ptr<Task> task = Task::create(model->config.task, model->config.context);
    const int groups = lossGroups(windows);
    std::vector<double> scores;
    for (int g = 0; g < groups; ++g) { // each group its own draw of windows, every window in one group
        const int size = windows / groups + (g < windows % groups ? 1 : 0);
        const std::vector<double> loss = evaluateOnTask(model, *task, size, 12345 + uint64_t(g)).positionLoss;
        curve.loss.resize(loss.size(), 0.0);
        for (size_t t = 0; t < loss.size(); ++t)
            curve.loss[t] += loss[t] * size / windows;
        int late = 0, early = 0;
        scores.push_back(inContextScore(loss, &late, &early));
        if (scored && !scored())
            return curve;
    }
    if (groups > 1) {
        double mean = 0, squares = 0;
        for (double x : scores)
            mean += x / groups;
        for (double x : scores)
            squares += (x - mean) * (x - mean);
        curve.scoreError = std::sqrt(squares / (groups - 1) / groups);
    }
    return curve;
}

PositionLossCurve textLossCurve(
    const Model &model, const Input &input, const NextTokenRows &probs, const std::atomic<bool> *cancel)
{
    PositionLossCurve curve = curveOf(model);
    const int scored = int(input.tokens.size()) - 1;
    curve.loss.assign(size_t(std::max(scored, 0)), std::nan(""));
    for (int begin = 0; begin < scored && !(cancel && cancel->load()); begin += kRowsAtOnce) {
        std::vector<int> positions;
        for (int t = begin; t < std::min(scored, begin + kRowsAtOnce); ++t)
            if (std::find(input.padding.begin(), input.padding.end(), t + 1) == input.padding.end())
                positions.push_back(t);
        if (positions.empty())
            continue;
        const Tensor rows = probs(positions);
        const int64_t V = rows.dim(1);
        for (size_t r = 0; r < positions.size(); ++r) {
            const int next = input.tokens[size_t(positions[r] + 1)];
            curve.loss[size_t(positions[r])] = -std::log(std::max(rows.data()[int64_t(r) * V + next], 1e-30f));
        }
    }
    return curve;
}

namespace {

using namespace atlas::analysis;

// The held-out windows of the model's and baseline_model's tasks, and the input's own next tokens.
AnalysisRequest request(const ViewSpec &spec, const AnalysisContext &c)
{
    if (!c.model || !c.trace || !c.program)
        return problem(kNothingComputed);
    if (!c.model->config.causal || c.model->config.isEncoderDecoder())
        return problem("The Position loss view scores each next token after the tokens before it: " + c.model->name
            + (c.model->config.isEncoderDecoder() ? " is an encoder\u2013decoder"
                                                  : " is an encoder, which reads both ways")
            + ". Open a causal model, such as austen-long.");
    const bool text = c.tokens >= 2 && nextTokenReadable(c.model->config, *c.program, *c.trace);
    const bool task = readsTaskWindows(*c.model);
    if (!text && !task)
        return problem("The Position loss view needs the run to its end, or a model whose own task is windows of a "
                       "corpus (chars, words): step to the end.");
    const int windows = c.heldOutExamples(PositionLossAnalysis::kWindows);
    const int models = task ? (spec.baselineModel.empty() ? 1 : 2) : 0;
    if (auto over = overBudgetRequest(c,
            std::to_string(windows) + " held-out windows of " + std::to_string(c.model->config.context) + " tokens"
                + (models == 2 ? " for each model" : ""),
            models * windows * Model::forwardFlopsOf(c.model->config, c.model->config.context), 0))
        return *over;
    AnalysisRequest r = streamsRequest("position-loss/" + modelIdentity(*c.model) + "/" + std::to_string(windows), c);
    r.progress = std::make_shared<AnalysisProgress>();
    r.progress->total = models * lossGroups(windows) + (text ? 1 : 0);
    r.run = [model = c.model, program = c.program, trace = c.trace, input = inputOf(c), other = spec.baselineModel,
                windows, task, text, progress = r.progress](const std::atomic<bool> &cancel) {
        return timedResult<PositionLossAnalysis>([&](PositionLossAnalysis &result) {
            if (task) {
                const auto scored = [&] {
                    ++progress->done;
                    return !cancel.load();
                };
                result.curves.push_back(taskLossCurve(model, windows, scored));
                if (!other.empty() && !cancel.load()) {
                    const std::shared_ptr<const Model> baseline = loadModel(other);
                    if (!readsTaskWindows(*baseline))
                        throw Error("baseline_model: " + baseline->name
                            + " has no task of corpus windows read token by token (chars, words) to score");
                    result.curves.push_back(taskLossCurve(baseline, windows, scored));
                }
            }
            if (text && !cancel.load()) {
                result.curves.push_back(textLossCurve(
                    *model, input,
                    [&](const std::vector<int> &rows) { return nextTokenProbs(*model, *program, *trace, input, rows); },
                    &cancel));
                ++progress->done;
            }
        });
    };
    return r;
}

} // namespace

std::vector<PositionBin> binned(const std::vector<double> &loss)
{
    std::vector<PositionBin> bins;
    const int n = int(loss.size());
    for (int first = 1; first <= n;) {
        int width = 1; // two bins a doubling from 4 on: [4, 5] [6, 7] [8, 11] [12, 15] …
        while (4 * width <= first)
            width *= 2;
        int last = std::min(n, first + width - 1);
        if (n - last < (width + 1) / 2) // a tail shorter than half a bin joins this one
            last = n;
        double sum = 0;
        int count = 0;
        for (int t = first; t <= last; ++t)
            if (!std::isnan(loss[size_t(t - 1)])) {
                sum += loss[size_t(t - 1)];
                ++count;
            }
        if (count > 0)
            bins.push_back({first, last, sum / count});
        first = last + 1;
    }
    return bins;
}

double lossNear(const std::vector<double> &loss, int tokensRead)
{
    const int from = std::max(1, tokensRead - tokensRead / 10),
              to = std::min(int(loss.size()), tokensRead + tokensRead / 10);
    double sum = 0;
    int count = 0;
    for (int t = from; t <= to; ++t)
        if (!std::isnan(loss[size_t(t - 1)])) {
            sum += loss[size_t(t - 1)];
            ++count;
        }
    return count > 0 ? sum / count : std::nan("");
}

double inContextScore(const std::vector<double> &loss, int *late, int *early)
{
    const int n = int(loss.size());
    *late = n >= 550 ? 500 : std::max(1, n * 9 / 10);
    *early = std::max(1, *late / 10);
    return lossNear(loss, *late) - lossNear(loss, *early);
}

ViewKind kind()
{
    return {.kind = "position-loss",
        .title = "Position loss",
        .summary = "the next token's loss against how many tokens the model has read: on held-out windows of its "
                   "task and on the input, with the in-context learning score",
        .group = "Training",
        .needs = ViewNeeds::NextProbs,
        .request = request,
        .analysisKeys = {"baseline_model"},
        .after = "recurrence"};
}

} // namespace atlas::views::positionloss
