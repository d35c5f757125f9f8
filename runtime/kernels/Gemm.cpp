//===- runtime/kernels/Gemm.cpp - Gemm -----------------------------------===//
//
// Gemm: Y = alpha * op(A) * op(B) + beta * C for every opset version. C is
// optional (the spec requires it before opset 11; a missing C is accepted)
// and broadcasts unidirectionally to [M, N] (the opset < 7 `broadcast`
// attribute is accepted either way, as ONNX Runtime does). Float types run on the blocked GEMM
// engine after Y is filled with beta * C (a constant float B packed once for
// it from the second run on); integer types (opset 9+) use a
// plain loop with wrapping arithmetic.
//
//===----------------------------------------------------------------------===//
#include "runtime/Gemm.h"
#include "runtime/Kernel.h"
#include "runtime/kernels/Dispatch.h"
#include "runtime/kernels/NNCommon.h"

namespace onnxslim::rt {
namespace {

using namespace nn;

struct GemmShape {
  bool transA = false, transB = false;
  int64_t M = 0, N = 0, K = 0;
};

Status gemmShape(const KernelContext &ctx, const Tensor &a, const Tensor &b, GemmShape &s) {
  if (a.rank() != 2 || b.rank() != 2)
    return KernelContext::error("A and B must be 2-D, got " + shapeString(a.dims()) + " and " +
                                shapeString(b.dims()));
  s.transA = ctx.attrInt("transA", 0) != 0;
  s.transB = ctx.attrInt("transB", 0) != 0;
  s.M = s.transA ? a.dims()[1] : a.dims()[0];
  s.K = s.transA ? a.dims()[0] : a.dims()[1];
  int64_t kb = s.transB ? b.dims()[1] : b.dims()[0];
  s.N = s.transB ? b.dims()[0] : b.dims()[1];
  if (kb != s.K)
    return KernelContext::error("inner dimensions do not match: op(A) is " + std::to_string(s.M) +
                                "x" + std::to_string(s.K) + ", op(B) is " + std::to_string(kb) +
                                "x" + std::to_string(s.N));
  return Status::success();
}

/// Strides (row, column) to read C broadcast to [M, N].
Status cStrides(const std::vector<int64_t> &c, int64_t M, int64_t N, int64_t &rs, int64_t &cs) {
  if (c.size() > 2)
    return Status::error("C must have rank <= 2, got " + shapeString(c));
  int64_t rows = c.size() == 2 ? c[0] : 1;
  int64_t cols = c.empty() ? 1 : c.back();
  if ((rows != 1 && rows != M) || (cols != 1 && cols != N))
    return Status::error("C of shape " + shapeString(c) + " does not broadcast to [" +
                         std::to_string(M) + "," + std::to_string(N) + "]");
  cs = cols == 1 ? 0 : 1;
  rs = rows == 1 ? 0 : cols;
  return Status::success();
}

template <typename T> Status gemmFloat(KernelContext &ctx, const Tensor &a, const Tensor &b) {
  using C = ComputeType<T>;
  GemmShape s;
  ONNXSLIM_RETURN_IF_ERROR(gemmShape(ctx, a, b, s));
  FloatInput<T> A, B, Cin;
  ONNXSLIM_RETURN_IF_ERROR(A.init(a, "input A"));
  ONNXSLIM_RETURN_IF_ERROR(B.init(b, "input B"));
  bool hasC = false;
  ONNXSLIM_RETURN_IF_ERROR(optionalFloatInput(ctx, 2, "input C", Cin, hasC));
  C alpha = static_cast<C>(ctx.attrFloat("alpha", 1.0f));
  C beta = static_cast<C>(ctx.attrFloat("beta", 1.0f));
  FloatOutput<T> Y;
  ONNXSLIM_RETURN_IF_ERROR(Y.init({s.M, s.N}));
  C *y = Y.data();
  C outBeta = 0;
  if (hasC && beta != C(0)) {
    int64_t rs = 0, cs = 0;
    ONNXSLIM_RETURN_IF_ERROR(cStrides(Cin.dims(), s.M, s.N, rs, cs));
    for (int64_t i = 0; i < s.M; ++i)
      for (int64_t j = 0; j < s.N; ++j)
        y[i * s.N + j] = beta * Cin[i * rs + j * cs];
    outBeta = 1;
  } else if (hasC) {
    int64_t rs = 0, cs = 0;
    ONNXSLIM_RETURN_IF_ERROR(cStrides(Cin.dims(), s.M, s.N, rs, cs));
  }
  const float *packed = nullptr;
  if constexpr (std::is_same_v<T, float>)
    packed = keptPackedB(ctx, 1, s.transA, s.transB, s.M, s.K, s.N, B.data(), b.dims()[1]);
  if (packed) {
    if constexpr (std::is_same_v<T, float>)
      gemmPackedB(s.transA, s.M, s.N, s.K, alpha, A.data(), a.dims()[1], packed, gemmPanelWidth<float>(), outBeta,
                  y, s.N, nullptr, s.N);
  } else {
    gemm(s.transA, s.transB, s.M, s.N, s.K, alpha, A.data(), a.dims()[1], B.data(), b.dims()[1], outBeta, y,
         s.N);
  }
  ctx.setOutput(0, Y.finish());
  return Status::success();
}

template <typename T> Status gemmInt(KernelContext &ctx, const Tensor &a, const Tensor &b) {
  GemmShape s;
  ONNXSLIM_RETURN_IF_ERROR(gemmShape(ctx, a, b, s));
  ElemView<T> A, B, Cv;
  ONNXSLIM_RETURN_IF_ERROR(viewElements(a, A));
  ONNXSLIM_RETURN_IF_ERROR(viewElements(b, B));
  const Tensor *c = ctx.tensor(2);
  int64_t rs = 0, cs = 0;
  if (c) {
    ONNXSLIM_RETURN_IF_ERROR(viewElements(*c, Cv));
    ONNXSLIM_RETURN_IF_ERROR(cStrides(c->dims(), s.M, s.N, rs, cs));
  }
  // Integer Gemm: alpha and beta are floats; results are truncated like ONNX Runtime.
  double alpha = ctx.attrFloat("alpha", 1.0f), beta = ctx.attrFloat("beta", 1.0f);
  std::optional<TensorBuilder> out;
  ONNXSLIM_RETURN_IF_ERROR(allocOutput(dataTypeOf<T>(), {s.M, s.N}, out));
  T *y = out->dataAs<T>();
  int64_t lda = a.dims()[1], ldb = b.dims()[1];
  using W = WrapType<T>;
  for (int64_t i = 0; i < s.M; ++i)
    for (int64_t j = 0; j < s.N; ++j) {
      W acc = 0;
      for (int64_t k = 0; k < s.K; ++k) {
        T av = s.transA ? A[k * lda + i] : A[i * lda + k];
        T bv = s.transB ? B[j * ldb + k] : B[k * ldb + j];
        acc = static_cast<W>(acc + static_cast<W>(av) * static_cast<W>(bv));
      }
      T sum = static_cast<T>(acc);
      if (alpha == 1.0 && (!c || beta == 1.0)) {
        y[i * s.N + j] = c ? wrapAdd(sum, Cv[i * rs + j * cs]) : sum;
      } else {
        double v = alpha * static_cast<double>(sum);
        if (c)
          v += beta * static_cast<double>(Cv[i * rs + j * cs]);
        y[i * s.N + j] = floatToInt<T>(v);
      }
    }
  ctx.setOutput(0, out->finish());
  return Status::success();
}

using GemmIntTypes = TypeList<int32_t, int64_t, uint32_t, uint64_t>;

Status gemmKernel(KernelContext &ctx) {
  const Tensor *a = nullptr, *b = nullptr;
  ONNXSLIM_RETURN_IF_ERROR(ctx.requireTensor(0, a));
  ONNXSLIM_RETURN_IF_ERROR(ctx.requireTensor(1, b));
  if (a->dtype() != b->dtype() || (ctx.tensor(2) && ctx.tensor(2)->dtype() != a->dtype()))
    return KernelContext::error("inputs have different element types");
  if (typeIn<FloatTypes>(a->dtype()))
    return dispatchType<FloatTypes>(a->dtype(), [&](auto tag) {
      return gemmFloat<typename decltype(tag)::type>(ctx, *a, *b);
    });
  return dispatchType<GemmIntTypes>(a->dtype(), [&](auto tag) {
    return gemmInt<typename decltype(tag)::type>(ctx, *a, *b);
  });
}

} // namespace

void registerGemmKernels(OpRegistry &registry) {
  registry.add("Gemm", 1, kLatestOpset, gemmKernel);
}

} // namespace onnxslim::rt
