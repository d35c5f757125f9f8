//===- runtime/kernels/MatMul.cpp - MatMul ------------------------------===//
//
// MatMul (opset 1, 9, 13) with numpy semantics: 1-D operands are promoted to
// matrices and the promoted dimension removed from the result, batch
// dimensions broadcast. Float types run on the blocked GEMM engine (one GEMM
// for the whole batch when B is a single matrix, e.g. X[b,s,K] x W[K,N];
// batch entries too small to split one by one run on the threads together;
// a constant float B, weights, packed once for it from the second run on);
// float16/bfloat16 compute in float. Integer types (int32, int64, uint32,
// uint64) use a cache-friendly i-k-j loop with wrapping arithmetic.
//
//===----------------------------------------------------------------------===//
#include "runtime/Gemm.h"
#include "runtime/Kernel.h"
#include "runtime/ThreadPool.h"
#include "runtime/kernels/Dispatch.h"
#include "runtime/kernels/NNCommon.h"

namespace onnxslim::rt {
namespace {

using namespace nn;

/// Batch entries per thread from which a batched product runs an entry
/// per task even when they do not share evenly (the last round leaves at
/// most one entry in this many idle).
constexpr int64_t kEvenBatches = 8;

template <typename T> Status matMulFloat(KernelContext &ctx, const Tensor &a, const Tensor &b) {
  FloatInput<T> A, B;
  ONNXSLIM_RETURN_IF_ERROR(A.init(a, "input A"));
  ONNXSLIM_RETURN_IF_ERROR(B.init(b, "input B"));
  MatMulPlan plan;
  ONNXSLIM_RETURN_IF_ERROR(planMatMul(A.dims(), B.dims(), plan));
  FloatOutput<T> Y;
  ONNXSLIM_RETURN_IF_ERROR(Y.init(plan.outDims));
  int64_t M = plan.M, N = plan.N, K = plan.K;
  if (plan.batches() > 0) {
    if (plan.foldBatch) {
      const int64_t rows = M * plan.batches();
      const float *packed = nullptr;
      if constexpr (std::is_same_v<T, float>)
        packed = keptPackedB(ctx, 1, false, false, rows, K, N, B.data(), N);
      if (packed) {
        if constexpr (std::is_same_v<T, float>)
          gemmPackedB(false, rows, N, K, 1.0f, A.data(), K, packed, gemmPanelWidth<float>(), 0.0f, Y.data(), N,
                      nullptr, N);
      } else {
        gemm(false, false, rows, N, K, 1, A.data(), K, B.data(), N, 0, Y.data(), N);
      }
    } else {
      // Batch entries run a task each when together they are worth
      // splitting and either each is too small to split (attention's heads:
      // 199 x 16 by 16 x 199) or they share evenly among the threads
      // (ViT-B's 12 heads of 197 x 64 by 64 x 197: split one by one, the
      // 192 + 5 row blocks and column chunks of each kept two threads at
      // 1.3x the speed of one). Each is the same product wherever it runs.
      const int64_t batches = plan.batches(), moved = M * K + K * N + M * N;
      const int64_t threads = threadCount();
      const bool evenly = batches % threads == 0 || batches >= kEvenBatches * threads;
      const bool byBatch = batches > 1 && worthSplitting(batches * M * N * K, batches * moved) &&
                           (evenly || !worthSplitting(M * N * K, moved));
      parallelForIf(byBatch, batches, [&](int64_t t) {
        gemm(false, false, M, N, K, 1, A.data() + plan.aIndex[t] * M * K, K,
             B.data() + plan.bIndex[t] * K * N, N, 0, Y.data() + t * M * N, N);
      });
    }
  }
  ctx.setOutput(0, Y.finish());
  return Status::success();
}

template <typename T> Status matMulInt(KernelContext &ctx, const Tensor &a, const Tensor &b) {
  ElemView<T> A, B;
  ONNXSLIM_RETURN_IF_ERROR(viewElements(a, A));
  ONNXSLIM_RETURN_IF_ERROR(viewElements(b, B));
  MatMulPlan plan;
  ONNXSLIM_RETURN_IF_ERROR(planMatMul(a.dims(), b.dims(), plan));
  std::optional<TensorBuilder> out;
  ONNXSLIM_RETURN_IF_ERROR(allocOutput(dataTypeOf<T>(), plan.outDims, out));
  int64_t M = plan.M, N = plan.N, K = plan.K;
  using W = WrapType<T>;
  W *Y = reinterpret_cast<W *>(out->dataAs<T>());
  for (int64_t t = 0; t < plan.batches(); ++t) {
    const T *pa = A.data() + plan.aIndex[t] * M * K;
    const T *pb = B.data() + plan.bIndex[t] * K * N;
    W *py = Y + t * M * N;
    for (int64_t i = 0; i < M; ++i)
      for (int64_t k = 0; k < K; ++k) {
        W av = static_cast<W>(pa[i * K + k]);
        const T *brow = pb + k * N;
        W *yrow = py + i * N;
        for (int64_t j = 0; j < N; ++j)
          yrow[j] = static_cast<W>(yrow[j] + av * static_cast<W>(brow[j]));
      }
  }
  ctx.setOutput(0, out->finish());
  return Status::success();
}

using MatMulIntTypes = TypeList<int32_t, int64_t, uint32_t, uint64_t>;

Status matMulKernel(KernelContext &ctx) {
  const Tensor *a = nullptr, *b = nullptr;
  ONNXSLIM_RETURN_IF_ERROR(ctx.requireTensor(0, a));
  ONNXSLIM_RETURN_IF_ERROR(ctx.requireTensor(1, b));
  if (a->dtype() != b->dtype())
    return KernelContext::error("A and B have different element types (" +
                                dataTypeName(a->dtype()) + ", " + dataTypeName(b->dtype()) + ")");
  if (typeIn<FloatTypes>(a->dtype()))
    return dispatchType<FloatTypes>(a->dtype(), [&](auto tag) {
      return matMulFloat<typename decltype(tag)::type>(ctx, *a, *b);
    });
  return dispatchType<MatMulIntTypes>(a->dtype(), [&](auto tag) {
    return matMulInt<typename decltype(tag)::type>(ctx, *a, *b);
  });
}

} // namespace

void registerMatMulKernels(OpRegistry &registry) {
  registry.add("MatMul", 1, kLatestOpset, matMulKernel);
}

} // namespace onnxslim::rt
