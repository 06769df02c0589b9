#pragma once

#include "model/model.h"
#include "train/backprop.h"

#include <QString>

#include <algorithm>
#include <cmath>
#include <functional>
#include <string>
#include <vector>

namespace atlas::testing {

// How a gradient is checked against central differences: `count` values of each parameter, spread over it or its
// first ones, a step of ±`step`, and agreement within `absolute` + 2 % of the numeric value.
struct CentralDifferences
{
    int count = 6;
    float step = 1e-2f;
    double absolute = 1e-3;
    bool spread = true;
};

// g's gradient of each parameter in `names` against (f(θ + h) − f(θ − h)) / 2h, where `loss(name, index, value)` runs
// the model with that one value changed; a NaN from it skips the value (the function jumps there). Returns the first
// disagreement, naming the parameter, the index and both values, or empty; `checked` counts the values compared.
inline QString centralDifferenceMismatch(const Model &model, const Gradients &g, const std::vector<std::string> &names,
    const CentralDifferences &how, const std::function<double(const std::string &, int64_t, float)> &loss, int &checked)
{
    const auto parameters = model.parameters();
    for (const std::string &name : names) {
        const Tensor &grad = g.grads.at(name);
        const float *values = parameters.at(name)->data();
        const int64_t count = std::min<int64_t>(grad.numel(), how.count);
        for (int64_t i = 0; i < count; ++i) {
            const int64_t at = how.spread ? i * (grad.numel() / count) : i;
            const double numeric
                = (loss(name, at, values[at] + how.step) - loss(name, at, values[at] - how.step)) / (2.0 * how.step);
            if (std::isnan(numeric))
                continue;
            ++checked;
            if (std::fabs(numeric - grad.data()[at]) > how.absolute + 2e-2 * std::fabs(numeric))
                return QString("%1[%2]: analytic %3, numeric %4")
                    .arg(QString::fromStdString(name))
                    .arg(at)
                    .arg(grad.data()[at])
                    .arg(numeric);
        }
    }
    return {};
}

} // namespace atlas::testing
