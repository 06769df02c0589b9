#include "sinkhorn/sinkhornsort.h"

#include "analysis/headchoice.h"
#include "engine/engine.h"
#include "train/task.h"
#include "util/error.h"

#include <algorithm>

namespace atlas {

std::string sinkhornProblem(const Model &model)
{
    return model.config.sinkhorn.active() ? std::string()
                                          : model.name
            + " has no Sinkhorn attention: every query scores every key (the built-in austen-mlm-sinkhorn has it)";
}

SinkhornPicture sinkhornPicture(std::shared_ptr<const Model> model, const std::vector<int> &tokens, int layer, int head)
{
    if (const std::string why = sinkhornProblem(*model); !why.empty())
        throw Error(why);
    const ModelConfig &c = model->config;
    if (const std::string why = headChoiceProblem(*model, layer, head); !why.empty())
        throw Error(why);
    SinkhornPicture s;
    s.tokens = tokens;
    s.layer = layer;
    s.head = head;
    s.block = c.sinkhorn.block;
    const int T = int(tokens.size());
    s.blocks = c.sinkhorn.blocks(T);
    s.pairs = c.sinkhorn.workShare(T);
    Input input;
    input.tokens = tokens;
    Engine engine(model, std::move(input));
    const std::string p = "layer." + std::to_string(layer) + ".";
    engine.runTo(engine.program().producerOf(p + "attn.probs") + 1);
    const ConstMatrixMap S = engine.trace().tensor(p + "attn.sort").matrix();
    for (int I = 0; I < s.blocks; ++I) {
        int best = 0;
        for (int J = 0; J < s.blocks; ++J) {
            s.sort.push_back(S(I, J));
            if (S(I, J) > S(I, best))
                best = J;
        }
        s.sortedTo.push_back(best);
        s.sharpness += S(I, best) / s.blocks;
    }
    const ConstMatrixMap halves = engine.trace().tensor(p + "attn.block_probs").slice(head);
    s.sortedShare = double(halves.leftCols(s.block).sum()) / std::max(T, 1);
    const ConstMatrixMap probs = engine.trace().tensor(p + "attn.probs").slice(head);
    for (int q = 0; q < T; ++q)
        for (int k = 0; k < T; ++k)
            s.attention.push_back(probs(q, k));
    return s;
}

HeldOutScore sortSwitchedOffScore(std::shared_ptr<const Model> model, int examples)
{
    if (const std::string why = sinkhornProblem(*model); !why.empty())
        throw Error(why);
    HeldOutScore s;
    if (model->config.task.empty())
        return s;
    const std::unique_ptr<Task> task = Task::create(model->config.task, model->config.context);
    s.evaluation = evaluateAdjusted(
        model, *task, examples, 12345, [](Input &input, const Example &) { input.sortSwitchedOff = true; });
    s.model = model->name;
    return s;
}

} // namespace atlas
