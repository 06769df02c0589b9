#include "ops/ops.h"
#include "ops/shapecheck.h"
#include "tensor/matrixproduct.h"
#include "tensor/packedrows.h"

namespace atlas::ops {

void linear_forward(Tensor &out, const Tensor &inp, const Tensor &weight, const Tensor &bias)
{
    requireShape(out, {inp.dim(0), weight.dim(0)}, "linear output");
    if (inp.dim(1) != weight.dim(1))
        throw Error(
            "linear: input width " + std::to_string(inp.dim(1)) + " does not match weight " + weight.shapeString());
    MatrixMap o = out.matrix();
    if (const PackedRows *packed = weight.packing())
        packedWeightProduct(o, inp.matrix(), *packed);
    else
        matrixProduct(o, inp.matrix(), false, weight.matrix(), true, false);
    if (!bias.empty())
        o.rowwise() += ConstRowVectorMap(bias.data(), bias.numel());
}

void linear_backward(
    Tensor &dinp, Tensor &dweight, Tensor *dbias, const Tensor &dout, const Tensor &inp, const Tensor &weight)
{
    requireShape(dout, {inp.dim(0), weight.dim(0)}, "linear backward dout");
    requireShape(dinp, inp.shape(), "linear backward dinp");
    requireShape(dweight, weight.shape(), "linear backward dweight");
    ConstMatrixMap g = dout.matrix();
    matrixProduct(dinp.matrix(), g, false, weight.matrix(), false, true);
    matrixProduct(dweight.matrix(), g, true, inp.matrix(), false, true);
    if (dbias != nullptr) {
        requireShape(*dbias, {weight.dim(0)}, "linear backward dbias");
        RowVectorMap(dbias->data(), dbias->numel()) += g.colwise().sum();
    }
}

void logits_forward(Tensor &out, const Tensor &inp, const Tensor &wte)
{
    if (const PackedRows *packed = wte.packing())
        return packedWeightProduct(out.matrix(), inp.matrix(), *packed);
    matrixProduct(out.matrix(), inp.matrix(), false, wte.matrix(), true, false);
}

void logits_backward(Tensor &dinp, Tensor &dwte, const Tensor &dout, const Tensor &inp, const Tensor &wte)
{
    requireShape(dout, {inp.dim(0), wte.dim(0)}, "logits backward dout");
    requireShape(dinp, inp.shape(), "logits backward dinp");
    requireShape(dwte, wte.shape(), "logits backward dwte");
    ConstMatrixMap g = dout.matrix();
    matrixProduct(dinp.matrix(), g, false, wte.matrix(), false, true);
    matrixProduct(dwte.matrix(), g, true, inp.matrix(), false, true);
}

} // namespace atlas::ops
