//===- transforms/fusion/FuseMatMulAdd.cpp - MatMul + bias into Gemm ------===//
//
// fuse-matmul-add: a 2-D MatMul with a constant weight matrix followed by
// the Add of a constant bias becomes one Gemm.
//
//   Before:                                 After:
//     m = MatMul(x, W)    # x: [M, K]         y = Gemm(x, W, b)
//     y = Add(m, b)       # W: [K, N]
//
// Conditions (otherwise declined, with the reason under --debug-only):
//   - x is known to be 2-D (Gemm is 2-D only: with a higher rank the
//     MatMul + Add is kept rather than made a Reshape/Gemm/Reshape
//     sandwich: bench/matmul_add_nd.sh finds no difference in ONNX Runtime
//     1.30, one thread, on transformer shapes ([1,128,768]x[768,768] to
//     [8,197,3072]x[3072,768]): Gemm form / MatMul form 0.97..1.03 on the
//     fastest runs with ORT's optimizer off, and with it on ORT rewrites
//     MatMul + Add into that very sandwich itself; so the smaller form,
//     2 nodes instead of 3 and two shape constants, stays);
//   - W is a 2-D constant, b a constant (either Add operand), both of x's
//     floating dtype (float, double, float16; bfloat16 from opset 13);
//   - b is unidirectionally broadcastable to [M, N] and broadcasting it
//     does not grow the result: rank <= 2, last dim 1 or N, first dim (of a
//     2-D b) 1 or a known M. So [N], [1, N], [M, N], [M, 1], [1] and a
//     scalar all become Gemm's C as they are;
//   - the MatMul result is read only by the Add and is not a graph output.
// Opset < 7 Gemms get broadcast = 1.
//
//===----------------------------------------------------------------------===//
#include "transforms/fusion/FusionUtils.h"
#include "transforms/GreedyPatternRewriteDriver.h"
#include "transforms/Passes.h"
#include "transforms/ValueUtils.h"

namespace onnxslim {

namespace {

/// Whether a bias of `dims` is a valid Gemm C for an [M, N] result that it
/// does not grow; `m` is M when known.
bool isGemmBias(const std::vector<int64_t> &dims, const Dim &m, int64_t n) {
  if (dims.size() > 2)
    return false;
  if (!dims.empty() && dims.back() != 1 && dims.back() != n)
    return false;
  if (dims.size() == 2 && dims[0] != 1 && !(m.isValue() && m.getValue() == dims[0]))
    return false;
  return true;
}

class FuseMatMulAddPattern : public Pattern {
public:
  FuseMatMulAddPattern() : Pattern("Add", "fuse-matmul-add") {}

  bool matchAndRewrite(Node *add, Rewriter &rewriter) const override {
    if (add->numOperands() != 2 || !add->operand(0) || !add->operand(1) || !add->result(0))
      return rewriter.notifyMatchFailure(add, "not two inputs and one result");
    size_t side = producerOp(add->operand(0), "MatMul") ? 0 : 1;
    Node *matmul = producerOp(add->operand(side), "MatMul");
    if (!matmul)
      return rewriter.notifyMatchFailure(add, "no operand is a MatMul result");
    if (!hasSingleNodeUse(matmul->result(0)))
      return rewriter.notifyMatchFailure(add, "the MatMul result has other users or is a graph output");
    if (matmul->numOperands() != 2 || !matmul->operand(0) || !matmul->operand(1))
      return rewriter.notifyMatchFailure(add, "MatMul without two inputs");
    TensorPtr w = constantTensor(matmul->operand(1));
    if (!w || w->rank() != 2)
      return rewriter.notifyMatchFailure(add, "the MatMul weight is not a constant 2-D matrix");
    int64_t opset = defaultOpset(*add);
    DataType dt = w->dtype();
    if (!(dt == DataType::Float || dt == DataType::Double || dt == DataType::Float16 ||
          (dt == DataType::BFloat16 && opset >= 13)))
      return rewriter.notifyMatchFailure(add, "the weight's dtype is not one Gemm takes");
    std::optional<Shape> xs = knownShape(matmul->operand(0));
    if (!xs || xs->size() != 2)
      return rewriter.notifyMatchFailure(add, "the MatMul input is not known to be 2-D");
    Value *biasValue = add->operand(1 - side);
    TensorPtr bias = constantTensor(biasValue);
    if (!bias)
      return rewriter.notifyMatchFailure(add, "the bias is not a constant");
    if (bias->dtype() != dt)
      return rewriter.notifyMatchFailure(add, "the bias's dtype differs from the weight's");
    if (!isGemmBias(bias->dims(), (*xs)[0], w->dims()[1]))
      return rewriter.notifyMatchFailure(add, "the bias does not broadcast to [M, N] without growing it");

    Node *gemm = rewriter.createNodeBefore(add, "Gemm", {matmul->operand(0), matmul->operand(1), biasValue},
                                           {add->result(0)->name() + "_gemm"});
    gemm->setName(matmul->name());
    if (opset < 7)
      gemm->setAttr(Attribute::makeInt("broadcast", 1));
    gemm->result(0)->setType(add->result(0)->type());
    replaceFusedNode(add, gemm->result(0), rewriter, "MatMul + Add -> Gemm", true);
    if (matmul->resultsUnused())
      rewriter.eraseNode(matmul);
    return true;
  }
};

class FuseMatMulAddPass : public PatternRewritePass {
public:
  std::string_view name() const override { return "fuse-matmul-add"; }
  std::string_view description() const override {
    return "Turn a 2-D MatMul with constant weights plus a constant bias into Gemm";
  }

protected:
  void populatePatterns(PatternSet &patterns) const override { patterns.add<FuseMatMulAddPattern>(); }
};

} // namespace

std::unique_ptr<Pass> createFuseMatMulAddPass() { return std::make_unique<FuseMatMulAddPass>(); }

} // namespace onnxslim
