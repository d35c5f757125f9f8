//===- runtime/kernels/Quant.cpp - Quantization kernels -------------------===//
//
// QuantizeLinear / DequantizeLinear (per-tensor, per-axis from 13, blocked
// from 21; 8- and 16-bit integer types), DynamicQuantizeLinear, and the
// integer products MatMulInteger, ConvInteger, QLinearMatMul, QLinearConv.
//
// The integer products run on the 8-bit integer GEMM (runtime/IntGemm.h,
// runtime/conv/IntConv.h): int32 accumulators, exact, the same bits on every
// micro-kernel family and thread count. Requantization follows ONNX Runtime:
// multiplier = a_scale * b_scale / y_scale in float, round half to even,
// add the zero point, saturate.
//
//===----------------------------------------------------------------------===//
#include "runtime/Gemm.h"
#include "runtime/IntGemm.h"
#include "runtime/conv/IntConv.h"
#include "runtime/Kernel.h"
#include "runtime/ThreadPool.h"
#include "runtime/kernels/Dispatch.h"
#include "runtime/kernels/NNCommon.h"

#include <algorithm>
#include <atomic>
#include <cfenv>
#include <cmath>
#include <limits>

namespace onnxslim::rt {
namespace {

using namespace nn;

using QuantTypes = TypeList<uint8_t, int8_t, uint16_t, int16_t>;

/// The value range of a quantized integer type.
Status quantRange(DataType t, double &lo, double &hi) {
  switch (t) {
  case DataType::UInt8: lo = 0, hi = 255; return Status::success();
  case DataType::Int8: lo = -128, hi = 127; return Status::success();
  case DataType::UInt16: lo = 0, hi = 65535; return Status::success();
  case DataType::Int16: lo = -32768, hi = 32767; return Status::success();
  default:
    return KernelContext::error("unsupported quantized type '" + dataTypeName(t) + "'");
  }
}

/// Round half to even, then saturate to [lo, hi].
inline double quantizeValue(double v, double lo, double hi) {
  return std::clamp(std::nearbyint(v), lo, hi);
}

/// Maps each element of a tensor of `dims` to its scale/zero-point index for
/// per-tensor (param has one element), per-axis (1-D along `axis`) or
/// blocked (same rank, `axis` divided by block_size) quantization.
struct ParamIndexer {
  enum class Kind { Tensor, Axis, Block } kind = Kind::Tensor;
  int64_t axisLen = 1, inner = 1, block = 1;
  std::vector<int64_t> dims, paramDims;

  Status init(const std::vector<int64_t> &xDims, const std::vector<int64_t> &pDims, int64_t axisAttr,
              int64_t blockSize) {
    dims = xDims;
    paramDims = pDims;
    int64_t n = product(pDims);
    if (pDims.empty() || (n == 1 && blockSize <= 0)) {
      kind = Kind::Tensor;
      return Status::success();
    }
    int64_t axis = 0;
    ONNXSLIM_RETURN_IF_ERROR(normalizeAxis(axisAttr, static_cast<int64_t>(xDims.size()), axis));
    axisLen = xDims[static_cast<size_t>(axis)];
    inner = product(xDims, static_cast<size_t>(axis) + 1);
    if (blockSize <= 0) {
      if (pDims.size() != 1 || pDims[0] != axisLen)
        return KernelContext::error("scale of shape " + shapeString(pDims) +
                                    " does not match axis " + std::to_string(axis) + " of " +
                                    shapeString(xDims));
      kind = Kind::Axis;
      return Status::success();
    }
    kind = Kind::Block;
    block = blockSize;
    std::vector<int64_t> expect = xDims;
    expect[static_cast<size_t>(axis)] = (axisLen + blockSize - 1) / blockSize;
    if (pDims != expect)
      return KernelContext::error("blocked scale has shape " + shapeString(pDims) + ", expected " +
                                  shapeString(expect));
    return Status::success();
  }

  /// The parameter index of element e.
  int64_t operator()(int64_t e) const {
    switch (kind) {
    case Kind::Tensor:
      return 0;
    case Kind::Axis:
      return (e / inner) % axisLen;
    case Kind::Block: {
      int64_t outer = e / (inner * axisLen), a = (e / inner) % axisLen, i = e % inner;
      int64_t blocks = (axisLen + block - 1) / block;
      return (outer * blocks + a / block) * inner + i;
    }
    }
    return 0;
  }
};

//===----------------------------------------------------------------------===//
// QuantizeLinear / DequantizeLinear
//===----------------------------------------------------------------------===//

Status quantizeLinearKernel(KernelContext &ctx) {
  const Tensor *x = nullptr, *scaleT = nullptr;
  ONNXSLIM_RETURN_IF_ERROR(ctx.requireTensor(0, x));
  ONNXSLIM_RETURN_IF_ERROR(ctx.requireTensor(1, scaleT));
  const Tensor *zpT = ctx.tensor(2);
  DataType outType = DataType::UInt8;
  if (zpT)
    outType = zpT->dtype();
  else if (int64_t od = ctx.attrInt("output_dtype", 0); od != 0)
    outType = static_cast<DataType>(od);
  double lo, hi;
  ONNXSLIM_RETURN_IF_ERROR(quantRange(outType, lo, hi));
  std::vector<float> xs, scales, zps;
  ONNXSLIM_RETURN_IF_ERROR(readAs(*x, xs));
  ONNXSLIM_RETURN_IF_ERROR(readAs(*scaleT, scales));
  if (zpT)
    ONNXSLIM_RETURN_IF_ERROR(readAs(*zpT, zps));
  ParamIndexer pi;
  int64_t axis = ctx.opsetVersion() >= 13 ? ctx.attrInt("axis", 1) : 1;
  ONNXSLIM_RETURN_IF_ERROR(pi.init(x->dims(), scaleT->dims(), axis, ctx.attrInt("block_size", 0)));
  if (zpT && zps.size() != scales.size())
    return KernelContext::error("zero point and scale have different sizes");
  std::optional<TensorBuilder> out;
  ONNXSLIM_RETURN_IF_ERROR(allocOutput(outType, x->dims(), out));
  return dispatchType<QuantTypes>(outType, [&](auto tag) -> Status {
    using Q = typename decltype(tag)::type;
    Q *y = out->dataAs<Q>();
    for (size_t e = 0; e < xs.size(); ++e) {
      int64_t p = pi(static_cast<int64_t>(e));
      float zp = zps.empty() ? 0.0f : zps[static_cast<size_t>(p)];
      float q = xs[e] / scales[static_cast<size_t>(p)];
      y[e] = static_cast<Q>(quantizeValue(static_cast<double>(std::nearbyint(q)) + zp, lo, hi));
    }
    ctx.setOutput(0, out->finish());
    return Status::success();
  });
}

Status dequantizeLinearKernel(KernelContext &ctx) {
  const Tensor *x = nullptr, *scaleT = nullptr;
  ONNXSLIM_RETURN_IF_ERROR(ctx.requireTensor(0, x));
  ONNXSLIM_RETURN_IF_ERROR(ctx.requireTensor(1, scaleT));
  const Tensor *zpT = ctx.tensor(2);
  if (!typeIn<TypeList<uint8_t, int8_t, uint16_t, int16_t, int32_t>>(x->dtype()))
    return KernelContext::error("unsupported input type '" + dataTypeName(x->dtype()) + "'");
  if (!typeIn<FloatTypes>(scaleT->dtype()))
    return KernelContext::error("x_scale must be a float tensor");
  std::vector<int64_t> xs, zps;
  std::vector<float> scales;
  ONNXSLIM_RETURN_IF_ERROR(readAs(*x, xs));
  ONNXSLIM_RETURN_IF_ERROR(readAs(*scaleT, scales));
  if (zpT) {
    if (zpT->dtype() != x->dtype())
      return KernelContext::error("x_zero_point must have the type of x");
    ONNXSLIM_RETURN_IF_ERROR(readAs(*zpT, zps));
    if (zps.size() != scales.size())
      return KernelContext::error("zero point and scale have different sizes");
  }
  ParamIndexer pi;
  int64_t axis = ctx.opsetVersion() >= 13 ? ctx.attrInt("axis", 1) : 1;
  ONNXSLIM_RETURN_IF_ERROR(pi.init(x->dims(), scaleT->dims(), axis, ctx.attrInt("block_size", 0)));
  return dispatchType<FloatTypes>(scaleT->dtype(), [&](auto tag) -> Status {
    using T = typename decltype(tag)::type;
    FloatOutput<T> Y;
    ONNXSLIM_RETURN_IF_ERROR(Y.init(x->dims()));
    auto *y = Y.data();
    for (size_t e = 0; e < xs.size(); ++e) {
      int64_t p = pi(static_cast<int64_t>(e));
      int64_t zp = zps.empty() ? 0 : zps[static_cast<size_t>(p)];
      y[e] = static_cast<float>(xs[e] - zp) * scales[static_cast<size_t>(p)];
    }
    ctx.setOutput(0, Y.finish());
    return Status::success();
  });
}

Status dynamicQuantizeLinearKernel(KernelContext &ctx) {
  const Tensor *x = nullptr;
  ONNXSLIM_RETURN_IF_ERROR(ctx.requireTensor(0, x));
  if (x->dtype() != DataType::Float)
    return KernelContext::error("input must be float");
  const float *xs = x->dataAs<float>();
  const int64_t n = x->numElements();
  // The range always holds 0. Min and max do not depend on the order they
  // are taken in, so the pieces may run on several threads.
  std::vector<float> lo(static_cast<size_t>(threadCount()), 0.0f), hi(lo);
  std::atomic<int> slot{0};
  parallelSpans(n, 16, [&](int64_t begin, int64_t end) {
    const size_t t = static_cast<size_t>(slot.fetch_add(1));
    extendRange(xs + begin, end - begin, lo[t], hi[t]);
  });
  const float mn = *std::min_element(lo.begin(), lo.end());
  const float mx = *std::max_element(hi.begin(), hi.end());
  float scale = (mx - mn) / 255.0f;
  float zp = scale == 0 ? 0.0f
                        : static_cast<float>(quantizeValue(0.0 - static_cast<double>(mn / scale), 0, 255));
  std::optional<TensorBuilder> y, s, z;
  ONNXSLIM_RETURN_IF_ERROR(allocOutput(DataType::UInt8, x->dims(), y));
  ONNXSLIM_RETURN_IF_ERROR(allocOutput(DataType::Float, {}, s));
  ONNXSLIM_RETURN_IF_ERROR(allocOutput(DataType::UInt8, {}, z));
  uint8_t *yp = y->dataAs<uint8_t>();
  if (scale == 0)
    std::fill(yp, yp + n, static_cast<uint8_t>(zp));
  else
    parallelSpans(n, 16, [&](int64_t begin, int64_t end) {
      quantizeToUint8(xs + begin, end - begin, scale, zp, yp + begin);
    });
  *s->dataAs<float>() = scale;
  *z->dataAs<uint8_t>() = static_cast<uint8_t>(zp);
  ctx.setOutput(0, y->finish());
  ctx.setOutput(1, s->finish());
  ctx.setOutput(2, z->finish());
  return Status::success();
}

//===----------------------------------------------------------------------===//
// Integer products
//===----------------------------------------------------------------------===//

/// Checks that an integer product's operand is 8-bit.
Status requireInt8(const Tensor &t, const char *what) {
  if (t.dtype() != DataType::UInt8 && t.dtype() != DataType::Int8)
    return KernelContext::error(std::string(what) + " must be uint8 or int8, got " +
                                dataTypeName(t.dtype()));
  return Status::success();
}

/// Reads an optional zero-point input (index) of `expected` elements (or one).
Status readZeroPoint(const KernelContext &ctx, size_t index, const char *what, DataType dataType,
                     int64_t expected, std::vector<int32_t> &out) {
  out.clear();
  const Tensor *t = ctx.tensor(index);
  if (!t)
    return Status::success();
  if (t->dtype() != dataType)
    return KernelContext::error(std::string(what) + " must have the type of its tensor");
  ONNXSLIM_RETURN_IF_ERROR(readAs(*t, out));
  if (out.size() != 1 && static_cast<int64_t>(out.size()) != expected)
    return KernelContext::error(std::string(what) + " has " + std::to_string(out.size()) +
                                " elements, expected 1 or " + std::to_string(expected));
  return Status::success();
}

/// Reads a float scale input of one or `expected` elements.
Status readScale(const KernelContext &ctx, size_t index, const char *what, int64_t expected,
                 std::vector<float> &out) {
  const Tensor *t = nullptr;
  ONNXSLIM_RETURN_IF_ERROR(ctx.requireTensor(index, t));
  if (t->dtype() != DataType::Float)
    return KernelContext::error(std::string(what) + " must be float");
  ONNXSLIM_RETURN_IF_ERROR(readAs(*t, out));
  if (out.size() != 1 && static_cast<int64_t>(out.size()) != expected)
    return KernelContext::error(std::string(what) + " has " + std::to_string(out.size()) +
                                " elements, expected 1 or " + std::to_string(expected));
  return Status::success();
}

/// Checks a batched integer matmul's operands and zero points (a_zp per row
/// of A (M) or scalar, b_zp per column of B (N) or scalar) and plans it.
Status planIntegerMatMul(const Tensor &a, const Tensor &b, const std::vector<int32_t> &aZp,
                         const std::vector<int32_t> &bZp, MatMulPlan &plan) {
  ONNXSLIM_RETURN_IF_ERROR(requireInt8(a, "A"));
  ONNXSLIM_RETURN_IF_ERROR(requireInt8(b, "B"));
  ONNXSLIM_RETURN_IF_ERROR(planMatMul(a.dims(), b.dims(), plan));
  if ((aZp.size() > 1 && static_cast<int64_t>(aZp.size()) != plan.M) ||
      (bZp.size() > 1 && static_cast<int64_t>(bZp.size()) != plan.N))
    return KernelContext::error("zero point sizes do not match the matrices");
  return Status::success();
}

/// The planned matmul (A - a_zp) x (B - b_zp) into acc, exact in int32
/// (runtime/IntGemm.h).
void integerMatMul(const Tensor &a, const Tensor &b, const std::vector<int32_t> &aZp,
                   const std::vector<int32_t> &bZp, const MatMulPlan &plan, int32_t *acc) {
  const int64_t M = plan.M, N = plan.N, K = plan.K;
  const IntOperand ao{a.dtype() == DataType::Int8, aZp.empty() ? nullptr : aZp.data(), aZp.size() > 1};
  const IntOperand bo{b.dtype() == DataType::Int8, bZp.empty() ? nullptr : bZp.data(), bZp.size() > 1};
  const uint8_t *A = a.dataAs<uint8_t>(), *B = b.dataAs<uint8_t>();
  for (int64_t t = 0; t < plan.batches(); ++t)
    intGemm(M, N, K, A + plan.aIndex[t] * M * K, K, ao, DenseRows(B + plan.bIndex[t] * K * N, N), bo,
            acc + t * M * N, N);
}

Status matMulIntegerKernel(KernelContext &ctx) {
  const Tensor *a = nullptr, *b = nullptr;
  ONNXSLIM_RETURN_IF_ERROR(ctx.requireTensor(0, a));
  ONNXSLIM_RETURN_IF_ERROR(ctx.requireTensor(1, b));
  MatMulPlan probe;
  ONNXSLIM_RETURN_IF_ERROR(planMatMul(a->dims(), b->dims(), probe));
  std::vector<int32_t> aZp, bZp;
  ONNXSLIM_RETURN_IF_ERROR(readZeroPoint(ctx, 2, "a_zero_point", a->dtype(), probe.M, aZp));
  ONNXSLIM_RETURN_IF_ERROR(readZeroPoint(ctx, 3, "b_zero_point", b->dtype(), probe.N, bZp));
  MatMulPlan plan;
  ONNXSLIM_RETURN_IF_ERROR(planIntegerMatMul(*a, *b, aZp, bZp, plan));
  std::optional<TensorBuilder> out;
  ONNXSLIM_RETURN_IF_ERROR(allocOutput(DataType::Int32, plan.outDims, out));
  integerMatMul(*a, *b, aZp, bZp, plan, out->dataAs<int32_t>());
  ctx.setOutput(0, out->finish());
  return Status::success();
}

Status qLinearMatMulKernel(KernelContext &ctx) {
  const Tensor *a = nullptr, *b = nullptr, *yZpT = nullptr;
  ONNXSLIM_RETURN_IF_ERROR(ctx.requireTensor(0, a));
  ONNXSLIM_RETURN_IF_ERROR(ctx.requireTensor(3, b));
  ONNXSLIM_RETURN_IF_ERROR(ctx.requireTensor(7, yZpT));
  MatMulPlan probe;
  ONNXSLIM_RETURN_IF_ERROR(planMatMul(a->dims(), b->dims(), probe));
  std::vector<float> aScale, bScale, yScale;
  std::vector<int32_t> aZp, bZp, yZp;
  ONNXSLIM_RETURN_IF_ERROR(readScale(ctx, 1, "a_scale", probe.M, aScale));
  ONNXSLIM_RETURN_IF_ERROR(readZeroPoint(ctx, 2, "a_zero_point", a->dtype(), probe.M, aZp));
  ONNXSLIM_RETURN_IF_ERROR(readScale(ctx, 4, "b_scale", probe.N, bScale));
  ONNXSLIM_RETURN_IF_ERROR(readZeroPoint(ctx, 5, "b_zero_point", b->dtype(), probe.N, bZp));
  ONNXSLIM_RETURN_IF_ERROR(readScale(ctx, 6, "y_scale", 1, yScale));
  ONNXSLIM_RETURN_IF_ERROR(readZeroPoint(ctx, 7, "y_zero_point", yZpT->dtype(), 1, yZp));
  double lo, hi;
  ONNXSLIM_RETURN_IF_ERROR(quantRange(yZpT->dtype(), lo, hi));
  MatMulPlan plan;
  ONNXSLIM_RETURN_IF_ERROR(planIntegerMatMul(*a, *b, aZp, bZp, plan));
  std::optional<TensorBuilder> out;
  ONNXSLIM_RETURN_IF_ERROR(allocOutput(yZpT->dtype(), plan.outDims, out));
  std::vector<int32_t> acc(static_cast<size_t>(product(plan.outDims)));
  integerMatMul(*a, *b, aZp, bZp, plan, acc.data());
  const int64_t M = plan.M, N = plan.N;
  return dispatchType<QuantTypes>(yZpT->dtype(), [&](auto tag) -> Status {
    using Q = typename decltype(tag)::type;
    Q *y = out->dataAs<Q>();
    for (size_t e = 0; e < acc.size(); ++e) {
      int64_t j = static_cast<int64_t>(e) % std::max<int64_t>(N, 1);
      int64_t i = (static_cast<int64_t>(e) / std::max<int64_t>(N, 1)) % std::max<int64_t>(M, 1);
      float as = aScale.size() == 1 ? aScale[0] : aScale[static_cast<size_t>(i)];
      float bs = bScale.size() == 1 ? bScale[0] : bScale[static_cast<size_t>(j)];
      float multiplier = as * bs / yScale[0];
      float v = static_cast<float>(acc[e]) * multiplier;
      y[e] = static_cast<Q>(quantizeValue(static_cast<double>(std::nearbyint(v)) + yZp[0], lo, hi));
    }
    ctx.setOutput(0, out->finish());
    return Status::success();
  });
}

/// Shared by ConvInteger and QLinearConv: checks the operands and plans
/// the exact int32 convolution of (x - x_zp) and (w - w_zp[m]) plus an
/// optional int32 bias (runtime/conv/IntConv.h).
struct IntegerConvPlan {
  int64_t N = 0, Cin = 0, M = 0, group = 1;
  Window win;
  std::vector<int64_t> outDims;
};

Status planIntegerConv(KernelContext &ctx, const Tensor &x, const Tensor &w,
                       const std::vector<int32_t> &xZp, const std::vector<int32_t> &wZp,
                       const std::vector<int32_t> &bias, IntegerConvPlan &plan) {
  ONNXSLIM_RETURN_IF_ERROR(requireInt8(x, "x"));
  ONNXSLIM_RETURN_IF_ERROR(requireInt8(w, "w"));
  if (x.rank() < 3 || x.rank() > 5 || w.rank() != x.rank())
    return KernelContext::error("x and w must have the same rank, 3 to 5, got " +
                                shapeString(x.dims()) + " and " + shapeString(w.dims()));
  int64_t N = x.dims()[0], Cin = x.dims()[1], M = w.dims()[0];
  int64_t group = ctx.attrInt("group", 1);
  if (group <= 0 || Cin % group != 0 || w.dims()[1] * group != Cin || M % group != 0)
    return KernelContext::error("channel mismatch: x " + shapeString(x.dims()) + ", w " +
                                shapeString(w.dims()) + ", group " + std::to_string(group));
  if (xZp.size() > 1)
    return KernelContext::error("x_zero_point must be a scalar");
  if (wZp.size() > 1 && static_cast<int64_t>(wZp.size()) != M)
    return KernelContext::error("w_zero_point must be a scalar or have one value per channel");
  if (!bias.empty() && static_cast<int64_t>(bias.size()) != M)
    return KernelContext::error("bias must have one value per output channel");
  std::vector<int64_t> kernel(w.dims().begin() + 2, w.dims().end());
  std::vector<int64_t> ks = ctx.attrInts("kernel_shape");
  if (!ks.empty() && ks != kernel)
    return KernelContext::error("kernel_shape does not match the weight");
  Window win;
  ONNXSLIM_RETURN_IF_ERROR(
      computeWindow(ctx, std::vector<int64_t>(x.dims().begin() + 2, x.dims().end()), kernel, {}, win));
  plan.outDims = {N, M};
  plan.outDims.insert(plan.outDims.end(), win.out.begin(), win.out.end());
  int64_t count = 0;
  ONNXSLIM_RETURN_IF_ERROR(checkedNumElements(plan.outDims, DataType::Int32, count));
  plan.N = N, plan.Cin = Cin, plan.M = M, plan.group = group, plan.win = std::move(win);
  return Status::success();
}

/// The planned convolution into acc.
void integerConv(const Tensor &x, const Tensor &w, const std::vector<int32_t> &xZp,
                 const std::vector<int32_t> &wZp, const std::vector<int32_t> &bias,
                 const IntegerConvPlan &plan, int32_t *acc) {
  const int64_t N = plan.N, M = plan.M;
  if (product(plan.outDims) == 0)
    return;
  const IntConvOperand xo{x.dataAs<uint8_t>(), x.dtype() == DataType::Int8,
                          xZp.empty() ? nullptr : xZp.data(), false};
  const IntConvOperand wo{w.dataAs<uint8_t>(), w.dtype() == DataType::Int8,
                          wZp.empty() ? nullptr : wZp.data(), wZp.size() > 1};
  integerConvolution(xo, wo, N, plan.Cin, M, plan.group, plan.win, acc);
  if (!bias.empty()) {
    const int64_t plane = plan.win.outSize();
    for (int64_t n = 0; n < N; ++n)
      for (int64_t m = 0; m < M; ++m) {
        int32_t *row = acc + (n * M + m) * plane;
        const uint32_t add = static_cast<uint32_t>(bias[static_cast<size_t>(m)]);
        for (int64_t e = 0; e < plane; ++e)
          row[e] = static_cast<int32_t>(static_cast<uint32_t>(row[e]) + add);
      }
  }
}

Status convIntegerKernel(KernelContext &ctx) {
  const Tensor *x = nullptr, *w = nullptr;
  ONNXSLIM_RETURN_IF_ERROR(ctx.requireTensor(0, x));
  ONNXSLIM_RETURN_IF_ERROR(ctx.requireTensor(1, w));
  std::vector<int32_t> xZp, wZp;
  ONNXSLIM_RETURN_IF_ERROR(readZeroPoint(ctx, 2, "x_zero_point", x->dtype(), 1, xZp));
  ONNXSLIM_RETURN_IF_ERROR(readZeroPoint(ctx, 3, "w_zero_point", w->dtype(),
                                         w->rank() > 0 ? w->dims()[0] : 1, wZp));
  IntegerConvPlan plan;
  ONNXSLIM_RETURN_IF_ERROR(planIntegerConv(ctx, *x, *w, xZp, wZp, {}, plan));
  std::optional<TensorBuilder> out;
  ONNXSLIM_RETURN_IF_ERROR(allocOutput(DataType::Int32, plan.outDims, out));
  integerConv(*x, *w, xZp, wZp, {}, plan, out->dataAs<int32_t>());
  ctx.setOutput(0, out->finish());
  return Status::success();
}

Status qLinearConvKernel(KernelContext &ctx) {
  const Tensor *x = nullptr, *w = nullptr, *yZpT = nullptr;
  ONNXSLIM_RETURN_IF_ERROR(ctx.requireTensor(0, x));
  ONNXSLIM_RETURN_IF_ERROR(ctx.requireTensor(3, w));
  ONNXSLIM_RETURN_IF_ERROR(ctx.requireTensor(7, yZpT));
  int64_t M = w->rank() > 0 ? w->dims()[0] : 1;
  std::vector<float> xScale, wScale, yScale;
  std::vector<int32_t> xZp, wZp, yZp, bias;
  ONNXSLIM_RETURN_IF_ERROR(readScale(ctx, 1, "x_scale", 1, xScale));
  ONNXSLIM_RETURN_IF_ERROR(readZeroPoint(ctx, 2, "x_zero_point", x->dtype(), 1, xZp));
  ONNXSLIM_RETURN_IF_ERROR(readScale(ctx, 4, "w_scale", M, wScale));
  ONNXSLIM_RETURN_IF_ERROR(readZeroPoint(ctx, 5, "w_zero_point", w->dtype(), M, wZp));
  ONNXSLIM_RETURN_IF_ERROR(readScale(ctx, 6, "y_scale", 1, yScale));
  ONNXSLIM_RETURN_IF_ERROR(readZeroPoint(ctx, 7, "y_zero_point", yZpT->dtype(), 1, yZp));
  if (const Tensor *b = ctx.tensor(8)) {
    if (b->dtype() != DataType::Int32)
      return KernelContext::error("bias must be int32");
    ONNXSLIM_RETURN_IF_ERROR(readAs(*b, bias));
  }
  double lo, hi;
  ONNXSLIM_RETURN_IF_ERROR(quantRange(yZpT->dtype(), lo, hi));
  IntegerConvPlan plan;
  ONNXSLIM_RETURN_IF_ERROR(planIntegerConv(ctx, *x, *w, xZp, wZp, bias, plan));
  std::optional<TensorBuilder> out;
  ONNXSLIM_RETURN_IF_ERROR(allocOutput(yZpT->dtype(), plan.outDims, out));
  std::vector<int32_t> acc(static_cast<size_t>(product(plan.outDims)));
  integerConv(*x, *w, xZp, wZp, bias, plan, acc.data());
  int64_t plane = product(plan.outDims, 2);
  return dispatchType<QuantTypes>(yZpT->dtype(), [&](auto tag) -> Status {
    using Q = typename decltype(tag)::type;
    Q *y = out->dataAs<Q>();
    for (size_t e = 0; e < acc.size(); ++e) {
      int64_t m = (static_cast<int64_t>(e) / std::max<int64_t>(plane, 1)) % std::max<int64_t>(M, 1);
      float ws = wScale.size() == 1 ? wScale[0] : wScale[static_cast<size_t>(m)];
      float multiplier = xScale[0] * ws / yScale[0];
      float v = static_cast<float>(acc[e]) * multiplier;
      y[e] = static_cast<Q>(quantizeValue(static_cast<double>(std::nearbyint(v)) + yZp[0], lo, hi));
    }
    ctx.setOutput(0, out->finish());
    return Status::success();
  });
}

} // namespace

void registerQuantKernels(OpRegistry &registry) {
  registry.add("QuantizeLinear", 10, kLatestOpset, quantizeLinearKernel);
  registry.add("DequantizeLinear", 10, kLatestOpset, dequantizeLinearKernel);
  registry.add("DynamicQuantizeLinear", 11, kLatestOpset, dynamicQuantizeLinearKernel);
  registry.add("MatMulInteger", 10, kLatestOpset, matMulIntegerKernel);
  registry.add("QLinearMatMul", 10, kLatestOpset, qLinearMatMulKernel);
  registry.add("ConvInteger", 10, kLatestOpset, convIntegerKernel);
  registry.add("QLinearConv", 10, kLatestOpset, qLinearConvKernel);
}

} // namespace onnxslim::rt
