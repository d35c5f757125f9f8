//===- runtime/kernels/MathLoss.cpp - NLL and softmax cross-entropy losses -===//
//
// NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss. The input is
// [N, C] or [N, C, d1, ..., dk], viewed as [N, C, D]; the target is [N, d1,
// ..., dk] of int32/int64 class indices, an optional weight is [C].
//
//   loss[n, d] = -input[n, target[n, d], d] * weight[target[n, d]]
//
// with loss 0 (and weight 0) where target == ignore_index. `reduction` is
// "none" (shape of the target), "sum", or "mean" (sum divided by the sum of
// the applied weights, or by the count of non-ignored elements without
// weights). SoftmaxCrossEntropyLoss applies LogSoftmax along C first and can
// also output that log-probability tensor. Sums accumulate in double.
//
//===----------------------------------------------------------------------===//
#include "runtime/kernels/Dispatch.h"

#include <cmath>

namespace onnxslim::rt {
namespace {

struct LossShape {
  int64_t N = 0, C = 0, D = 1;
  std::vector<int64_t> targetDims;
};

Status lossShape(const Tensor &input, const Tensor &target, LossShape &s) {
  const auto &d = input.dims();
  if (d.size() < 2)
    return Status::error("input must have shape [N, C, ...], got " + shapeString(d));
  s.N = d[0];
  s.C = d[1];
  s.D = 1;
  s.targetDims = {d[0]};
  for (size_t i = 2; i < d.size(); ++i) {
    s.D *= d[i];
    s.targetDims.push_back(d[i]);
  }
  if (target.dims() != s.targetDims)
    return Status::error("target shape " + shapeString(target.dims()) + " does not match input " +
                         shapeString(d));
  if (target.dtype() != DataType::Int64 && target.dtype() != DataType::Int32)
    return Status::error("target must be int32 or int64");
  return Status::success();
}

/// NLL over log-probabilities `logp` ([N, C, D] in compute type C) into a
/// tensor of element type T.
template <typename T>
Status nllLoss(const KernelContext &ctx, const ComputeType<T> *logp, const LossShape &s,
               const Tensor &target, const Tensor *weight, TensorPtr &out) {
  using C = ComputeType<T>;
  std::vector<int64_t> tgt;
  ONNXSLIM_RETURN_IF_ERROR(readAs(target, tgt));
  std::vector<double> w;
  if (weight) {
    if (weight->dtype() != dataTypeOf<T>() || weight->dims() != std::vector<int64_t>{s.C})
      return Status::error("weight must be a [C] tensor of the input's type");
    ONNXSLIM_RETURN_IF_ERROR(readAs(*weight, w));
  }
  const Attribute *ignoreAttr = ctx.attr("ignore_index");
  int64_t ignore = ctx.attrInt("ignore_index", 0);
  std::string reduction = ctx.attrString("reduction", "mean");
  if (reduction != "none" && reduction != "sum" && reduction != "mean")
    return Status::error("attribute 'reduction' must be none, sum or mean, got '" + reduction + "'");
  std::vector<double> loss(static_cast<size_t>(s.N * s.D));
  double weightSum = 0;
  for (int64_t n = 0; n < s.N; ++n) {
    for (int64_t d = 0; d < s.D; ++d) {
      size_t i = static_cast<size_t>(n * s.D + d);
      int64_t t = tgt[i];
      if (ignoreAttr && t == ignore) {
        loss[i] = 0;
        continue;
      }
      if (t < 0 || t >= s.C)
        return Status::error("target " + std::to_string(t) + " is out of range [0, " +
                             std::to_string(s.C) + ")");
      double wt = w.empty() ? 1.0 : w[static_cast<size_t>(t)];
      loss[i] = -static_cast<double>(logp[(n * s.C + t) * s.D + d]) * wt;
      weightSum += wt;
    }
  }
  ComputeOutput<T> o;
  if (reduction == "none") {
    ONNXSLIM_RETURN_IF_ERROR(o.init(s.targetDims));
    for (size_t i = 0; i < loss.size(); ++i)
      o.data()[i] = static_cast<C>(loss[i]);
  } else {
    ONNXSLIM_RETURN_IF_ERROR(o.init({}));
    double sum = 0;
    for (double v : loss)
      sum += v;
    o.data()[0] = static_cast<C>(reduction == "sum" ? sum : sum / weightSum);
  }
  out = o.finish();
  return Status::success();
}

Status nllKernel(KernelContext &ctx) {
  const Tensor *X, *T;
  ONNXSLIM_RETURN_IF_ERROR(ctx.requireTensor(0, X));
  ONNXSLIM_RETURN_IF_ERROR(ctx.requireTensor(1, T));
  LossShape s;
  ONNXSLIM_RETURN_IF_ERROR(lossShape(*X, *T, s));
  TensorPtr out;
  ONNXSLIM_RETURN_IF_ERROR(dispatchType<FloatTypes>(X->dtype(), [&](auto tag) -> Status {
    using E = typename decltype(tag)::type;
    ComputeView<E> in;
    ONNXSLIM_RETURN_IF_ERROR(viewCompute(*X, in));
    return nllLoss<E>(ctx, in.data(), s, *T, ctx.tensor(2), out);
  }));
  ctx.setOutput(0, std::move(out));
  return Status::success();
}

Status sceKernel(KernelContext &ctx) {
  const Tensor *X, *T;
  ONNXSLIM_RETURN_IF_ERROR(ctx.requireTensor(0, X));
  ONNXSLIM_RETURN_IF_ERROR(ctx.requireTensor(1, T));
  LossShape s;
  ONNXSLIM_RETURN_IF_ERROR(lossShape(*X, *T, s));
  TensorPtr out, logProb;
  ONNXSLIM_RETURN_IF_ERROR(dispatchType<FloatTypes>(X->dtype(), [&](auto tag) -> Status {
    using E = typename decltype(tag)::type;
    using C = ComputeType<E>;
    ComputeView<E> in;
    ONNXSLIM_RETURN_IF_ERROR(viewCompute(*X, in));
    ComputeOutput<E> lp;
    ONNXSLIM_RETURN_IF_ERROR(lp.init(X->dims()));
    C *l = lp.data();
    const C *x = in.data();
    for (int64_t n = 0; n < s.N; ++n) {
      for (int64_t d = 0; d < s.D; ++d) {
        auto at = [&](int64_t c) { return (n * s.C + c) * s.D + d; };
        if (s.C == 0)
          continue;
        C mx = x[at(0)];
        for (int64_t c = 1; c < s.C; ++c)
          mx = std::max(mx, x[at(c)]);
        double sum = 0;
        for (int64_t c = 0; c < s.C; ++c)
          sum += std::exp(static_cast<double>(x[at(c)] - mx));
        C lse = mx + static_cast<C>(std::log(sum));
        for (int64_t c = 0; c < s.C; ++c)
          l[at(c)] = x[at(c)] - lse;
      }
    }
    ONNXSLIM_RETURN_IF_ERROR(nllLoss<E>(ctx, l, s, *T, ctx.tensor(2), out));
    if (ctx.wantsOutput(1))
      logProb = lp.finish();
    return Status::success();
  }));
  ctx.setOutput(0, std::move(out));
  if (logProb)
    ctx.setOutput(1, std::move(logProb));
  return Status::success();
}

} // namespace

void registerMathLossKernels(OpRegistry &r) {
  r.add("NegativeLogLikelihoodLoss", 12, kLatestOpset, nllKernel);
  r.add("SoftmaxCrossEntropyLoss", 12, kLatestOpset, sceKernel);
}

} // namespace onnxslim::rt
