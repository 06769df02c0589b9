#include "attention/attentionresult.h"

#include "util/error.h"

namespace atlas::attention {

void checkHeadInputs(
    const char *kernel, ConstMatrixMap q, ConstMatrixMap k, ConstMatrixMap v, const AttentionOptions &options)
{
    const std::string name = std::string("attention kernel '") + kernel + "': ";
    const auto shape = [](ConstMatrixMap m) { return Tensor::shapeString({m.rows(), m.cols()}); };
    if (q.rows() < 1 || q.cols() < 1)
        throw Error(name + "q must be (T,d) with T, d >= 1, got " + shape(q));
    if (k.rows() != q.rows() || k.cols() != q.cols() || v.rows() != q.rows() || v.cols() != q.cols())
        throw Error(name + "q, k, v must all be (T,d): got q " + shape(q) + ", k " + shape(k) + ", v " + shape(v));
    for (int p : options.padding)
        if (p < 0 || p >= q.rows())
            throw Error(name + "padding position " + std::to_string(p) + " is outside the sequence of "
                + std::to_string(q.rows()) + " tokens");
}

std::vector<unsigned char> allowedKeys(int64_t T, const std::vector<int> &padding)
{
    std::vector<unsigned char> ok(static_cast<size_t>(T), 1);
    for (int p : padding)
        ok.at(static_cast<size_t>(p)) = 0;
    return ok;
}

} // namespace atlas::attention
