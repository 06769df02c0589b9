#pragma once

#include "tensor/buffercache.h"

#include <Eigen/Core>

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace atlas {

// Eigen is column-major by default; every matrix in the engine is row-major (C order, as PyTorch and .npy).
using MatrixRM = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
using MatrixMap = Eigen::Map<MatrixRM>;
using ConstMatrixMap = Eigen::Map<const MatrixRM>;
using RowVector = Eigen::Matrix<float, 1, Eigen::Dynamic, Eigen::RowMajor>;
using RowVectorMap = Eigen::Map<RowVector>;
using ConstRowVectorMap = Eigen::Map<const RowVector>;

using Shape = std::vector<int64_t>;

class PackedRows;

// Hears every tensor buffer allocated and freed on its thread while installed (trace/allocationrecorder.h
// installs one to measure a training step). Nothing listens by default: the cost is one thread-local test.
class AllocationListener
{
public:
    virtual ~AllocationListener() = default;
    virtual void allocated(const void *buffer, size_t bytes) = 0;
    virtual void freed(const void *buffer, size_t bytes) = 0;
};
// The listener of the calling thread, or nullptr.
AllocationListener *&allocationListener();

// Tensor storage aligned to 64 bytes: Eigen's vectorised reductions peel off a different number of leading
// elements depending on the address, so with unaligned storage the same data could sum in another order and
// give other bits. With every buffer aligned the same way, a recomputed tensor is bit-identical.
template <typename T> struct AlignedAllocator
{
    using value_type = T;
    AlignedAllocator() = default;
    template <typename U> AlignedAllocator(const AlignedAllocator<U> &) { }
    T *allocate(size_t n)
    {
        T *p = static_cast<T *>(allocateTensorBuffer(n * sizeof(T)));
        if (AllocationListener *listener = allocationListener())
            listener->allocated(p, n * sizeof(T));
        return p;
    }
    void deallocate(T *p, size_t n)
    {
        if (AllocationListener *listener = allocationListener())
            listener->freed(p, n * sizeof(T));
        freeTensorBuffer(p, n * sizeof(T));
    }
    // Elements made without a value are left uninitialised (Tensor::uninitialized): a loader that writes every element
    // then pays neither a pass of zeros nor, on fresh pages, their faults twice. Tensor(shape, fill) still fills.
    // (Any other construction falls back to std::allocator_traits' placement new.)
    template <typename U> void construct(U *p) noexcept { ::new (static_cast<void *>(p)) U; }
    template <typename U> bool operator==(const AlignedAllocator<U> &) const { return true; }
};
using FloatBuffer = std::vector<float, AlignedAllocator<float>>;

// A dense float32 tensor in C order. Rank 0 (a scalar) has an empty shape and one element.
// Copies share their data until one of them is written through a non-const accessor (copy on write), so a
// snapshot of a whole trace for the GUI thread costs pointers, not megabytes.
// A weight matrix may instead be packed (Tensor::packed: a GGUF file's quantized rows, tensor/packedrows.h): the
// layers' products read it through packing(), and the const accessors see its values decoded once on first use; a
// non-const accessor gives the tensor float32 values of its own.
class Tensor
{
public:
    Tensor() = default;
    explicit Tensor(Shape shape, float fill = 0.0f);
    // A tensor whose elements are not set: for a writer that sets every one of them (a checkpoint's reader). One of
    // kHugePageAdviceBytes or more asks for transparent huge pages: weights are long-lived and touched once whole.
    static Tensor uninitialized(Shape shape);
    // A [rows, columns] matrix kept packed; [stacks, columns, rows / stacks] for rows read as transposed stacks
    // (PackedRows::asTransposedStacks).
    static Tensor packed(std::shared_ptr<const PackedRows> rows);

    const Shape &shape() const { return m_shape; }
    int rank() const { return static_cast<int>(m_shape.size()); }
    int64_t dim(int i) const { return m_shape.at(static_cast<size_t>(i)); }
    int64_t numel() const;
    size_t bytes() const { return static_cast<size_t>(numel()) * sizeof(float); }
    bool empty() const { return numel() == 0; }
    // The packed rows this tensor is read from, or nullptr for plain float32 values.
    const PackedRows *packing() const { return m_packed.get(); }
    // The address of what holds the values, packed rows or float32: one for every copy sharing them, and read without
    // decoding packed rows (an analysis's cache key).
    const void *storage() const { return m_packed ? static_cast<const void *>(m_packed.get()) : data(); }
    // The bytes the values take in memory: packed, or as float32.
    size_t storedBytes() const;
    // This tensor in plain float32: itself when it is not packed, else its values decoded into a tensor of their own,
    // freed with it. For a reader that looks at a weight once (an analysis, a view), so that the model does not keep
    // the decoded values as the const accessors would.
    Tensor unpacked() const;

    float *data() { return values().data(); }
    const float *data() const { return m_data || m_packed ? values().data() : nullptr; }
    FloatBuffer &values();
    const FloatBuffer &values() const;

    // A rank-2 tensor as a matrix, or the last two dimensions of slice i of a rank-3 tensor.
    MatrixMap matrix();
    ConstMatrixMap matrix() const;
    MatrixMap slice(int64_t i);
    ConstMatrixMap slice(int64_t i) const;

    // Reinterprets the same data with another shape of the same element count.
    void reshape(Shape shape);

    static int64_t count(const Shape &shape);
    static std::string shapeString(const Shape &shape); // "[4, 12, 64]"
    std::string shapeString() const { return shapeString(m_shape); }

private:
    void detach();

    Shape m_shape;
    std::shared_ptr<FloatBuffer> m_data;
    std::shared_ptr<const PackedRows> m_packed;
};

} // namespace atlas
