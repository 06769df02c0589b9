#include "features/saesplice.h"

#include "features/siterun.h"
#include "model/modeltokenizer.h"
#include "tokenize/tokenizer.h"
#include "util/error.h"

#include <algorithm>
#include <cmath>
#include <vector>

namespace atlas {

namespace {

// The run of `tokens` with the site's tensor replaced by `change(tensor)` as soon as it is made; its next-token loss
// summed over the window's predictions.
// `change` is given the run too, whose trace holds what the site's op read (a transcoder's input).
double windowLoss(std::shared_ptr<const Model> model, const std::vector<int> &tokens, const std::string &site,
    const std::function<void(Tensor &, const Engine &)> &change)
{
    Input input;
    input.tokens = tokens;
    const std::unique_ptr<Engine> run = runThroughSite(std::move(model), site, input);
    changeSiteAndFinish(*run, site, [&](Tensor &t) { change(t, *run); });
    const Tensor &logits = run->trace().tensor("logits");
    const int64_t V = logits.dim(1);
    double sum = 0;
    for (size_t t = 0; t + 1 < tokens.size(); ++t) {
        const float *row = logits.data() + int64_t(t) * V;
        const double top = *std::max_element(row, row + V);
        double z = 0;
        for (int64_t v = 0; v < V; ++v)
            z += std::exp(double(row[v]) - top);
        sum += std::log(z) + top - double(row[tokens[t + 1]]);
    }
    return sum;
}

} // namespace

SpliceLosses spliceLosses(std::shared_ptr<const Model> model, const SparseAutoencoder &sae, const SaeSite &reads,
    const SaeSite &writes, const std::string &text, int64_t maxTokens,
    const std::function<bool(int64_t, int64_t)> &progress, const std::atomic<bool> *cancel)
{
    const ModelConfig &c = model->config;
    if (!c.causal || c.isEncoderDecoder())
        throw Error("SAE splice: loss recovered is measured on a model that predicts the next token");
    const std::string tensor = saeSiteTensor(*model, writes), input = saeSiteTensor(*model, reads);
    if (sae.inputSize() != c.dModel)
        throw Error("SAE splice: a dictionary over " + std::to_string(sae.inputSize()) + " dimensions for "
            + reads.hookName() + ", which has " + std::to_string(c.dModel));
    std::vector<int> tokens = tokenizerForModel(*model)->encode(text);
    if (int64_t(tokens.size()) > maxTokens)
        tokens.resize(size_t(std::max<int64_t>(0, maxTokens)));
    if (tokens.size() < 2)
        throw Error("SAE splice: the text has fewer than two tokens");
    const int64_t window = std::max(2, c.context), T = int64_t(tokens.size());
    std::vector<std::vector<int>> windows;
    for (int64_t start = 0; start + 1 < T; start += window)
        windows.emplace_back(tokens.begin() + start, tokens.begin() + std::min(T, start + window));
    const auto check = [&](int64_t done) {
        if ((cancel && cancel->load()) || (progress && !progress(done, 3 * T)))
            throw Error("SAE splice: cancelled");
    };
    SpliceLosses out;
    Eigen::RowVectorXd mean = Eigen::RowVectorXd::Zero(c.dModel);
    int64_t rows = 0, done = 0;
    for (const std::vector<int> &w : windows) { // the clean runs, and the site's mean over them
        check(done);
        out.clean += windowLoss(model, w, tensor, [&](Tensor &t, const Engine &) {
            mean += t.matrix().cast<double>().colwise().sum();
            rows += t.dim(0);
        });
        out.tokens += int64_t(w.size()) - 1;
        done += int64_t(w.size());
    }
    mean /= double(rows);
    for (const std::vector<int> &w : windows) {
        check(done);
        out.spliced += windowLoss(model, w, tensor, [&](Tensor &t, const Engine &run) {
            t = sae.decode(sae.encode(input == tensor ? t : run.trace().tensor(input)));
        });
        out.meanAblated += windowLoss(
            model, w, tensor, [&](Tensor &t, const Engine &) { t.matrix().rowwise() = mean.cast<float>(); });
        done += 2 * int64_t(w.size());
    }
    if (progress)
        progress(3 * T, 3 * T);
    out.clean /= double(out.tokens);
    out.spliced /= double(out.tokens);
    out.meanAblated /= double(out.tokens);
    return out;
}

} // namespace atlas
