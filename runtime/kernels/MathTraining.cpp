//===- runtime/kernels/MathTraining.cpp - Optimizer update ops ------------===//
//
// The ai.onnx.preview.training optimizers: Adagrad, Adam and Momentum
// (standard and Nesterov). Each takes a learning rate R, an iteration count
// T and n groups of tensors (X, G, then the optimizer states), applies one
// update step elementwise (in double precision) and returns the new X and
// states. The formulas are the spec's, including its bias correction and
// regularization terms.
//
//===----------------------------------------------------------------------===//
#include "runtime/kernels/Dispatch.h"

#include <cmath>

namespace onnxslim::rt {
namespace {

/// Reads R and T and checks `groups` equally sized, same-typed tensor lists.
Status readCommon(KernelContext &ctx, size_t groups, double &r, int64_t &t, size_t &n) {
  size_t in = ctx.numInputs();
  if (in < 2 || (in - 2) % groups != 0 || in == 2)
    return ctx.error("expects R, T and " + std::to_string(groups) + " equal groups of tensors");
  n = (in - 2) / groups;
  const Tensor *R, *T;
  ONNXSLIM_RETURN_IF_ERROR(ctx.requireTensor(0, R));
  ONNXSLIM_RETURN_IF_ERROR(ctx.requireTensor(1, T));
  if (!typeIn<FloatTypes>(R->dtype()) || T->dtype() != DataType::Int64)
    return ctx.error("R must be a float scalar and T an int64 scalar");
  ONNXSLIM_RETURN_IF_ERROR(readScalar(*R, r));
  ONNXSLIM_RETURN_IF_ERROR(readScalar(*T, t));
  for (size_t k = 0; k < groups * n; ++k) {
    const Tensor *a, *first;
    ONNXSLIM_RETURN_IF_ERROR(ctx.requireTensor(2 + k, a));
    ONNXSLIM_RETURN_IF_ERROR(ctx.requireTensor(2 + k % n, first));
    if (!typeIn<FloatTypes>(a->dtype()) || a->dtype() != first->dtype() ||
        a->dims() != first->dims())
      return ctx.error("input " + std::to_string(2 + k) +
                       " must be a float tensor of the same type and shape as its X");
  }
  return Status::success();
}

/// Runs `step(vals, outs)` per element over the tensors of group index i:
/// vals[g] is group g's element (as double), outs receives one value per output.
template <typename Step>
Status applyGroups(KernelContext &ctx, size_t groups, size_t n, size_t outputs, Step &&step) {
  for (size_t i = 0; i < n; ++i) {
    const Tensor *X = ctx.tensor(2 + i);
    std::vector<std::vector<double>> in(groups);
    for (size_t g = 0; g < groups; ++g)
      ONNXSLIM_RETURN_IF_ERROR(readAs(*ctx.tensor(2 + g * n + i), in[g]));
    std::vector<std::vector<double>> out(outputs, std::vector<double>(in[0].size()));
    std::vector<double> vals(groups), res(outputs);
    for (size_t e = 0; e < in[0].size(); ++e) {
      for (size_t g = 0; g < groups; ++g)
        vals[g] = in[g][e];
      step(vals, res);
      for (size_t o = 0; o < outputs; ++o)
        out[o][e] = res[o];
    }
    for (size_t o = 0; o < outputs; ++o) {
      if (!ctx.wantsOutput(o * n + i))
        continue;
      TensorPtr t;
      ONNXSLIM_RETURN_IF_ERROR(dispatchType<FloatTypes>(X->dtype(), [&](auto tag) -> Status {
        using T = typename decltype(tag)::type;
        ComputeOutput<T> b;
        ONNXSLIM_RETURN_IF_ERROR(b.init(X->dims()));
        for (size_t e = 0; e < out[o].size(); ++e)
          b.data()[e] = static_cast<ComputeType<T>>(out[o][e]);
        t = b.finish();
        return Status::success();
      }));
      ctx.setOutput(o * n + i, std::move(t));
    }
  }
  return Status::success();
}

Status adagradKernel(KernelContext &ctx) {
  double r = 0;
  int64_t t = 0;
  size_t n = 0;
  ONNXSLIM_RETURN_IF_ERROR(readCommon(ctx, 3, r, t, n));
  double decay = ctx.attrFloat("decay_factor", 0), eps = ctx.attrFloat("epsilon", 1e-6f),
         norm = ctx.attrFloat("norm_coefficient", 0);
  double rate = r / (1 + static_cast<double>(t) * decay);
  return applyGroups(ctx, 3, n, 2, [&](const std::vector<double> &v, std::vector<double> &o) {
    double x = v[0], g = v[1] + norm * v[0], h = v[2] + g * g;
    o[0] = x - rate * g / (std::sqrt(h) + eps);
    o[1] = h;
  });
}

Status adamKernel(KernelContext &ctx) {
  double r = 0;
  int64_t t = 0;
  size_t n = 0;
  ONNXSLIM_RETURN_IF_ERROR(readCommon(ctx, 4, r, t, n));
  double alpha = ctx.attrFloat("alpha", 0.9f), beta = ctx.attrFloat("beta", 0.999f),
         eps = ctx.attrFloat("epsilon", 1e-6f), norm = ctx.attrFloat("norm_coefficient", 0),
         post = ctx.attrFloat("norm_coefficient_post", 0);
  double rate = t > 0 ? r * std::sqrt(1 - std::pow(beta, static_cast<double>(t))) /
                            (1 - std::pow(alpha, static_cast<double>(t)))
                      : r;
  return applyGroups(ctx, 4, n, 3, [&](const std::vector<double> &v, std::vector<double> &o) {
    double g = norm * v[0] + v[1];
    double vNew = alpha * v[2] + (1 - alpha) * g;
    double hNew = beta * v[3] + (1 - beta) * g * g;
    double xNew = v[0] - rate * (vNew / (std::sqrt(hNew) + eps));
    o[0] = (1 - post) * xNew;
    o[1] = vNew;
    o[2] = hNew;
  });
}

Status momentumKernel(KernelContext &ctx) {
  double r = 0;
  int64_t t = 0;
  size_t n = 0;
  ONNXSLIM_RETURN_IF_ERROR(readCommon(ctx, 3, r, t, n));
  double alpha = ctx.attrFloat("alpha", 0), beta = ctx.attrFloat("beta", 0),
         norm = ctx.attrFloat("norm_coefficient", 0);
  std::string mode = ctx.attrString("mode", "standard");
  if (mode != "standard" && mode != "nesterov")
    return ctx.error("attribute 'mode' must be standard or nesterov, got '" + mode + "'");
  bool nesterov = mode == "nesterov";
  double betaAdj = t > 0 ? beta : 1;
  return applyGroups(ctx, 3, n, 2, [&](const std::vector<double> &v, std::vector<double> &o) {
    double g = norm * v[0] + v[1];
    double vNew = alpha * v[2] + betaAdj * g;
    o[0] = nesterov ? v[0] - r * (g + alpha * vNew) : v[0] - r * vNew;
    o[1] = vNew;
  });
}

} // namespace

void registerMathTrainingKernels(OpRegistry &r) {
  const std::string domain = "ai.onnx.preview.training";
  r.add(KernelDef{domain, "Adagrad", 1, kLatestOpset, adagradKernel, true});
  r.add(KernelDef{domain, "Adam", 1, kLatestOpset, adamKernel, true});
  r.add(KernelDef{domain, "Momentum", 1, kLatestOpset, momentumKernel, true});
}

} // namespace onnxslim::rt
