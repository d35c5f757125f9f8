//===- runtime/kernels/Reduce.cpp - Reductions and MeanVarianceNormalization ===//
//
// ReduceSum/Mean/Max/Min/Prod/L1/L2/LogSum/LogSumExp/SumSquare with
// keepdims and noop_with_empty_axes; axes come from an attribute before
// opset 13 (ReduceSum) or 18 (the others) and from an optional input after.
// MeanVarianceNormalization reuses the same loop.
//
// The loop: size-1 dims are dropped and neighbouring dims that are both
// reduced or both kept are merged, so the input is a sequence of contiguous
// runs (the last merged dim). A run along a reduced dim folds into one
// accumulator with an xsimd batch loop (horizontal combine at the end); a
// run along a kept dim updates a row of accumulators with vertical batch
// operations. Float types accumulate in float (float16/bfloat16 through
// float), double in double; integers wrap in their own type, except
// L2/LogSum/LogSumExp which work in double. An empty reduction gives the
// identity (0 for sums, 1 for products, -inf/+inf or the type's limits for
// Max/Min, NaN for the mean of floats).
//
//===----------------------------------------------------------------------===//
#include "runtime/kernels/Dispatch.h"

#include <xsimd/xsimd.hpp>

#include <cmath>

namespace onnxslim::rt {
namespace {

template <typename V> inline constexpr bool isScalarV = std::is_arithmetic_v<V>;

//===----------------------------------------------------------------------===//
// Shapes
//===----------------------------------------------------------------------===//

/// The merged loop nest of a reduction.
struct ReducePlan {
  std::vector<int64_t> outDims; ///< with keepdims applied
  std::vector<int64_t> sizes;   ///< merged dims (size-1 dims dropped)
  std::vector<bool> reduced;    ///< per merged dim
  int64_t inSize = 0, outSize = 0;
  int64_t count = 1; ///< input elements per output element
};

Status planReduce(const std::vector<int64_t> &dims, const std::vector<int64_t> &axes,
                  bool keepdims, ReducePlan &p) {
  int64_t rank = static_cast<int64_t>(dims.size());
  std::vector<bool> flag(dims.size(), axes.empty());
  for (int64_t a : axes) {
    int64_t n = 0;
    ONNXSLIM_RETURN_IF_ERROR(normalizeAxis(a, rank, n));
    flag[static_cast<size_t>(n)] = true;
  }
  p = ReducePlan{};
  p.inSize = 1;
  p.outSize = 1;
  for (size_t d = 0; d < dims.size(); ++d) {
    int64_t n = dims[d];
    if (n < 0)
      return Status::error("negative dimension");
    p.inSize *= n;
    if (flag[d]) {
      p.count *= n;
      if (keepdims)
        p.outDims.push_back(1);
    } else {
      p.outSize *= n;
      p.outDims.push_back(n);
    }
    if (n == 1)
      continue;
    if (!p.sizes.empty() && p.reduced.back() == flag[d]) {
      p.sizes.back() *= n;
    } else {
      p.sizes.push_back(n);
      p.reduced.push_back(flag[d]);
    }
  }
  return Status::success();
}

/// Calls f(outOffset, inOffset, len, innerReduced) for each contiguous input run.
template <typename F> void forEachReduceRun(const ReducePlan &p, F &&f) {
  if (p.inSize == 0)
    return;
  size_t m = p.sizes.size();
  if (m == 0) {
    f(int64_t{0}, int64_t{0}, int64_t{1}, true);
    return;
  }
  // Output strides over merged dims (0 for reduced ones).
  std::vector<int64_t> ostride(m, 0);
  int64_t running = 1;
  for (size_t d = m; d-- > 0;) {
    if (!p.reduced[d]) {
      ostride[d] = running;
      running *= p.sizes[d];
    }
  }
  int64_t inner = p.sizes[m - 1];
  bool innerReduced = p.reduced[m - 1];
  size_t outer = m - 1;
  std::vector<int64_t> idx(outer, 0);
  int64_t runs = p.inSize / inner, outOff = 0;
  for (int64_t r = 0; r < runs; ++r) {
    f(outOff, r * inner, inner, innerReduced);
    for (size_t d = outer; d-- > 0;) {
      if (++idx[d] < p.sizes[d]) {
        outOff += ostride[d];
        break;
      }
      outOff -= ostride[d] * (p.sizes[d] - 1);
      idx[d] = 0;
    }
  }
}

//===----------------------------------------------------------------------===//
// Reduction kinds
//===----------------------------------------------------------------------===//

enum class RK { Sum, Mean, Prod, Max, Min, L1, L2, SumSquare, LogSum, LogSumExp, CenteredSquare };

template <RK K> inline constexpr bool usesBias = K == RK::LogSumExp || K == RK::CenteredSquare;

template <RK K, typename A> struct ROp {
  static A init() {
    if constexpr (K == RK::Prod)
      return A(1);
    else if constexpr (K == RK::Max)
      return std::is_floating_point_v<A> ? -std::numeric_limits<A>::infinity()
                                         : std::numeric_limits<A>::lowest();
    else if constexpr (K == RK::Min)
      return std::is_floating_point_v<A> ? std::numeric_limits<A>::infinity()
                                         : std::numeric_limits<A>::max();
    else
      return A(0);
  }
  template <typename V> static V map(const V &x, const V &bias) {
    if constexpr (K == RK::L1) {
      if constexpr (std::is_unsigned_v<V>)
        return x;
      else if constexpr (isIntLike<V>)
        return x < 0 ? wrapNeg(x) : x;
      else
        return xsimd::abs(x);
    } else if constexpr (K == RK::L2 || K == RK::SumSquare) {
      return wrapMul(x, x);
    } else if constexpr (K == RK::LogSumExp) {
      return xsimd::exp(x - bias);
    } else if constexpr (K == RK::CenteredSquare) {
      V c = x - bias;
      return c * c;
    } else {
      return x;
    }
  }
  template <typename V> static V combine(const V &a, const V &b) {
    if constexpr (K == RK::Prod) {
      return wrapMul(a, b);
    } else if constexpr (K == RK::Max) {
      if constexpr (std::is_floating_point_v<V>)
        return (b > a || b != b) ? b : a;
      else if constexpr (isScalarV<V>)
        return b > a ? b : a;
      else
        return xsimd::select(xsimd::isnan(b), b, xsimd::max(a, b));
    } else if constexpr (K == RK::Min) {
      if constexpr (std::is_floating_point_v<V>)
        return (b < a || b != b) ? b : a;
      else if constexpr (isScalarV<V>)
        return b < a ? b : a;
      else
        return xsimd::select(xsimd::isnan(b), b, xsimd::min(a, b));
    } else {
      return wrapAdd(a, b);
    }
  }
  static A finalize(A acc, int64_t count, A bias) {
    if constexpr (K == RK::Mean || K == RK::CenteredSquare) {
      if constexpr (isIntLike<A>)
        return count ? static_cast<A>(acc / static_cast<A>(count)) : A(0);
      else
        return acc / static_cast<A>(count);
    } else if constexpr (K == RK::L2) {
      return std::sqrt(acc);
    } else if constexpr (K == RK::LogSum) {
      return std::log(acc);
    } else if constexpr (K == RK::LogSumExp) {
      return std::log(acc) + bias;
    } else {
      return acc;
    }
  }
};

/// Folds a contiguous run into one value (init-combined).
template <RK K, typename A> A foldRun(const A *x, int64_t n, A bias) {
  using Op = ROp<K, A>;
  A r = Op::init();
  int64_t i = 0;
  if constexpr (std::is_floating_point_v<A>) {
    using B = xsimd::batch<A>;
    constexpr int64_t W = static_cast<int64_t>(B::size);
    if (n >= 2 * W) {
      B acc0(Op::init()), acc1(Op::init()), vb(bias);
      for (; i + 2 * W <= n; i += 2 * W) {
        acc0 = Op::combine(acc0, Op::map(B::load_unaligned(x + i), vb));
        acc1 = Op::combine(acc1, Op::map(B::load_unaligned(x + i + W), vb));
      }
      B acc = Op::combine(acc0, acc1);
      if constexpr (K == RK::Max || K == RK::Min || K == RK::Prod) {
        alignas(64) A lanes[B::size];
        acc.store_aligned(lanes);
        for (A v : lanes)
          r = Op::combine(r, v);
      } else {
        r = xsimd::hadd(acc);
      }
    }
  }
  for (; i < n; ++i)
    r = Op::combine(r, Op::map(x[i], bias));
  return r;
}

/// acc[j] = combine(acc[j], map(x[j], bias[j])) for j < n.
template <RK K, typename A> void foldRow(A *acc, const A *x, const A *bias, int64_t n) {
  using Op = ROp<K, A>;
  int64_t j = 0;
  if constexpr (std::is_floating_point_v<A>) {
    using B = xsimd::batch<A>;
    constexpr int64_t W = static_cast<int64_t>(B::size);
    for (; j + W <= n; j += W) {
      B b = usesBias<K> ? B::load_unaligned(bias + j) : B(A(0));
      Op::combine(B::load_unaligned(acc + j), Op::map(B::load_unaligned(x + j), b))
          .store_unaligned(acc + j);
    }
  }
  for (; j < n; ++j)
    acc[j] = Op::combine(acc[j], Op::map(x[j], usesBias<K> ? bias[j] : A(0)));
}

/// Accumulates the reduction of `in` over plan p into acc (outSize values).
template <RK K, typename A>
void accumulate(const ReducePlan &p, const A *in, const A *bias, std::vector<A> &acc) {
  acc.assign(static_cast<size_t>(p.outSize), ROp<K, A>::init());
  A *a = acc.data();
  forEachReduceRun(p, [&](int64_t o, int64_t i, int64_t n, bool innerReduced) {
    if (innerReduced)
      a[o] = ROp<K, A>::combine(a[o], foldRun<K>(in + i, n, usesBias<K> ? bias[o] : A(0)));
    else
      foldRow<K>(a + o, in + i, usesBias<K> ? bias + o : nullptr, n);
  });
}

//===----------------------------------------------------------------------===//
// Kernels
//===----------------------------------------------------------------------===//

/// Reads the axes (attribute or input 1) and whether reduction is a no-op.
template <bool kAxesInput>
Status readAxes(const KernelContext &ctx, std::vector<int64_t> &axes, bool &noop) {
  noop = false;
  if constexpr (kAxesInput) {
    axes.clear();
    if (ctx.hasInput(1)) {
      const Tensor *a = ctx.tensor(1);
      if (!a || (a->dtype() != DataType::Int64 && a->dtype() != DataType::Int32))
        return ctx.error("input 'axes' must be an int64 tensor");
      ONNXSLIM_RETURN_IF_ERROR(readAs(*a, axes));
    }
    noop = axes.empty() && ctx.attrInt("noop_with_empty_axes", 0) != 0;
  } else {
    axes = ctx.attrInts("axes");
  }
  return Status::success();
}

template <RK K, typename T> Status reduceTyped(const Tensor &X, const ReducePlan &p, TensorPtr &out) {
  using C = ComputeType<T>;
  constexpr bool kDouble =
      isIntLike<C> && (K == RK::L2 || K == RK::LogSum || K == RK::LogSumExp);
  using A = std::conditional_t<kDouble, double, C>;
  ComputeView<T> in;
  ONNXSLIM_RETURN_IF_ERROR(viewCompute(X, in));
  const A *src = nullptr;
  std::vector<A> widened;
  if constexpr (std::is_same_v<A, C>) {
    src = in.data();
  } else {
    widened.assign(in.data(), in.data() + in.size());
    src = widened.data();
  }
  std::vector<A> bias, acc;
  if constexpr (K == RK::LogSumExp) {
    accumulate<RK::Max>(p, src, static_cast<const A *>(nullptr), bias);
    for (A &b : bias)
      if (!std::isfinite(b))
        b = 0;
  }
  accumulate<K>(p, src, bias.data(), acc);
  ComputeOutput<T> o;
  ONNXSLIM_RETURN_IF_ERROR(o.init(p.outDims));
  C *dst = o.data();
  for (int64_t i = 0; i < p.outSize; ++i) {
    A v = ROp<K, A>::finalize(acc[static_cast<size_t>(i)], p.count,
                              bias.empty() ? A(0) : bias[static_cast<size_t>(i)]);
    if constexpr (kDouble)
      dst[i] = floatToInt<C>(v);
    else
      dst[i] = v;
  }
  out = o.finish();
  return Status::success();
}

template <RK K, bool kAxesInput> Status reduceKernel(KernelContext &ctx) {
  const Tensor *X;
  ONNXSLIM_RETURN_IF_ERROR(ctx.requireTensor(0, X));
  std::vector<int64_t> axes;
  bool noop = false;
  ONNXSLIM_RETURN_IF_ERROR(readAxes<kAxesInput>(ctx, axes, noop));
  if (noop) {
    if (!typeIn<NumericBoolTypes>(X->dtype()))
      return ctx.error("unsupported element type '" + dataTypeName(X->dtype()) + "'");
    ctx.setOutput(0, ctx.tensorPtr(0));
    return Status::success();
  }
  ReducePlan p;
  ONNXSLIM_RETURN_IF_ERROR(planReduce(X->dims(), axes, ctx.attrInt("keepdims", 1) != 0, p));
  TensorPtr out;
  if (X->dtype() == DataType::Bool && (K == RK::Max || K == RK::Min)) {
    // ReduceMax/Min-20 on bool: any / all.
    ElemView<bool> in;
    ONNXSLIM_RETURN_IF_ERROR(viewElements(*X, in));
    std::vector<uint8_t> bytes(in.begin(), in.end());
    std::vector<uint8_t> acc;
    accumulate<K>(p, bytes.data(), static_cast<const uint8_t *>(nullptr), acc);
    std::optional<TensorBuilder> b;
    ONNXSLIM_RETURN_IF_ERROR(allocOutput(DataType::Bool, p.outDims, b));
    for (int64_t i = 0; i < p.outSize; ++i)
      b->dataAs<bool>()[i] = acc[static_cast<size_t>(i)] != 0;
    ctx.setOutput(0, b->finish());
    return Status::success();
  }
  ONNXSLIM_RETURN_IF_ERROR(dispatchType<NumericTypes>(X->dtype(), [&](auto tag) -> Status {
    return reduceTyped<K, typename decltype(tag)::type>(*X, p, out);
  }));
  ctx.setOutput(0, std::move(out));
  return Status::success();
}

/// MeanVarianceNormalization: (x - mean) / (sqrt(var) + 1e-9) over `axes`
/// (default [0, 2, 3]); the variance is the mean of squared deviations.
Status mvnKernel(KernelContext &ctx) {
  const Tensor *X;
  ONNXSLIM_RETURN_IF_ERROR(ctx.requireTensor(0, X));
  std::vector<int64_t> axes = ctx.attrInts("axes", {0, 2, 3});
  if (axes.empty())
    return ctx.error("attribute 'axes' must not be empty");
  ReducePlan p;
  ONNXSLIM_RETURN_IF_ERROR(planReduce(X->dims(), axes, true, p));
  TensorPtr out;
  ONNXSLIM_RETURN_IF_ERROR(dispatchType<FloatTypes>(X->dtype(), [&](auto tag) -> Status {
    using T = typename decltype(tag)::type;
    using A = ComputeType<T>;
    ComputeView<T> in;
    ONNXSLIM_RETURN_IF_ERROR(viewCompute(*X, in));
    std::vector<A> mean, var;
    accumulate<RK::Mean>(p, in.data(), static_cast<const A *>(nullptr), mean);
    for (A &m : mean)
      m = ROp<RK::Mean, A>::finalize(m, p.count, 0);
    accumulate<RK::CenteredSquare>(p, in.data(), mean.data(), var);
    for (A &v : var)
      v = A(1) / (std::sqrt(v / static_cast<A>(p.count)) + A(1e-9));
    ComputeOutput<T> o;
    ONNXSLIM_RETURN_IF_ERROR(o.init(X->dims()));
    A *dst = o.data();
    const A *src = in.data();
    forEachReduceRun(p, [&](int64_t oo, int64_t i, int64_t n, bool innerReduced) {
      for (int64_t j = 0; j < n; ++j) {
        int64_t k = innerReduced ? oo : oo + j;
        dst[i + j] = (src[i + j] - mean[static_cast<size_t>(k)]) * var[static_cast<size_t>(k)];
      }
    });
    out = o.finish();
    return Status::success();
  }));
  ctx.setOutput(0, std::move(out));
  return Status::success();
}

} // namespace

void registerReduceKernels(OpRegistry &r) {
  constexpr int64_t L = kLatestOpset;
  r.add("ReduceSum", 1, 12, reduceKernel<RK::Sum, false>);
  r.add("ReduceSum", 13, L, reduceKernel<RK::Sum, true>);
#define ONNXSLIM_REDUCE(Name, Kind)                                                                \
  r.add(Name, 1, 17, reduceKernel<Kind, false>);                                                   \
  r.add(Name, 18, L, reduceKernel<Kind, true>);
  ONNXSLIM_REDUCE("ReduceMean", RK::Mean)
  ONNXSLIM_REDUCE("ReduceMax", RK::Max)
  ONNXSLIM_REDUCE("ReduceMin", RK::Min)
  ONNXSLIM_REDUCE("ReduceProd", RK::Prod)
  ONNXSLIM_REDUCE("ReduceL1", RK::L1)
  ONNXSLIM_REDUCE("ReduceL2", RK::L2)
  ONNXSLIM_REDUCE("ReduceSumSquare", RK::SumSquare)
  ONNXSLIM_REDUCE("ReduceLogSum", RK::LogSum)
  ONNXSLIM_REDUCE("ReduceLogSumExp", RK::LogSumExp)
#undef ONNXSLIM_REDUCE
  r.add("MeanVarianceNormalization", 1, L, mvnKernel);
}

} // namespace onnxslim::rt
