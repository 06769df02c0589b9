#include "engine/temperature.h"

#include "util/error.h"

#include <algorithm>
#include <cmath>
#include <string>

namespace atlas {

std::vector<double> atTemperature(const float *probabilities, int size, double temperature)
{
    if (!(temperature > 0) || !std::isfinite(temperature))
        throw Error("temperature must be above 0, got " + std::to_string(temperature));
    std::vector<double> out(size_t(std::max(0, size)), 0.0);
    if (temperature == 1.0) {
        std::copy(probabilities, probabilities + out.size(), out.begin());
        return out;
    }
    // log p = z − logsumexp(z): dividing it by t and renormalising is softmax(z / t). Work from the largest log p so
    // that small temperatures do not underflow every entry.
    double top = -INFINITY;
    for (int i = 0; i < size; ++i)
        if (probabilities[i] > 0)
            top = std::max(top, std::log(double(probabilities[i])));
    double sum = 0;
    for (int i = 0; i < size; ++i)
        if (probabilities[i] > 0)
            sum += out[size_t(i)] = std::exp((std::log(double(probabilities[i])) - top) / temperature);
    if (sum > 0)
        for (double &p : out)
            p /= sum;
    return out;
}

size_t nucleusSize(const double *sortedWeights, size_t size, double topP)
{
    if (!(topP > 0) || std::isnan(topP))
        throw Error("top-p must be above 0, got " + std::to_string(topP));
    if (topP >= 1 || size == 0)
        return size;
    double total = 0;
    for (size_t i = 0; i < size; ++i)
        total += sortedWeights[i];
    double cumulative = 0;
    for (size_t i = 0; i < size; ++i) {
        cumulative += sortedWeights[i];
        if (cumulative >= topP * total)
            return i + 1;
    }
    return size; // rounding left the last share just short
}

} // namespace atlas
