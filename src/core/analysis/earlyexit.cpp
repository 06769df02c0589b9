#include "analysis/earlyexit.h"

#include "util/error.h"

#include <cmath>

namespace atlas {

namespace {

constexpr int kThresholdSteps = 20; // θ = 0.05 … 1.00

} // namespace

std::vector<int> EarlyExit::exitBlocks(ExitRule rule, double setting) const
{
    std::vector<int> exits(size_t(tokens), layers);
    for (int t = 0; t < tokens; ++t) {
        int unchanged = 0;
        for (int block = 1; block <= layers; ++block) {
            bool stop = false;
            if (rule == ExitRule::Confidence) {
                stop = double(confidenceAt(block, t)) >= setting;
            } else {
                if (block > 1)
                    unchanged = predictionAt(block, t) == predictionAt(block - 1, t) ? unchanged + 1 : 0;
                stop = unchanged >= int(std::lround(setting));
            }
            if (stop) {
                exits[size_t(t)] = block;
                break;
            }
        }
    }
    return exits;
}

EarlyExitPoint EarlyExit::measure(ExitRule rule, double setting) const
{
    EarlyExitPoint point;
    point.setting = setting;
    const std::vector<int> exits = exitBlocks(rule, setting);
    int64_t blocks = 0, agree = 0, scored = 0, correct = 0;
    for (int t = 0; t < tokens; ++t) {
        const int exit = exits[size_t(t)], predicted = predictionAt(exit, t);
        blocks += exit;
        agree += predicted == predictionAt(layers, t);
        if (target[size_t(t)] >= 0) {
            ++scored;
            correct += predicted == target[size_t(t)];
        }
    }
    if (tokens > 0) {
        point.meanLayers = double(blocks) / tokens;
        point.agreement = double(agree) / tokens;
    }
    if (scored > 0)
        point.accuracy = double(correct) / double(scored);
    return point;
}

std::string earlyExitProblem(const ModelConfig &config, const Program &program, const Trace &trace)
{
    if (std::string why = logitLensProblem(config, program, trace); !why.empty())
        return why;
    if (config.funnel.active())
        return "a funnel model pools its tokens between blocks, so after a pooled block most tokens have no "
               "prediction of their own to exit with";
    const int head = outputHeadStart(program);
    if (head < 0)
        return "this model has no output head";
    for (const std::string &input : program.ops[size_t(head)].inputs)
        if (!trace.contains(input))
            return "every block's prediction is needed: run to the end (step past " + input + ")";
    return {};
}

EarlyExit earlyExit(const LogitLens &lens, const ModelConfig &config, const std::vector<int> &tokens)
{
    const int layers = config.layers;
    const bool causal = config.causal && !config.isEncoderDecoder();
    EarlyExit e;
    e.layers = layers;
    e.tokens = lens.tokens;
    const size_t T = size_t(lens.tokens);
    e.prediction.resize(size_t(layers) * T);
    e.confidence.resize(size_t(layers) * T);
    for (int block = 1; block <= layers; ++block) {
        int row = -1;
        for (int r = 0; r < lens.rows(); ++r)
            if (lens.blocks[size_t(r)] == block)
                row = r;
        if (row < 0)
            throw Error("early exit: the logit lens has no row after block " + std::to_string(block)
                + "; run the model to the end");
        for (size_t t = 0; t < T; ++t) {
            e.prediction[size_t(block - 1) * T + t] = lens.topId(row, int(t));
            e.confidence[size_t(block - 1) * T + t] = lens.topProb(row, int(t));
        }
    }
    e.target.assign(T, -1);
    if (causal && tokens.size() == T)
        for (size_t t = 0; t + 1 < T; ++t)
            e.target[t] = tokens[t + 1];
    if (layers < 1 || T == 0)
        return e;
    e.fullAccuracy = e.measure(ExitRule::Confidence, 2.0).accuracy; // θ above 1: nobody exits early
    for (int k = 1; k <= kThresholdSteps; ++k)
        e.confidenceCurve.push_back(e.measure(ExitRule::Confidence, double(k) / kThresholdSteps));
    for (int t = 1; t < layers; ++t)
        e.patienceCurve.push_back(e.measure(ExitRule::Patience, t));
    return e;
}

ExitRule parseExitRule(const std::string &text, const std::string &source)
{
    if (text == "confidence")
        return ExitRule::Confidence;
    if (text == "patience")
        return ExitRule::Patience;
    throw Error(source + ": '" + text + "' is not an exit rule (confidence | patience)");
}

} // namespace atlas
