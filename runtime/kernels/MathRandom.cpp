//===- runtime/kernels/MathRandom.cpp - Random number generators ----------===//
//
// RandomNormal, RandomUniform, RandomNormalLike, RandomUniformLike,
// Bernoulli and Multinomial. All are registered non-deterministic (constant
// folding never runs them). With a `seed` attribute the output is a fixed
// function of the seed (std::mt19937); without one, seeds come from a
// process-wide sequence, so a whole run is reproducible but two calls differ.
// The values cannot match other runtimes' generators bit for bit.
//
//===----------------------------------------------------------------------===//
#include "runtime/kernels/Dispatch.h"

#include <atomic>
#include <cmath>
#include <random>

namespace onnxslim::rt {
namespace {

uint32_t seedOf(const KernelContext &ctx) {
  if (const Attribute *a = ctx.attr("seed"))
    return static_cast<uint32_t>(static_cast<int64_t>(a->f));
  static std::atomic<uint32_t> counter{0x12345u};
  return counter.fetch_add(0x9e3779b9u);
}

/// Fills a float/double/float16/bfloat16 tensor of `dims` from `gen()`.
template <typename Gen>
Status fillRandom(DataType dtype, const std::vector<int64_t> &dims, Gen &&gen, TensorPtr &out) {
  return dispatchType<FloatTypes>(dtype, [&](auto tag) -> Status {
    using T = typename decltype(tag)::type;
    ComputeOutput<T> o;
    ONNXSLIM_RETURN_IF_ERROR(o.init(dims));
    for (int64_t i = 0; i < o.size(); ++i)
      o.data()[i] = static_cast<ComputeType<T>>(gen());
    out = o.finish();
    return Status::success();
  });
}

/// The output type and shape: attributes, or (the *Like ops) input 0.
template <bool kLike>
Status outputSpec(const KernelContext &ctx, DataType &dtype, std::vector<int64_t> &dims) {
  if constexpr (kLike) {
    const Tensor *X;
    ONNXSLIM_RETURN_IF_ERROR(ctx.requireTensor(0, X));
    dims = X->dims();
    dtype = static_cast<DataType>(ctx.attrInt("dtype", static_cast<int64_t>(X->dtype())));
  } else {
    if (!ctx.attr("shape"))
      return ctx.error("missing attribute 'shape'");
    dims = ctx.attrInts("shape");
    dtype = static_cast<DataType>(ctx.attrInt("dtype", static_cast<int64_t>(DataType::Float)));
  }
  return Status::success();
}

template <bool kLike> Status randomNormalKernel(KernelContext &ctx) {
  DataType dtype = DataType::Float;
  std::vector<int64_t> dims;
  ONNXSLIM_RETURN_IF_ERROR(outputSpec<kLike>(ctx, dtype, dims));
  std::mt19937 rng(seedOf(ctx));
  std::normal_distribution<double> dist(ctx.attrFloat("mean", 0.0f), ctx.attrFloat("scale", 1.0f));
  TensorPtr out;
  ONNXSLIM_RETURN_IF_ERROR(fillRandom(dtype, dims, [&] { return dist(rng); }, out));
  ctx.setOutput(0, std::move(out));
  return Status::success();
}

template <bool kLike> Status randomUniformKernel(KernelContext &ctx) {
  DataType dtype = DataType::Float;
  std::vector<int64_t> dims;
  ONNXSLIM_RETURN_IF_ERROR(outputSpec<kLike>(ctx, dtype, dims));
  double low = ctx.attrFloat("low", 0.0f), high = ctx.attrFloat("high", 1.0f);
  if (!(low <= high))
    return ctx.error("attribute 'low' must not exceed 'high'");
  std::mt19937 rng(seedOf(ctx));
  std::uniform_real_distribution<double> dist(0.0, 1.0);
  TensorPtr out;
  ONNXSLIM_RETURN_IF_ERROR(
      fillRandom(dtype, dims, [&] { return low + (high - low) * dist(rng); }, out));
  ctx.setOutput(0, std::move(out));
  return Status::success();
}

/// Bernoulli: output[i] = 1 with probability input[i].
Status bernoulliKernel(KernelContext &ctx) {
  const Tensor *X;
  ONNXSLIM_RETURN_IF_ERROR(ctx.requireTensor(0, X));
  std::vector<double> probs;
  if (!typeIn<FloatTypes>(X->dtype()))
    return ctx.error("unsupported element type '" + dataTypeName(X->dtype()) + "'");
  ONNXSLIM_RETURN_IF_ERROR(readAs(*X, probs));
  DataType dtype = static_cast<DataType>(ctx.attrInt("dtype", static_cast<int64_t>(X->dtype())));
  std::mt19937 rng(seedOf(ctx));
  std::uniform_real_distribution<double> dist(0.0, 1.0);
  std::optional<TensorBuilder> b;
  ONNXSLIM_RETURN_IF_ERROR(allocOutput(dtype, X->dims(), b));
  ONNXSLIM_RETURN_IF_ERROR(dispatchType<NumericBoolTypes>(dtype, [&](auto tag) -> Status {
    using D = typename decltype(tag)::type;
    D *o = b->dataAs<D>();
    for (size_t i = 0; i < probs.size(); ++i)
      o[i] = convertElem<D>(dist(rng) < probs[i] ? 1.0f : 0.0f);
    return Status::success();
  }));
  ctx.setOutput(0, b->finish());
  return Status::success();
}

/// Multinomial: input [batch, classes] of unnormalized log-probabilities;
/// output [batch, sample_size] class indices (int32 or int64).
Status multinomialKernel(KernelContext &ctx) {
  const Tensor *X;
  ONNXSLIM_RETURN_IF_ERROR(ctx.requireTensor(0, X));
  if (X->rank() != 2)
    return ctx.error("input must be 2-D [batch_size, class_size]");
  if (!typeIn<FloatTypes>(X->dtype()))
    return ctx.error("unsupported element type '" + dataTypeName(X->dtype()) + "'");
  int64_t samples = ctx.attrInt("sample_size", 1);
  if (samples < 0)
    return ctx.error("attribute 'sample_size' must not be negative");
  DataType dtype = static_cast<DataType>(ctx.attrInt("dtype", static_cast<int64_t>(DataType::Int32)));
  if (dtype != DataType::Int32 && dtype != DataType::Int64)
    return ctx.error("attribute 'dtype' must be int32 or int64");
  std::vector<double> logits;
  ONNXSLIM_RETURN_IF_ERROR(readAs(*X, logits));
  int64_t batch = X->dims()[0], classes = X->dims()[1];
  if (classes == 0 && batch > 0 && samples > 0)
    return ctx.error("cannot sample from zero classes");
  std::optional<TensorBuilder> b;
  ONNXSLIM_RETURN_IF_ERROR(allocOutput(dtype, {batch, samples}, b));
  std::mt19937 rng(seedOf(ctx));
  std::uniform_real_distribution<double> dist(0.0, 1.0);
  std::vector<double> cdf(static_cast<size_t>(classes));
  for (int64_t r = 0; r < batch; ++r) {
    const double *row = logits.data() + r * classes;
    double mx = -std::numeric_limits<double>::infinity();
    for (int64_t c = 0; c < classes; ++c)
      mx = std::max(mx, row[c]);
    double total = 0;
    for (int64_t c = 0; c < classes; ++c) {
      total += std::exp(row[c] - mx);
      cdf[static_cast<size_t>(c)] = total;
    }
    for (int64_t s = 0; s < samples; ++s) {
      double u = dist(rng) * total;
      int64_t k = std::upper_bound(cdf.begin(), cdf.end(), u) - cdf.begin();
      k = std::min(k, classes - 1);
      if (dtype == DataType::Int32)
        b->dataAs<int32_t>()[r * samples + s] = static_cast<int32_t>(k);
      else
        b->dataAs<int64_t>()[r * samples + s] = k;
    }
  }
  ctx.setOutput(0, b->finish());
  return Status::success();
}

} // namespace

void registerMathRandomKernels(OpRegistry &r) {
  constexpr int64_t L = kLatestOpset;
  r.add("RandomNormal", 1, L, randomNormalKernel<false>, false);
  r.add("RandomUniform", 1, L, randomUniformKernel<false>, false);
  r.add("RandomNormalLike", 1, L, randomNormalKernel<true>, false);
  r.add("RandomUniformLike", 1, L, randomUniformKernel<true>, false);
  r.add("Bernoulli", 15, L, bernoulliKernel, false);
  r.add("Multinomial", 7, L, multinomialKernel, false);
}

} // namespace onnxslim::rt
