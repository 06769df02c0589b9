#include "analysis/maskedfills.h"

#include "analysis/mostprobable.h"
#include "analysis/objectiveexample.h"
#include "engine/engine.h"
#include "util/error.h"

namespace atlas {

namespace {

// Where `original` stands in `row` (ties: the lower id first, as mostProbable orders them).
int rankOf(const float *row, int size, int original)
{
    int rank = 0;
    for (int id = 0; id < size; ++id)
        rank += row[id] > row[original] || (row[id] == row[original] && id < original);
    return rank;
}

} // namespace

std::string maskedFillsProblem(const ModelConfig &config, const std::string &modelName)
{
    if (config.specialToken("[MASK]") < 0)
        return "model " + modelName + " has no [MASK] token: masked fills need an encoder trained as BERT was "
            + "(austen-mlm)";
    if (config.causal)
        return "model " + modelName + " is a decoder: its output at a position predicts the next token, not the one "
            + "hidden there; masked fills need an encoder trained as BERT was (austen-mlm)";
    return {};
}

MaskedFills maskedFills(std::shared_ptr<const Model> modelPtr, const std::vector<int> &tokens,
    const std::vector<int> &padding, std::optional<uint64_t> mlmSeed, int k, const std::atomic<bool> *cancel)
{
    const Model &model = *modelPtr;
    if (const std::string problem = maskedFillsProblem(model.config, model.name); !problem.empty())
        throw Error(problem);
    const int maskId = model.config.specialToken("[MASK]");
    MaskedFills out;
    CorruptedText corrupted;
    if (mlmSeed)
        corrupted = applyObjective(model, tokens, Objective::MaskedLm, *mlmSeed);
    out.read = mlmSeed ? corrupted.input : tokens;
    for (int t = 0; t < int(out.read.size()); ++t) {
        MaskedFill f;
        f.position = t;
        f.read = out.read[size_t(t)];
        if (mlmSeed) {
            f.fate = corrupted.fates[size_t(t)];
            f.original = corrupted.targets[size_t(t)];
            if (f.fate == CorruptedText::Fate::Kept)
                continue;
        } else if (f.read != maskId) {
            continue;
        }
        out.fills.push_back(f);
    }
    if (out.fills.empty())
        throw Error("the input has no [MASK] to fill: type [MASK] where a token should be hidden, or draw a masked "
                    "LM corruption from a seed");
    Input input;
    input.tokens = out.read;
    input.padding = padding;
    Engine engine(std::move(modelPtr), input);
    engine.runToEnd([cancel](int, int) { return !(cancel && *cancel); });
    if (cancel && *cancel)
        return out;
    std::vector<int> positions;
    for (const MaskedFill &f : out.fills)
        positions.push_back(f.position);
    const Tensor probs = engine.nextTokenProbs(positions); // [fills, V]
    const int V = int(probs.dim(1));
    for (size_t i = 0; i < out.fills.size(); ++i) {
        MaskedFill &f = out.fills[i];
        const float *row = probs.data() + int64_t(i) * V;
        f.top = mostProbable(row, V, k);
        if (f.original < 0)
            continue;
        f.originalProbability = row[f.original];
        f.originalRank = rankOf(row, V, f.original);
        ++out.known;
        out.named += f.originalRank == 0;
    }
    return out;
}

} // namespace atlas
