#include "tensor/tensor.h"

#include "tensor/backgroundfree.h"
#include "tensor/packedrows.h"

#include "util/error.h"

namespace atlas {

AllocationListener *&allocationListener()
{
    static thread_local AllocationListener *listener = nullptr;
    return listener;
}

Tensor::Tensor(Shape shape, float fill)
    : m_shape(std::move(shape))
    , m_data(std::make_shared<FloatBuffer>(static_cast<size_t>(count(m_shape)), fill))
{
}

Tensor Tensor::uninitialized(Shape shape)
{
    Tensor t;
    t.m_data = std::make_shared<FloatBuffer>(static_cast<size_t>(count(shape)));
    t.m_shape = std::move(shape);
    if (t.bytes() >= kHugePageAdviceBytes)
        adviseHugePages(t.m_data->data(), t.bytes());
    return t;
}

Tensor Tensor::packed(std::shared_ptr<const PackedRows> rows)
{
    Tensor t;
    const int64_t stacks = rows->transposedStacks();
    t.m_shape
        = stacks > 0 ? Shape {stacks, rows->columns(), rows->rows() / stacks} : Shape {rows->rows(), rows->columns()};
    t.m_packed = std::move(rows);
    return t;
}

int64_t Tensor::numel() const
{
    if (m_packed)
        return m_packed->rows() * m_packed->columns();
    return m_data ? static_cast<int64_t>(m_data->size()) : 0;
}

size_t Tensor::storedBytes() const
{
    return m_packed ? m_packed->bytes() : bytes();
}

Tensor Tensor::unpacked() const
{
    if (!m_packed)
        return *this;
    Tensor t = uninitialized(m_shape);
    m_packed->decodeAll(t.data());
    return t;
}

FloatBuffer &Tensor::values()
{
    detach();
    return *m_data;
}

const FloatBuffer &Tensor::values() const
{
    static const FloatBuffer none;
    if (m_packed)
        return m_packed->decoded();
    return m_data ? *m_data : none;
}

void Tensor::detach()
{
    if (m_packed) {
        m_data = std::make_shared<FloatBuffer>(static_cast<size_t>(numel()));
        m_packed->decodeAll(m_data->data());
        m_packed.reset();
    } else if (!m_data)
        m_data = std::make_shared<FloatBuffer>();
    else if (m_data.use_count() > 1)
        m_data = std::make_shared<FloatBuffer>(*m_data);
}

int64_t Tensor::count(const Shape &shape)
{
    int64_t n = 1;
    for (int64_t d : shape) {
        if (d < 0)
            throw Error("negative dimension in shape " + shapeString(shape));
        n *= d;
    }
    return n;
}

std::string Tensor::shapeString(const Shape &shape)
{
    std::string s = "[";
    for (size_t i = 0; i < shape.size(); ++i)
        s += (i ? ", " : "") + std::to_string(shape[i]);
    return s + "]";
}

MatrixMap Tensor::matrix()
{
    if (rank() != 2)
        throw Error("tensor of shape " + shapeString() + " is not a matrix");
    return MatrixMap(data(), m_shape[0], m_shape[1]);
}

ConstMatrixMap Tensor::matrix() const
{
    if (rank() != 2)
        throw Error("tensor of shape " + shapeString() + " is not a matrix");
    return ConstMatrixMap(data(), m_shape[0], m_shape[1]);
}

MatrixMap Tensor::slice(int64_t i)
{
    if (rank() != 3 || i < 0 || i >= m_shape[0])
        throw Error("slice " + std::to_string(i) + " out of range for shape " + shapeString());
    return MatrixMap(data() + i * m_shape[1] * m_shape[2], m_shape[1], m_shape[2]);
}

ConstMatrixMap Tensor::slice(int64_t i) const
{
    if (rank() != 3 || i < 0 || i >= m_shape[0])
        throw Error("slice " + std::to_string(i) + " out of range for shape " + shapeString());
    return ConstMatrixMap(data() + i * m_shape[1] * m_shape[2], m_shape[1], m_shape[2]);
}

void Tensor::reshape(Shape shape)
{
    if (m_packed && shape != m_shape)
        detach();
    if (count(shape) != numel())
        throw Error("cannot reshape " + shapeString() + " to " + shapeString(shape));
    m_shape = std::move(shape);
}

} // namespace atlas
