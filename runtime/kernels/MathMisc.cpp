//===- runtime/kernels/MathMisc.cpp - Det, LpNormalization, Dropout -------===//
//
// Small math ops that fit no elementwise or reduction family:
//  - Det: determinants of the trailing [M, M] matrices, by LU decomposition
//    with partial pivoting in double precision;
//  - LpNormalization: x / ||x||_p along one axis (p = 1 or 2; a zero norm
//    gives 0);
//  - Dropout: at inference the identity, with an optional all-true mask
//    (before opset 10 the mask has the input's type); from opset 12 a true
//    `training_mode` input drops elements with probability `ratio` and scales
//    the rest by 1/(1-ratio), seeded by the `seed` attribute (numpy's legacy
//    MT19937 stream, so seeded results match the ONNX reference).
//
//===----------------------------------------------------------------------===//
#include "runtime/kernels/Dispatch.h"

#include <atomic>
#include <cmath>
#include <random>

namespace onnxslim::rt {
namespace {

//===----------------------------------------------------------------------===//
// Det
//===----------------------------------------------------------------------===//

double determinant(std::vector<double> &a, int64_t n) {
  double det = 1;
  for (int64_t c = 0; c < n; ++c) {
    int64_t pivot = c;
    for (int64_t r = c + 1; r < n; ++r)
      if (std::fabs(a[static_cast<size_t>(r * n + c)]) >
          std::fabs(a[static_cast<size_t>(pivot * n + c)]))
        pivot = r;
    double pv = a[static_cast<size_t>(pivot * n + c)];
    if (pv == 0)
      return 0;
    if (pivot != c) {
      for (int64_t k = 0; k < n; ++k)
        std::swap(a[static_cast<size_t>(c * n + k)], a[static_cast<size_t>(pivot * n + k)]);
      det = -det;
    }
    det *= pv;
    for (int64_t r = c + 1; r < n; ++r) {
      double f = a[static_cast<size_t>(r * n + c)] / pv;
      if (f == 0)
        continue;
      for (int64_t k = c + 1; k < n; ++k)
        a[static_cast<size_t>(r * n + k)] -= f * a[static_cast<size_t>(c * n + k)];
    }
  }
  return det;
}

Status detKernel(KernelContext &ctx) {
  const Tensor *X;
  ONNXSLIM_RETURN_IF_ERROR(ctx.requireTensor(0, X));
  const auto &dims = X->dims();
  if (dims.size() < 2 || dims[dims.size() - 1] != dims[dims.size() - 2])
    return ctx.error("input must have shape [*, M, M], got " + shapeString(dims));
  int64_t n = dims.back();
  std::vector<int64_t> outDims(dims.begin(), dims.end() - 2);
  TensorPtr out;
  ONNXSLIM_RETURN_IF_ERROR(dispatchType<FloatTypes>(X->dtype(), [&](auto tag) -> Status {
    using T = typename decltype(tag)::type;
    ComputeView<T> in;
    ONNXSLIM_RETURN_IF_ERROR(viewCompute(*X, in));
    ComputeOutput<T> o;
    ONNXSLIM_RETURN_IF_ERROR(o.init(outDims));
    std::vector<double> m(static_cast<size_t>(n * n));
    for (int64_t b = 0; b < o.size(); ++b) {
      for (int64_t i = 0; i < n * n; ++i)
        m[static_cast<size_t>(i)] = static_cast<double>(in[b * n * n + i]);
      o.data()[b] = static_cast<ComputeType<T>>(determinant(m, n));
    }
    out = o.finish();
    return Status::success();
  }));
  ctx.setOutput(0, std::move(out));
  return Status::success();
}

//===----------------------------------------------------------------------===//
// LpNormalization
//===----------------------------------------------------------------------===//

Status lpNormKernel(KernelContext &ctx) {
  const Tensor *X;
  ONNXSLIM_RETURN_IF_ERROR(ctx.requireTensor(0, X));
  int64_t p = ctx.attrInt("p", 2);
  if (p != 1 && p != 2)
    return ctx.error("attribute 'p' must be 1 or 2, got " + std::to_string(p));
  if (X->rank() == 0)
    return ctx.error("input must have rank >= 1");
  int64_t axis;
  ONNXSLIM_RETURN_IF_ERROR(normalizeAxis(ctx.attrInt("axis", -1), X->rank(), axis));
  int64_t outer = 1, D = X->dims()[static_cast<size_t>(axis)], inner = 1;
  for (int64_t i = 0; i < X->rank(); ++i) {
    if (i < axis)
      outer *= X->dims()[static_cast<size_t>(i)];
    else if (i > axis)
      inner *= X->dims()[static_cast<size_t>(i)];
  }
  TensorPtr out;
  ONNXSLIM_RETURN_IF_ERROR(dispatchType<FloatTypes>(X->dtype(), [&](auto tag) -> Status {
    using T = typename decltype(tag)::type;
    using C = ComputeType<T>;
    ComputeView<T> in;
    ONNXSLIM_RETURN_IF_ERROR(viewCompute(*X, in));
    ComputeOutput<T> o;
    ONNXSLIM_RETURN_IF_ERROR(o.init(X->dims()));
    if (in.size() == 0) {
      out = o.finish();
      return Status::success();
    }
    std::vector<C> norm(static_cast<size_t>(inner));
    for (int64_t b = 0; b < outer; ++b) {
      const C *src = in.data() + b * D * inner;
      C *dst = o.data() + b * D * inner;
      std::fill(norm.begin(), norm.end(), C(0));
      for (int64_t j = 0; j < D; ++j)
        for (int64_t k = 0; k < inner; ++k) {
          C v = src[j * inner + k];
          norm[static_cast<size_t>(k)] += p == 1 ? std::fabs(v) : v * v;
        }
      for (C &v : norm)
        v = p == 2 ? std::sqrt(v) : v;
      for (int64_t j = 0; j < D; ++j)
        for (int64_t k = 0; k < inner; ++k) {
          C nv = norm[static_cast<size_t>(k)];
          dst[j * inner + k] = nv == 0 ? C(0) : src[j * inner + k] / nv;
        }
    }
    out = o.finish();
    return Status::success();
  }));
  ctx.setOutput(0, std::move(out));
  return Status::success();
}

//===----------------------------------------------------------------------===//
// Dropout
//===----------------------------------------------------------------------===//

/// A fresh seed for random kernels without a `seed` attribute: a fixed
/// sequence, so that whole runs are reproducible.
uint32_t nextSeed(const KernelContext &ctx) {
  if (const Attribute *a = ctx.attr("seed"))
    return static_cast<uint32_t>(static_cast<int64_t>(a->f));
  static std::atomic<uint32_t> counter{0x5eed};
  return counter.fetch_add(0x9e3779b9u);
}

/// A mask tensor of `dtype` filled with `keep` (or all ones when keep is empty).
Status makeMask(DataType dtype, const std::vector<int64_t> &dims, const std::vector<uint8_t> &keep,
                TensorPtr &out) {
  std::optional<TensorBuilder> b;
  ONNXSLIM_RETURN_IF_ERROR(allocOutput(dtype, dims, b));
  return dispatchType<NumericBoolTypes>(dtype, [&](auto tag) -> Status {
    using M = typename decltype(tag)::type;
    M *m = b->dataAs<M>();
    for (int64_t i = 0; i < b->numElements(); ++i)
      m[i] = convertElem<M>(keep.empty() || keep[static_cast<size_t>(i)] ? 1.0f : 0.0f);
    out = b->finish();
    return Status::success();
  });
}

template <bool kInputs> Status dropoutKernel(KernelContext &ctx) {
  const Tensor *X;
  ONNXSLIM_RETURN_IF_ERROR(ctx.requireTensor(0, X));
  if (!typeIn<FloatTypes>(X->dtype()))
    return ctx.error("unsupported element type '" + dataTypeName(X->dtype()) + "'");
  DataType maskType = ctx.opsetVersion() < 10 ? X->dtype() : DataType::Bool;
  bool training = false;
  float ratio = ctx.attrFloat("ratio", 0.5f);
  if constexpr (kInputs) {
    if (ctx.hasInput(1)) {
      const Tensor *r = ctx.tensor(1);
      if (!r)
        return ctx.error("input 'ratio' must be a tensor");
      ONNXSLIM_RETURN_IF_ERROR(readScalar(*r, ratio));
    }
    if (ctx.hasInput(2)) {
      const Tensor *t = ctx.tensor(2);
      if (!t || t->dtype() != DataType::Bool)
        return ctx.error("input 'training_mode' must be a bool tensor");
      bool v = false;
      ONNXSLIM_RETURN_IF_ERROR(readScalar(*t, v));
      training = v;
    }
  }
  if (!training || ratio == 0) {
    ctx.setOutput(0, ctx.tensorPtr(0));
    if (ctx.wantsOutput(1)) {
      TensorPtr mask;
      ONNXSLIM_RETURN_IF_ERROR(makeMask(maskType, X->dims(), {}, mask));
      ctx.setOutput(1, std::move(mask));
    }
    return Status::success();
  }
  if (!(ratio >= 0 && ratio < 1))
    return ctx.error("ratio must be in [0, 1), got " + std::to_string(ratio));
  // numpy's legacy generator (MT19937 seeded by the integer, 53-bit doubles
  // from two draws), so a seeded Dropout matches the ONNX reference exactly.
  std::mt19937 rng(nextSeed(ctx));
  std::vector<uint8_t> keep(static_cast<size_t>(X->numElements()));
  for (auto &k : keep) {
    uint32_t a = static_cast<uint32_t>(rng()) >> 5, b = static_cast<uint32_t>(rng()) >> 6;
    double u = (a * 67108864.0 + b) / 9007199254740992.0;
    k = u >= static_cast<double>(ratio);
  }
  TensorPtr out;
  ONNXSLIM_RETURN_IF_ERROR(dispatchType<FloatTypes>(X->dtype(), [&](auto tag) -> Status {
    using T = typename decltype(tag)::type;
    using C = ComputeType<T>;
    ComputeView<T> in;
    ONNXSLIM_RETURN_IF_ERROR(viewCompute(*X, in));
    ComputeOutput<T> o;
    ONNXSLIM_RETURN_IF_ERROR(o.init(X->dims()));
    C keepRatio = C(1) - static_cast<C>(ratio);
    for (int64_t i = 0; i < in.size(); ++i)
      o.data()[i] = keep[static_cast<size_t>(i)] ? in[i] / keepRatio : C(0);
    out = o.finish();
    return Status::success();
  }));
  ctx.setOutput(0, std::move(out));
  if (ctx.wantsOutput(1)) {
    TensorPtr mask;
    ONNXSLIM_RETURN_IF_ERROR(makeMask(maskType, X->dims(), keep, mask));
    ctx.setOutput(1, std::move(mask));
  }
  return Status::success();
}

} // namespace

void registerMathMiscKernels(OpRegistry &r) {
  constexpr int64_t L = kLatestOpset;
  r.add("Det", 11, L, detKernel);
  r.add("LpNormalization", 1, L, lpNormKernel);
  r.add("Dropout", 1, 11, dropoutKernel<false>);
  // From opset 12 training_mode may make Dropout random.
  r.add("Dropout", 12, L, dropoutKernel<true>, /*deterministic=*/false);
}

} // namespace onnxslim::rt
