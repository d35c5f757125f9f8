//===- runtime/kernels/Norm.cpp - Normalization kernels -------------------===//
//
// BatchNormalization (every version: `spatial` before 9, inference mode and
// training mode from 14 with running statistics; mixed parameter types at
// 15), InstanceNormalization, LayerNormalization (17, with the Mean and
// InvStdDev stash outputs), GroupNormalization (18 per-group and 21
// per-channel scale/bias), RMSNormalization (23: x / sqrt(mean(x^2) + eps)
// * scale over the axes from `axis` on) and LRN.
//
// Statistics are accumulated in double; the elementwise pass runs in the
// compute type (float for float16/bfloat16).
//
//===----------------------------------------------------------------------===//
#include "runtime/ElementwiseChain.h"
#include "runtime/Kernel.h"
#include "runtime/ThreadPool.h"
#include "runtime/kernels/Dispatch.h"
#include "runtime/kernels/NNCommon.h"

#include <xsimd/xsimd.hpp>

#include <cmath>

namespace onnxslim::rt {
namespace {

using namespace nn;

/// Reads a parameter tensor (any float type) as C values, checking its size.
template <typename C>
Status readParam(const KernelContext &ctx, size_t index, const char *what, int64_t expected,
                 std::vector<C> &out) {
  const Tensor *t = nullptr;
  ONNXSLIM_RETURN_IF_ERROR(ctx.requireTensor(index, t));
  if (!isFloatingPoint(t->dtype()))
    return KernelContext::error(std::string(what) + " must be a floating-point tensor");
  Status s = readAs(*t, out);
  if (!s.ok())
    return KernelContext::error(std::string(what) + ": " + s.message());
  if (static_cast<int64_t>(out.size()) != expected)
    return KernelContext::error(std::string(what) + " has shape " + shapeString(t->dims()) +
                                ", expected " + std::to_string(expected) + " elements");
  return Status::success();
}

/// A tensor of float type `dtype` with `dims` holding `values`.
template <typename C>
Status makeFloatTensor(DataType dtype, std::vector<int64_t> dims, const std::vector<C> &values,
                       TensorPtr &out) {
  return dispatchType<FloatTypes>(dtype, [&](auto tag) -> Status {
    using T = typename decltype(tag)::type;
    std::optional<TensorBuilder> b;
    ONNXSLIM_RETURN_IF_ERROR(allocOutput(dtype, std::move(dims), b));
    T *p = b->dataAs<T>();
    for (size_t i = 0; i < values.size() && static_cast<int64_t>(i) < b->numElements(); ++i)
      p[i] = convertElem<T>(values[i]);
    out = b->finish();
    return Status::success();
  });
}

//===----------------------------------------------------------------------===//
// BatchNormalization
//===----------------------------------------------------------------------===//

template <typename T> Status batchNormTyped(KernelContext &ctx) {
  using C = ComputeType<T>;
  FloatInput<T> X;
  ONNXSLIM_RETURN_IF_ERROR(requiredFloatInput(ctx, 0, "input X", X));
  if (X.rank() < 2)
    return KernelContext::error("input X must have rank >= 2, got " + shapeString(X.dims()));
  int64_t opset = ctx.opsetVersion();
  bool spatial = opset >= 9 || ctx.attrInt("spatial", 1) != 0;
  bool training = opset >= 14 && ctx.attrInt("training_mode", 0) != 0;
  double eps = ctx.attrFloat("epsilon", 1e-5f);
  double momentum = ctx.attrFloat("momentum", 0.9f);
  int64_t N = X.dims()[0];
  // Parameters are per channel (spatial) or per element of X.shape[1:].
  int64_t P = spatial ? X.dims()[1] : product(X.dims(), 1);
  int64_t inner = spatial ? product(X.dims(), 2) : 1;
  std::vector<C> scale, bias, mean, var;
  ONNXSLIM_RETURN_IF_ERROR(readParam(ctx, 1, "scale", P, scale));
  ONNXSLIM_RETURN_IF_ERROR(readParam(ctx, 2, "B", P, bias));
  ONNXSLIM_RETURN_IF_ERROR(readParam(ctx, 3, "input_mean", P, mean));
  ONNXSLIM_RETURN_IF_ERROR(readParam(ctx, 4, "input_var", P, var));
  const C *x = X.data();
  std::vector<C> useMean = mean, useVar = var;
  if (training) {
    // Batch statistics (population variance) over N and the spatial dims.
    int64_t count = N * inner;
    for (int64_t p = 0; p < P; ++p) {
      double sum = 0, sq = 0;
      for (int64_t n = 0; n < N; ++n) {
        const C *xp = x + (n * P + p) * inner;
        for (int64_t i = 0; i < inner; ++i)
          sum += xp[i];
      }
      double m = count ? sum / static_cast<double>(count) : 0;
      for (int64_t n = 0; n < N; ++n) {
        const C *xp = x + (n * P + p) * inner;
        for (int64_t i = 0; i < inner; ++i)
          sq += (xp[i] - m) * (xp[i] - m);
      }
      useMean[p] = static_cast<C>(m);
      useVar[p] = static_cast<C>(count ? sq / static_cast<double>(count) : 0);
    }
  }
  // Every element is written (each from the same element of X): a float X
  // read here for the last time takes the output in place.
  FloatOutput<T> Y;
  const Tensor *reuse = nullptr;
  if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>)
    reuse = ctx.reusableInput(0, dataTypeOf<T>(), X.dims());
  if (!reuse)
    ONNXSLIM_RETURN_IF_ERROR(Y.init(X.dims(), TensorBuilder::Fill::Uninitialized));
  C *y = reuse ? const_cast<C *>(reuse->dataAs<C>()) : Y.data();
  std::vector<C> as(static_cast<size_t>(P)), bs(static_cast<size_t>(P));
  for (int64_t p = 0; p < P; ++p) {
    as[p] = static_cast<C>(scale[p] / std::sqrt(static_cast<double>(useVar[p]) + eps));
    bs[p] = static_cast<C>(bias[p] - useMean[p] * as[p]);
  }
  // A Relu or Clip that the interpreter fused (float inference only) is
  // applied to each plane as it is written, as the Clip kernel computes it.
  const KernelContext::OutputClamp *clamp = nullptr;
  if constexpr (std::is_same_v<T, float>)
    if (!training)
      clamp = ctx.takeOutputClamp();
  // One task per (n, p) plane, y = x * a + b (a product, then a sum: the
  // same roundings in the SIMD body and the scalar tail).
  auto plane = [&](int64_t task) {
    const int64_t p = task % P;
    const C a = as[p], b = bs[p];
    const C *xp = x + task * inner;
    C *yp = y + task * inner;
    int64_t i = 0;
    if constexpr (std::is_same_v<C, float> || std::is_same_v<C, double>) {
      using B = xsimd::batch<C>;
      constexpr int64_t W = static_cast<int64_t>(B::size);
      const B va(a), vb(b);
      for (; i + W <= inner; i += W)
        (B::load_unaligned(xp + i) * va + vb).store_unaligned(yp + i);
    }
    for (; i < inner; ++i)
      yp[i] = xp[i] * a + b;
    if constexpr (std::is_same_v<T, float>)
      if (clamp)
        clampFloats(yp, inner, clamp->lo, clamp->hi);
  };
  if (N * P * inner >= kParallelMinElements && N * P > 1)
    parallelFor(N * P, plane);
  else
    for (int64_t task = 0; task < N * P; ++task)
      plane(task);
  if (reuse)
    ctx.setOutput(0, std::make_shared<Tensor>(reuse->dtype(), reuse->dims(), reuse->buffer()));
  else
    ctx.setOutput(0, Y.finish());
  // Optional outputs: running mean/var (training: updated with momentum;
  // inference: the inputs), then saved mean/var (versions before 14).
  DataType statType = ctx.tensor(3)->dtype();
  std::vector<int64_t> statDims = ctx.tensor(3)->dims();
  std::vector<C> runMean = mean, runVar = var;
  if (training)
    for (int64_t p = 0; p < P; ++p) {
      runMean[p] = static_cast<C>(mean[p] * momentum + useMean[p] * (1 - momentum));
      runVar[p] = static_cast<C>(var[p] * momentum + useVar[p] * (1 - momentum));
    }
  const std::vector<C> *stats[4] = {&runMean, &runVar, &useMean, &useVar};
  for (size_t o = 1; o < 5; ++o) {
    if (!ctx.wantsOutput(o))
      continue;
    TensorPtr t;
    ONNXSLIM_RETURN_IF_ERROR(makeFloatTensor(statType, statDims, *stats[o - 1], t));
    ctx.setOutput(o, t);
  }
  return Status::success();
}

Status batchNormKernel(KernelContext &ctx) {
  return dispatchFloatOp(
      ctx, 0, [&](auto tag) { return batchNormTyped<typename decltype(tag)::type>(ctx); });
}

//===----------------------------------------------------------------------===//
// Instance, layer and group normalization
//===----------------------------------------------------------------------===//

/// Mean and population variance of n values, accumulated in double.
template <typename C> void meanVar(const C *x, int64_t n, double &mean, double &var) {
  double sum = 0;
  for (int64_t i = 0; i < n; ++i)
    sum += x[i];
  mean = n ? sum / static_cast<double>(n) : 0;
  double sq = 0;
  for (int64_t i = 0; i < n; ++i) {
    double d = x[i] - mean;
    sq += d * d;
  }
  var = n ? sq / static_cast<double>(n) : 0;
}

/// Elements from which a float LayerNormalization (or InstanceNormalization)
/// splits its rows across the threads: a row costs a few cycles an element
/// (two sums and the normalization).
constexpr int64_t kLayerNormParallelElements = int64_t{1} << 17;

template <typename T> Status instanceNormTyped(KernelContext &ctx) {
  using C = ComputeType<T>;
  FloatInput<T> X;
  ONNXSLIM_RETURN_IF_ERROR(requiredFloatInput(ctx, 0, "input X", X));
  if (X.rank() < 3)
    return KernelContext::error("input X must have rank >= 3, got " + shapeString(X.dims()));
  int64_t N = X.dims()[0], Cn = X.dims()[1], inner = product(X.dims(), 2);
  std::vector<C> scale, bias;
  ONNXSLIM_RETURN_IF_ERROR(readParam(ctx, 1, "scale", Cn, scale));
  ONNXSLIM_RETURN_IF_ERROR(readParam(ctx, 2, "B", Cn, bias));
  double eps = ctx.attrFloat("epsilon", 1e-5f);
  FloatOutput<T> Y;
  ONNXSLIM_RETURN_IF_ERROR(Y.init(X.dims()));
  if constexpr (std::is_same_v<T, float>) {
    // Float planes: LayerNormalization's mean and variance (vectorized
    // double sums, where meanVar's are one chain of dependent additions),
    // then its normalization with the channel's scale and bias; planes
    // across the threads.
    using B = xsimd::batch<float>;
    constexpr int64_t W = static_cast<int64_t>(B::size);
    parallelForIf(N * Cn > 1 && N * Cn * inner >= kLayerNormParallelElements, N * Cn,
                  [&](int64_t plane) {
                    const float *xp = X.data() + plane * inner;
                    float *yp = Y.data() + plane * inner;
                    const size_t c = static_cast<size_t>(plane % Cn);
                    double mean, invStd;
                    meanInvStd(xp, inner, eps, mean, invStd);
                    const float m = static_cast<float>(mean), s = static_cast<float>(invStd);
                    const float sc = scale[c], b = bias[c];
                    const B vm(m), vs(s), vsc(sc), vb(b);
                    int64_t i = 0;
                    for (; i + W <= inner; i += W)
                      ((B::load_unaligned(xp + i) - vm) * vs * vsc + vb).store_unaligned(yp + i);
                    for (; i < inner; ++i)
                      yp[i] = (xp[i] - m) * s * sc + b;
                  });
    ctx.setOutput(0, Y.finish());
    return Status::success();
  }
  for (int64_t n = 0; n < N; ++n)
    for (int64_t c = 0; c < Cn; ++c) {
      const C *xp = X.data() + (n * Cn + c) * inner;
      C *yp = Y.data() + (n * Cn + c) * inner;
      double mean, var;
      meanVar(xp, inner, mean, var);
      C a = static_cast<C>(scale[c] / std::sqrt(var + eps));
      C b = static_cast<C>(bias[c] - mean * a);
      for (int64_t i = 0; i < inner; ++i)
        yp[i] = xp[i] * a + b;
    }
  ctx.setOutput(0, Y.finish());
  return Status::success();
}

/// Reads a LayerNormalization parameter that broadcasts to `normDims`,
/// expanded to one value per normalized element.
template <typename C>
Status readBroadcastParam(const Tensor &t, const char *what, const std::vector<int64_t> &normDims,
                          std::vector<C> &out) {
  std::vector<C> raw;
  Status s = readAs(t, raw);
  if (!s.ok())
    return KernelContext::error(std::string(what) + ": " + s.message());
  BroadcastPlan plan;
  s = plan.initTo({t.dims()}, normDims);
  if (!s.ok())
    return KernelContext::error(std::string(what) + ": " + s.message());
  out.assign(static_cast<size_t>(plan.outSize()), C(0));
  plan.forEachRun([&](int64_t o, const int64_t *in, int64_t len) {
    for (int64_t i = 0; i < len; ++i)
      out[static_cast<size_t>(o + i)] = raw[static_cast<size_t>(in[0] + i * plan.innerStride(0))];
  });
  return Status::success();
}

/// What LayerNormalization and RMSNormalization share: X (input 0), the
/// normalized dims from `axis` on, the rows before them, and the scale
/// (input 1, named `scaleName` in messages) broadcast over them.
template <typename T> struct LastAxesNorm {
  using C = ComputeType<T>;
  FloatInput<T> X;
  int64_t axis = 0, outer = 0, D = 0;
  std::vector<int64_t> normDims;
  std::vector<C> scale;

  Status init(KernelContext &ctx, const char *scaleName) {
    ONNXSLIM_RETURN_IF_ERROR(requiredFloatInput(ctx, 0, "input X", X));
    const Tensor *scaleT = nullptr;
    ONNXSLIM_RETURN_IF_ERROR(ctx.requireTensor(1, scaleT));
    ONNXSLIM_RETURN_IF_ERROR(normalizeAxis(ctx.attrInt("axis", -1), X.rank(), axis));
    normDims.assign(X.dims().begin() + axis, X.dims().end());
    outer = product(X.dims(), 0, static_cast<size_t>(axis));
    D = product(normDims);
    return readBroadcastParam(*scaleT, scaleName, normDims, scale);
  }
};


template <typename T> Status layerNormTyped(KernelContext &ctx) {
  using C = ComputeType<T>;
  LastAxesNorm<T> n;
  ONNXSLIM_RETURN_IF_ERROR(n.init(ctx, "Scale"));
  const FloatInput<T> &X = n.X;
  const int64_t axis = n.axis, outer = n.outer, D = n.D;
  const std::vector<C> &scale = n.scale;
  const std::vector<int64_t> &normDims = n.normDims;
  std::vector<C> bias;
  if (const Tensor *b = ctx.tensor(2))
    ONNXSLIM_RETURN_IF_ERROR(readBroadcastParam(*b, "B", normDims, bias));
  double eps = ctx.attrFloat("epsilon", 1e-5f);
  FloatOutput<T> Y;
  ONNXSLIM_RETURN_IF_ERROR(Y.init(X.dims()));
  std::vector<double> means(static_cast<size_t>(outer)), invStd(static_cast<size_t>(outer));
  if constexpr (std::is_same_v<T, float>) {
    // Float rows: vectorized sums (layerNormRow), rows across the threads.
    const float *bp = bias.empty() ? nullptr : bias.data();
    parallelForIf(outer > 1 && outer * D >= kLayerNormParallelElements, outer, [&](int64_t o) {
      layerNormRow(X.data() + o * D, Y.data() + o * D, D, scale.data(), bp, eps, means[static_cast<size_t>(o)],
                   invStd[static_cast<size_t>(o)]);
    });
  } else {
    for (int64_t o = 0; o < outer; ++o) {
      const C *xp = X.data() + o * D;
      C *yp = Y.data() + o * D;
      double mean, var;
      meanVar(xp, D, mean, var);
      double inv = 1.0 / std::sqrt(var + eps);
      means[o] = mean;
      invStd[o] = inv;
      C m = static_cast<C>(mean), s = static_cast<C>(inv);
      for (int64_t i = 0; i < D; ++i) {
        C v = (xp[i] - m) * s * scale[i];
        yp[i] = bias.empty() ? v : v + bias[i];
      }
    }
  }
  ctx.setOutput(0, Y.finish());
  std::vector<int64_t> statDims(X.dims().begin(), X.dims().begin() + axis);
  statDims.resize(X.dims().size(), 1);
  auto stash = static_cast<DataType>(ctx.attrInt("stash_type", 1));
  if (!typeIn<FloatTypes>(stash))
    stash = DataType::Float;
  if (ctx.wantsOutput(1)) {
    TensorPtr t;
    ONNXSLIM_RETURN_IF_ERROR(makeFloatTensor(stash, statDims, means, t));
    ctx.setOutput(1, t);
  }
  if (ctx.wantsOutput(2)) {
    TensorPtr t;
    ONNXSLIM_RETURN_IF_ERROR(makeFloatTensor(stash, statDims, invStd, t));
    ctx.setOutput(2, t);
  }
  return Status::success();
}

template <typename T> Status rmsNormTyped(KernelContext &ctx) {
  using C = ComputeType<T>;
  LastAxesNorm<T> n;
  ONNXSLIM_RETURN_IF_ERROR(n.init(ctx, "scale"));
  const FloatInput<T> &X = n.X;
  const int64_t outer = n.outer, D = n.D;
  const std::vector<C> &scale = n.scale;
  double eps = ctx.attrFloat("epsilon", 1e-5f);
  FloatOutput<T> Y;
  ONNXSLIM_RETURN_IF_ERROR(Y.init(X.dims()));
  for (int64_t o = 0; o < outer; ++o) {
    const C *xp = X.data() + o * D;
    C *yp = Y.data() + o * D;
    double sum = 0.0;
    for (int64_t i = 0; i < D; ++i)
      sum += static_cast<double>(xp[i]) * static_cast<double>(xp[i]);
    double mean = D > 0 ? sum / static_cast<double>(D) : 0.0;
    auto inv = static_cast<C>(1.0 / std::sqrt(mean + eps));
    for (int64_t i = 0; i < D; ++i)
      yp[i] = xp[i] * inv * scale[static_cast<size_t>(i)];
  }
  ctx.setOutput(0, Y.finish());
  return Status::success();
}

template <typename T> Status groupNormTyped(KernelContext &ctx) {
  using C = ComputeType<T>;
  FloatInput<T> X;
  ONNXSLIM_RETURN_IF_ERROR(requiredFloatInput(ctx, 0, "input X", X));
  if (X.rank() < 2)
    return KernelContext::error("input X must have rank >= 2, got " + shapeString(X.dims()));
  int64_t N = X.dims()[0], Cn = X.dims()[1], inner = product(X.dims(), 2);
  int64_t G = ctx.attrInt("num_groups", 0);
  if (G <= 0 || Cn % G != 0)
    return KernelContext::error("num_groups " + std::to_string(G) +
                                " must be positive and divide the channels " +
                                std::to_string(Cn));
  // Opset 18 has per-group scale/bias, opset 21 per-channel ones.
  int64_t P = ctx.opsetVersion() >= 21 ? Cn : G;
  std::vector<C> scale, bias;
  ONNXSLIM_RETURN_IF_ERROR(readParam(ctx, 1, "scale", P, scale));
  ONNXSLIM_RETURN_IF_ERROR(readParam(ctx, 2, "bias", P, bias));
  double eps = ctx.attrFloat("epsilon", 1e-5f);
  FloatOutput<T> Y;
  ONNXSLIM_RETURN_IF_ERROR(Y.init(X.dims()));
  int64_t perGroup = Cn / G;
  for (int64_t n = 0; n < N; ++n)
    for (int64_t g = 0; g < G; ++g) {
      const C *xp = X.data() + (n * Cn + g * perGroup) * inner;
      C *yp = Y.data() + (n * Cn + g * perGroup) * inner;
      double mean, var;
      meanVar(xp, perGroup * inner, mean, var);
      double inv = 1.0 / std::sqrt(var + eps);
      for (int64_t c = 0; c < perGroup; ++c) {
        int64_t pi = P == Cn ? g * perGroup + c : g;
        C a = static_cast<C>(scale[pi] * inv);
        C b = static_cast<C>(bias[pi] - mean * a);
        for (int64_t i = 0; i < inner; ++i)
          yp[c * inner + i] = xp[c * inner + i] * a + b;
      }
    }
  ctx.setOutput(0, Y.finish());
  return Status::success();
}

template <typename T> Status lrnTyped(KernelContext &ctx) {
  using C = ComputeType<T>;
  FloatInput<T> X;
  ONNXSLIM_RETURN_IF_ERROR(requiredFloatInput(ctx, 0, "input X", X));
  if (X.rank() < 2)
    return KernelContext::error("input X must have rank >= 2, got " + shapeString(X.dims()));
  int64_t size = ctx.attrInt("size", 0);
  if (size <= 0)
    return KernelContext::error("size must be a positive integer");
  double alpha = ctx.attrFloat("alpha", 1e-4f), beta = ctx.attrFloat("beta", 0.75f);
  double bias = ctx.attrFloat("bias", 1.0f);
  int64_t N = X.dims()[0], Cn = X.dims()[1], inner = product(X.dims(), 2);
  int64_t before = (size - 1) / 2, after = size - 1 - before;
  FloatOutput<T> Y;
  ONNXSLIM_RETURN_IF_ERROR(Y.init(X.dims()));
  std::vector<double> sq(static_cast<size_t>(inner));
  for (int64_t n = 0; n < N; ++n)
    for (int64_t c = 0; c < Cn; ++c) {
      std::fill(sq.begin(), sq.end(), 0.0);
      for (int64_t cc = std::max<int64_t>(0, c - before); cc <= std::min(Cn - 1, c + after); ++cc) {
        const C *xp = X.data() + (n * Cn + cc) * inner;
        for (int64_t i = 0; i < inner; ++i)
          sq[i] += static_cast<double>(xp[i]) * xp[i];
      }
      const C *xp = X.data() + (n * Cn + c) * inner;
      C *yp = Y.data() + (n * Cn + c) * inner;
      for (int64_t i = 0; i < inner; ++i)
        yp[i] = static_cast<C>(xp[i] / std::pow(bias + alpha / static_cast<double>(size) * sq[i], beta));
    }
  ctx.setOutput(0, Y.finish());
  return Status::success();
}

Status instanceNormKernel(KernelContext &ctx) {
  return dispatchFloatOp(
      ctx, 0, [&](auto tag) { return instanceNormTyped<typename decltype(tag)::type>(ctx); });
}
Status layerNormKernel(KernelContext &ctx) {
  return dispatchFloatOp(
      ctx, 0, [&](auto tag) { return layerNormTyped<typename decltype(tag)::type>(ctx); });
}
Status rmsNormKernel(KernelContext &ctx) {
  return dispatchFloatOp(
      ctx, 0, [&](auto tag) { return rmsNormTyped<typename decltype(tag)::type>(ctx); });
}
Status groupNormKernel(KernelContext &ctx) {
  return dispatchFloatOp(
      ctx, 0, [&](auto tag) { return groupNormTyped<typename decltype(tag)::type>(ctx); });
}
Status lrnKernel(KernelContext &ctx) {
  return dispatchFloatOp(ctx, 0,
                         [&](auto tag) { return lrnTyped<typename decltype(tag)::type>(ctx); });
}

} // namespace

void registerNormKernels(OpRegistry &registry) {
  registry.add("BatchNormalization", 1, kLatestOpset, batchNormKernel);
  registry.add("InstanceNormalization", 1, kLatestOpset, instanceNormKernel);
  registry.add("LayerNormalization", 17, kLatestOpset, layerNormKernel);
  registry.add("GroupNormalization", 18, kLatestOpset, groupNormKernel);
  registry.add("RMSNormalization", 23, kLatestOpset, rmsNormKernel);
  registry.add("LRN", 1, kLatestOpset, lrnKernel);
}

} // namespace onnxslim::rt
