//===- runtime/kernels/ContribFusedConv.cpp - com.microsoft.FusedConv ----===//
//
// ONNX Runtime's contrib op FusedConv, which `--target=onnxruntime` emits
// (transforms/fusion/FuseConvRelu.cpp): a Conv whose output goes through one
// activation, named by the `activation` attribute with its parameters in
// `activation_params`:
//
//   Relu                   max(x, 0)
//   LeakyRelu [alpha]      x >= 0 ? x : alpha * x
//   Clip [min, max]        min(max(x, min), max)
//   Sigmoid                1 / (1 + exp(-x))
//   HardSigmoid [a, b]     max(0, min(1, a * x + b))
//   Tanh                   tanh(x)
//
// The convolution is the default-domain Conv kernel run on this node (the
// attributes are Conv's); the activation is applied to its float output.
// The optional sum input Z (input 3) is not supported: an error, never a
// wrong value. With this kernel the model check and `onnxslim run` work on
// models written for ONNX Runtime.
//
//===----------------------------------------------------------------------===//
#include "runtime/Kernel.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

namespace onnxslim::rt {
namespace {

Status fusedConvKernel(KernelContext &ctx) {
  if (ctx.hasInput(3))
    return KernelContext::error("the sum input Z is not supported");
  const Tensor *X = nullptr;
  ONNXSLIM_RETURN_IF_ERROR(ctx.requireTensor(0, X));
  if (X->dtype() != DataType::Float)
    return KernelContext::error("FusedConv is defined for float tensors only");
  std::string activation = ctx.attrString("activation");
  std::vector<float> params;
  if (const Attribute *a = ctx.attr("activation_params"))
    params = a->floats;
  auto param = [&](size_t i, float dflt) { return i < params.size() ? params[i] : dflt; };

  const KernelDef *conv = OpRegistry::builtin().find("", "Conv", 11);
  if (!conv)
    return KernelContext::error("no Conv kernel");
  ONNXSLIM_RETURN_IF_ERROR(conv->fn(ctx));
  const RtValue &out = ctx.outputs()[0];
  if (!out.isTensor())
    return KernelContext::error("Conv produced no tensor");
  const Tensor &y = *out.tensor;

  TensorBuilder b(DataType::Float, y.dims(), TensorBuilder::Fill::Uninitialized);
  const float *in = y.dataAs<float>();
  float *o = b.dataAs<float>();
  int64_t n = b.numElements();
  auto apply = [&](auto f) {
    for (int64_t i = 0; i < n; ++i)
      o[i] = f(in[i]);
  };
  if (activation == "Relu") {
    apply([](float x) { return x < 0 ? 0.0f : x; });
  } else if (activation == "LeakyRelu") {
    float alpha = param(0, 0.01f);
    apply([alpha](float x) { return x >= 0 ? x : alpha * x; });
  } else if (activation == "Clip") {
    if (params.size() != 2)
      return KernelContext::error("Clip needs activation_params [min, max]");
    float lo = params[0], hi = params[1];
    apply([lo, hi](float x) { return std::min(std::max(x, lo), hi); });
  } else if (activation == "Sigmoid") {
    apply([](float x) { return 1.0f / (1.0f + std::exp(-x)); });
  } else if (activation == "HardSigmoid") {
    float alpha = param(0, 0.2f), beta = param(1, 0.5f);
    apply([alpha, beta](float x) { return std::max(0.0f, std::min(1.0f, alpha * x + beta)); });
  } else if (activation == "Tanh") {
    apply([](float x) { return std::tanh(x); });
  } else {
    return KernelContext::error("unsupported activation '" + activation + "'");
  }
  ctx.setOutput(0, b.finish());
  return Status::success();
}

} // namespace

void registerContribKernels(OpRegistry &registry) {
  registry.add(KernelDef{"com.microsoft", "FusedConv", 1, kLatestOpset, fusedConvKernel});
}

} // namespace onnxslim::rt
