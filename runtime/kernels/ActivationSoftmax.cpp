//===- runtime/kernels/ActivationSoftmax.cpp - Softmax, LogSoftmax, Hardmax ===//
//
// The softmax family. Before opset 13 the input is coerced to 2-D at `axis`
// (default 1) and the op runs over each row of the flattened trailing dims;
// from opset 13 it runs along the single dimension `axis` (default -1).
//
// The input is viewed as [outer, D, inner]. With inner == 1 each row is
// contiguous: max, exp and sum are batch loops over the row (a float
// Softmax row is runtime/VecMath's softmax, its passes fused at the CPU's
// width; rows run across the threads from 128K elements). Otherwise
// the reduction runs "vertically": per-lane running max/sum vectors of
// length inner, updated with batch loops over contiguous inner blocks.
//
//===----------------------------------------------------------------------===//
#include "runtime/ThreadPool.h"
#include "runtime/VecMath.h"
#include "runtime/kernels/Dispatch.h"

#include <xsimd/xsimd.hpp>

#include <cmath>
#include <type_traits>
#include <vector>

namespace onnxslim::rt {
namespace {

enum class Mode { Softmax, LogSoftmax, Hardmax };

template <typename C> C rowMax(const C *x, int64_t n) {
  using B = xsimd::batch<C>;
  constexpr int64_t W = static_cast<int64_t>(B::size);
  C m = -std::numeric_limits<C>::infinity();
  int64_t i = 0;
  if (n >= W) {
    B vm = B::load_unaligned(x);
    for (i = W; i + W <= n; i += W)
      vm = xsimd::max(vm, B::load_unaligned(x + i));
    alignas(64) C lanes[B::size];
    vm.store_aligned(lanes);
    for (C v : lanes)
      m = std::max(m, v);
  }
  for (; i < n; ++i)
    m = std::max(m, x[i]);
  return m;
}

/// out[i] = exp(x[i] - m) (if out), returns the sum of those. Float rows
/// take runtime/VecMath's exp (AVX2 where the CPU has it) over the shifted
/// row, then sum it in the same batch order.
template <typename C> C expShiftSum(const C *x, C *out, int64_t n, C m) {
  using B = xsimd::batch<C>;
  constexpr int64_t W = static_cast<int64_t>(B::size);
  if constexpr (std::is_same_v<C, float>) {
    thread_local std::vector<float> scratch;
    float *e = out;
    if (!e) {
      scratch.resize(static_cast<size_t>(n));
      e = scratch.data();
    }
    for (int64_t i = 0; i < n; ++i)
      e[i] = x[i] - m;
    vmath::exp(e, e, n);
    B acc(0.0f);
    int64_t i = 0;
    for (; i + W <= n; i += W)
      acc += B::load_unaligned(e + i);
    float sum = xsimd::hadd(acc);
    for (; i < n; ++i)
      sum += e[i];
    return sum;
  }
  B vm(m), acc(C(0));
  int64_t i = 0;
  for (; i + W <= n; i += W) {
    B e = xsimd::exp(B::load_unaligned(x + i) - vm);
    if (out)
      e.store_unaligned(out + i);
    acc += e;
  }
  C sum = xsimd::hadd(acc);
  for (; i < n; ++i) {
    C e = std::exp(x[i] - m);
    if (out)
      out[i] = e;
    sum += e;
  }
  return sum;
}

/// out[i] = x[i] * s + t.
template <typename C> void scaleShift(const C *x, C *out, int64_t n, C s, C t) {
  auto f = [&](const auto &v) {
    using V = std::decay_t<decltype(v)>;
    return v * V(s) + V(t);
  };
  simdMap<xsimd::batch<C>>(x, out, n, f);
}

template <Mode M, typename C> void row(const C *x, C *out, int64_t n) {
  if (n == 0)
    return;
  if constexpr (M == Mode::Hardmax) {
    int64_t best = 0;
    for (int64_t i = 1; i < n; ++i)
      if (x[i] > x[best])
        best = i;
    std::fill(out, out + n, C(0));
    out[best] = C(1);
  } else if constexpr (M == Mode::Softmax && std::is_same_v<C, float>) {
    vmath::softmax(x, out, n);
  } else {
    C m = rowMax(x, n);
    if (std::isinf(m))
      m = 0;
    if constexpr (M == Mode::Softmax) {
      C sum = expShiftSum(x, out, n, m);
      scaleShift(out, out, n, C(1) / sum, C(0));
    } else {
      C sum = expShiftSum<C>(x, nullptr, n, m);
      scaleShift(x, out, n, C(1), -m - std::log(sum));
    }
  }
}

/// The op along D for a [D, inner] block with inner > 1 (rows strided by inner).
template <Mode M, typename C> void column(const C *x, C *out, int64_t D, int64_t inner) {
  if (D == 0)
    return;
  std::vector<C> mx(x, x + inner);
  std::vector<int64_t> arg(static_cast<size_t>(M == Mode::Hardmax ? inner : 0), 0);
  for (int64_t j = 1; j < D; ++j) {
    const C *r = x + j * inner;
    for (int64_t k = 0; k < inner; ++k) {
      if (r[k] > mx[k]) {
        mx[k] = r[k];
        if constexpr (M == Mode::Hardmax)
          arg[k] = j;
      }
    }
  }
  if constexpr (M == Mode::Hardmax) {
    std::fill(out, out + D * inner, C(0));
    for (int64_t k = 0; k < inner; ++k)
      out[arg[k] * inner + k] = C(1);
    return;
  } else {
    for (C &m : mx)
      if (std::isinf(m))
        m = 0;
    std::vector<C> sum(static_cast<size_t>(inner), C(0));
    using B = xsimd::batch<C>;
    constexpr int64_t W = static_cast<int64_t>(B::size);
    for (int64_t j = 0; j < D; ++j) {
      const C *r = x + j * inner;
      C *o = out + j * inner;
      int64_t k = 0;
      for (; k + W <= inner; k += W) {
        B e = xsimd::exp(B::load_unaligned(r + k) - B::load_unaligned(mx.data() + k));
        if constexpr (M == Mode::Softmax)
          e.store_unaligned(o + k);
        (B::load_unaligned(sum.data() + k) + e).store_unaligned(sum.data() + k);
      }
      for (; k < inner; ++k) {
        C e = std::exp(r[k] - mx[k]);
        if constexpr (M == Mode::Softmax)
          o[k] = e;
        sum[k] += e;
      }
    }
    if constexpr (M == Mode::Softmax) {
      for (C &s : sum)
        s = C(1) / s;
      for (int64_t j = 0; j < D; ++j)
        for (int64_t k = 0; k < inner; ++k)
          out[j * inner + k] *= sum[k];
    } else {
      for (int64_t k = 0; k < inner; ++k)
        sum[k] = mx[k] + std::log(sum[k]);
      for (int64_t j = 0; j < D; ++j)
        for (int64_t k = 0; k < inner; ++k)
          out[j * inner + k] = x[j * inner + k] - sum[k];
    }
  }
}

template <Mode M, bool kCoerce> Status softmaxKernel(KernelContext &ctx) {
  const Tensor *X;
  ONNXSLIM_RETURN_IF_ERROR(ctx.requireTensor(0, X));
  int64_t rank = X->rank();
  if (rank == 0)
    return ctx.error("input must have rank >= 1");
  int64_t axis;
  ONNXSLIM_RETURN_IF_ERROR(normalizeAxis(ctx.attrInt("axis", kCoerce ? 1 : -1), rank, axis));
  const auto &dims = X->dims();
  int64_t outer = 1, D = 1, inner = 1;
  for (int64_t i = 0; i < rank; ++i) {
    int64_t d = dims[static_cast<size_t>(i)];
    if (i < axis)
      outer *= d;
    else if (i == axis || kCoerce)
      D *= d;
    else
      inner *= d;
  }
  TensorPtr out;
  ONNXSLIM_RETURN_IF_ERROR(dispatchType<FloatTypes>(X->dtype(), [&](auto tag) -> Status {
    using T = typename decltype(tag)::type;
    ComputeView<T> in;
    ONNXSLIM_RETURN_IF_ERROR(viewCompute(*X, in));
    ComputeOutput<T> o;
    ONNXSLIM_RETURN_IF_ERROR(o.init(dims));
    if (in.size() > 0 && inner == 1) {
      // Rows across the threads once there are enough exponentials.
      parallelForIf(outer > 1 && outer * D >= kParallelMinTranscendentalElements, outer,
                    [&](int64_t i) { row<M>(in.data() + i * D, o.data() + i * D, D); });
    } else if (in.size() > 0) {
      for (int64_t i = 0; i < outer; ++i)
        column<M>(in.data() + i * D * inner, o.data() + i * D * inner, D, inner);
    }
    out = o.finish();
    return Status::success();
  }));
  ctx.setOutput(0, std::move(out));
  return Status::success();
}

} // namespace

void registerActivationSoftmaxKernels(OpRegistry &r) {
  constexpr int64_t L = kLatestOpset;
  r.add("Softmax", 1, 12, softmaxKernel<Mode::Softmax, true>);
  r.add("Softmax", 13, L, softmaxKernel<Mode::Softmax, false>);
  r.add("LogSoftmax", 1, 12, softmaxKernel<Mode::LogSoftmax, true>);
  r.add("LogSoftmax", 13, L, softmaxKernel<Mode::LogSoftmax, false>);
  r.add("Hardmax", 1, 12, softmaxKernel<Mode::Hardmax, true>);
  r.add("Hardmax", 13, L, softmaxKernel<Mode::Hardmax, false>);
}

} // namespace onnxslim::rt
