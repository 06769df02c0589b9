#include "model/gguflayout.h"

#include "tensor/packedrows.h"

#include <functional>

namespace atlas {

namespace {

// Row r of the Hugging Face layout is row ggufRow(r) of the file's.
using RowMap = std::function<int64_t(int64_t)>;

Tensor movedRows(const Tensor &t, const RowMap &ggufRow, GgufDirection direction)
{
    const int64_t rows = t.dim(0), columns = t.numel() / rows;
    if (const PackedRows *packed = t.packing()) {
        std::vector<int64_t> sourceRow(static_cast<size_t>(rows));
        for (int64_t r = 0; r < rows; ++r)
            if (direction == GgufDirection::FromGguf)
                sourceRow[size_t(r)] = ggufRow(r);
            else
                sourceRow[size_t(ggufRow(r))] = r;
        return Tensor::packed(packed->reordered(sourceRow));
    }
    Tensor out = Tensor::uninitialized(t.shape());
    for (int64_t r = 0; r < rows; ++r) {
        const int64_t g = ggufRow(r);
        if (direction == GgufDirection::FromGguf)
            std::copy_n(t.data() + g * columns, columns, out.data() + r * columns);
        else
            std::copy_n(t.data() + r * columns, columns, out.data() + g * columns);
    }
    return out;
}

RowMap ropePairRows(int64_t rows, int64_t heads)
{
    const int64_t d = rows / heads;
    return [d](int64_t r) {
        const int64_t h = r / d, s = r % d / (d / 2), i = r % d % (d / 2);
        return h * d + 2 * i + s;
    };
}

RowMap neoxQkvRows(int64_t rows, int64_t heads)
{
    const int64_t width = rows / 3, d = width / heads;
    return [width, d](int64_t r) {
        const int64_t block = r / d, h = block / 3, part = block % 3;
        return part * width + h * d + r % d;
    };
}

// A GPT-2 layout's qkv, [all q; all k; all v], written as gptneox: RoPE on adjacent pairs (RoFormer's) becomes NeoX's
// rotation of halves when each head's q and k rows are regrouped, pair i's two rows to rows i and n/2 + i of the
// head's n rotated rows.
RowMap gpt2RopeQkvRows(int64_t rows, int64_t heads, int64_t rotated)
{
    const int64_t width = rows / 3, d = width / heads;
    return [width, d, rotated](int64_t r) {
        const int64_t j = r % d;
        if (r >= 2 * width || j >= rotated) // v, and the rows RoPE leaves
            return r;
        return r - j + j % 2 * (rotated / 2) + j / 2;
    };
}

bool contains(const std::string &key, const char *part)
{
    return key.find(part) != std::string::npos;
}

} // namespace

Tensor ggufLayout(const ModelConfig &c, const std::string &architecture, const std::string &key, const Tensor &t,
    GgufDirection direction)
{
    if ((architecture == "llama" || architecture == "smollm3")
        && (contains(key, ".attn_q.") || contains(key, ".attn_k."))) {
        const int64_t heads = contains(key, ".attn_q.") ? c.heads : c.kvHeadCount();
        return movedRows(t, ropePairRows(t.dim(0), heads), direction);
    }
    if (architecture == "gptneox" && contains(key, ".attn_qkv.")) {
        if (c.family != Family::Gpt2)
            return movedRows(t, neoxQkvRows(t.dim(0), c.heads), direction);
        return c.positions == PositionKind::Rope
            ? movedRows(t, gpt2RopeQkvRows(t.dim(0), c.heads, c.rotatedDims()), direction)
            : t;
    }
    if ((architecture == "gemma2" || architecture == "gemma3") && key.ends_with("norm.weight")) {
        Tensor out = t;
        const float shift = direction == GgufDirection::FromGguf ? -1.0f : 1.0f;
        for (float &v : out.values())
            v += shift;
        return out;
    }
    return t;
}

} // namespace atlas
