//===- runtime/kernels/ElementwiseUnary.cpp - Unary math and activations --===//
//
// Elementwise unary ops: math functions (Abs, Neg, Sign, Reciprocal, Floor,
// Ceil, Round, Sqrt, Exp, Log, trigonometric and hyperbolic functions, Erf),
// predicates (IsNaN, IsInf, Not, BitwiseNot) and activation functions (Relu,
// LeakyRelu, Elu, Selu, Celu, Sigmoid, HardSigmoid, HardSwish, Softplus,
// Softsign, ThresholdedRelu, Gelu, Mish, Clip, Shrink).
//
// Each op is one functor callable on a scalar and on an xsimd batch, so the
// float and double paths run full batches through xsimd's vectorized math
// with a scalar tail (simdMap); Exp, Sigmoid, Tanh, Erf and Gelu on float
// run through runtime/VecMath.h (AVX2 when the CPU has it);
// float16/bfloat16 convert through float in chunks; integer types run a
// scalar loop with wrapping arithmetic.
//
//===----------------------------------------------------------------------===//
#include "runtime/kernels/Dispatch.h"

#include "runtime/Simd.h"
#include "runtime/VecMath.h"

// xsimd 8.1's trigonometric argument reduction (xsimd_rem_pio2.hpp) trips a
// false -Wmaybe-uninitialized under some optimization settings (sanitizers).
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <xsimd/xsimd.hpp>
#pragma GCC diagnostic pop

#include <cmath>

namespace onnxslim::rt {
namespace {

template <typename V> inline constexpr bool isScalarV = std::is_arithmetic_v<V>;

template <typename T> inline T sel(bool c, T a, T b) { return c ? a : b; }
template <typename T, typename A>
inline xsimd::batch<T, A> sel(const xsimd::batch_bool<T, A> &c, const xsimd::batch<T, A> &a,
                              const xsimd::batch<T, A> &b) {
  return xsimd::select(c, a, b);
}

/// A functor whose float form is a span function of runtime/VecMath.h
/// (Op::floatSpan): the fused elementwise chains call the same one.
template <typename Base, void (*Span)(const float *, float *, int64_t)> struct WithSpan : Base {
  static constexpr void (*floatSpan)(const float *, float *, int64_t) = Span;
};

/// Given a span, Execute: out[i] = op(in[i]): a float span through the
/// functor's VecMath span function when it has one, else xsimd batches of
/// the compile-time architecture.
template <typename U, typename Op> void mapSpan(const U *in, U *out, int64_t n, const Op &op) {
  if constexpr (std::is_same_v<U, float> && requires { Op::floatSpan; }) {
    parallelSpans(
        n, 8, [&](int64_t begin, int64_t end) { Op::floatSpan(in + begin, out + begin, end - begin); },
        kParallelMinTranscendentalElements);
  } else {
    simdMap<xsimd::batch<U>>(in, out, n, op);
  }
}

/// Applies a float functor (scalar + batch) to a float-typed input.
template <typename Op> Status floatUnary(KernelContext &ctx, const Op &op) {
  const Tensor *X;
  ONNXSLIM_RETURN_IF_ERROR(ctx.requireTensor(0, X));
  // A float/double input read here for the last time is overwritten in place.
  if (const Tensor *R = ctx.reusableInput(0, X->dtype(), X->dims())) {
    auto inPlace = [&](auto *p) {
      mapSpan(static_cast<const std::remove_pointer_t<decltype(p)> *>(p), p, R->numElements(), op);
      ctx.setOutput(0, std::make_shared<Tensor>(R->dtype(), R->dims(), R->buffer()));
      return Status::success();
    };
    if (R->dtype() == DataType::Float)
      return inPlace(const_cast<float *>(R->dataAs<float>()));
    if (R->dtype() == DataType::Double)
      return inPlace(const_cast<double *>(R->dataAs<double>()));
  }
  TensorPtr out;
  auto span = [&](const auto *in, auto *o, int64_t n) {
    mapSpan(in, o, n, op);
  };
  ONNXSLIM_RETURN_IF_ERROR(mapFloatTensor(*X, span, out));
  ctx.setOutput(0, std::move(out));
  return Status::success();
}

/// Applies a functor to a float-typed input (SIMD) or an integer input from
/// `Types` (scalar loop; the functor is called with the integer type).
template <typename Types, typename Op> Status numericUnary(KernelContext &ctx, const Op &op) {
  const Tensor *X;
  ONNXSLIM_RETURN_IF_ERROR(ctx.requireTensor(0, X));
  constexpr bool kHasFloat = []<typename... Ts>(TypeList<Ts...>) {
    return (isFloatLike<Ts> || ...);
  }(Types{});
  if constexpr (kHasFloat)
    if (typeIn<FloatTypes>(X->dtype()) && typeIn<Types>(X->dtype()))
      return floatUnary(ctx, op);
  TensorPtr out;
  ONNXSLIM_RETURN_IF_ERROR(dispatchType<Types>(X->dtype(), [&](auto tag) -> Status {
    using T = typename decltype(tag)::type;
    if constexpr (isIntLike<T>) {
      ElemView<T> in;
      ONNXSLIM_RETURN_IF_ERROR(viewElements(*X, in));
      std::optional<TensorBuilder> b;
      ONNXSLIM_RETURN_IF_ERROR(
          allocOutput(X->dtype(), X->dims(), b, TensorBuilder::Fill::Uninitialized));
      T *o = b->dataAs<T>();
      for (int64_t i = 0; i < in.size(); ++i)
        o[i] = op(in[i]);
      out = b->finish();
    }
    return Status::success();
  }));
  ctx.setOutput(0, std::move(out));
  return Status::success();
}

/// Float input (any float type) -> bool output through a scalar predicate.
template <typename Pred> Status floatPredicate(KernelContext &ctx, const Pred &pred) {
  const Tensor *X;
  ONNXSLIM_RETURN_IF_ERROR(ctx.requireTensor(0, X));
  TensorPtr out;
  ONNXSLIM_RETURN_IF_ERROR(dispatchType<FloatTypes>(X->dtype(), [&](auto tag) -> Status {
    using T = typename decltype(tag)::type;
    ComputeView<T> in;
    ONNXSLIM_RETURN_IF_ERROR(viewCompute(*X, in));
    std::optional<TensorBuilder> b;
    ONNXSLIM_RETURN_IF_ERROR(allocOutput(DataType::Bool, X->dims(), b));
    bool *o = b->dataAs<bool>();
    for (int64_t i = 0; i < in.size(); ++i)
      o[i] = pred(in[i]);
    out = b->finish();
    return Status::success();
  }));
  ctx.setOutput(0, std::move(out));
  return Status::success();
}

//===----------------------------------------------------------------------===//
// Math functors
//===----------------------------------------------------------------------===//

#define ONNXSLIM_XSIMD_FUNCTOR(Name, fn)                                                          \
  struct Name {                                                                                    \
    template <typename V> V operator()(const V &x) const { return xsimd::fn(x); }                  \
  };
ONNXSLIM_XSIMD_FUNCTOR(SqrtF, sqrt)
ONNXSLIM_XSIMD_FUNCTOR(ExpF, exp)
ONNXSLIM_XSIMD_FUNCTOR(LogF, log)
ONNXSLIM_XSIMD_FUNCTOR(SinF, sin)
ONNXSLIM_XSIMD_FUNCTOR(CosF, cos)
ONNXSLIM_XSIMD_FUNCTOR(TanF, tan)
ONNXSLIM_XSIMD_FUNCTOR(AsinF, asin)
ONNXSLIM_XSIMD_FUNCTOR(AcosF, acos)
ONNXSLIM_XSIMD_FUNCTOR(AtanF, atan)
ONNXSLIM_XSIMD_FUNCTOR(SinhF, sinh)
ONNXSLIM_XSIMD_FUNCTOR(CoshF, cosh)
ONNXSLIM_XSIMD_FUNCTOR(TanhF, tanh)
ONNXSLIM_XSIMD_FUNCTOR(AsinhF, asinh)
ONNXSLIM_XSIMD_FUNCTOR(AcoshF, acosh)
ONNXSLIM_XSIMD_FUNCTOR(AtanhF, atanh)
ONNXSLIM_XSIMD_FUNCTOR(ErfF, erf)
#undef ONNXSLIM_XSIMD_FUNCTOR

/// Rounding to an integer keeps the sign of x, zeros included (floor(-0) and
/// ceil(-0.5) are -0, as IEEE and ONNX Runtime have them); xsimd's SSE2
/// floor/ceil lose it, so the sign is put back.
#define ONNXSLIM_ROUNDING_FUNCTOR(Name, fn)                                                       \
  struct Name {                                                                                    \
    template <typename V> V operator()(const V &x) const {                                         \
      return xsimd::copysign(xsimd::fn(x), x);                                                     \
    }                                                                                              \
  };
ONNXSLIM_ROUNDING_FUNCTOR(FloorF, floor)
ONNXSLIM_ROUNDING_FUNCTOR(CeilF, ceil)
ONNXSLIM_ROUNDING_FUNCTOR(RoundF, nearbyint) // half to even in the default rounding mode
#undef ONNXSLIM_ROUNDING_FUNCTOR

struct ReciprocalF {
  template <typename V> V operator()(const V &x) const { return V(1) / x; }
};
struct AbsF {
  template <typename V> V operator()(const V &x) const {
    if constexpr (std::is_unsigned_v<V>)
      return x;
    else if constexpr (isIntLike<V>)
      return x < 0 ? wrapNeg(x) : x;
    else
      return xsimd::abs(x);
  }
};
struct NegF {
  template <typename V> V operator()(const V &x) const { return wrapNeg(x); }
};
struct SignF {
  template <typename V> V operator()(const V &x) const {
    if constexpr (std::is_unsigned_v<V>)
      return x > 0 ? V(1) : V(0);
    else if constexpr (isIntLike<V>)
      return x > 0 ? V(1) : x < 0 ? V(-1) : V(0);
    else // keeps NaN
      return sel(x > V(0), V(1), sel(x < V(0), V(-1), sel(x == V(0), V(0), x)));
  }
};

//===----------------------------------------------------------------------===//
// Activation functors
//===----------------------------------------------------------------------===//

/// x < 0 ? 0 : x, so NaN and -0 pass through (as ONNX Runtime).
struct ReluF {
  template <typename V> V operator()(const V &x) const { return sel(x < V(0), V(0), x); }
};
struct LeakyReluF {
  float alpha;
  template <typename V> V operator()(const V &x) const {
    return sel(x >= V(0), x, x * V(alpha));
  }
};
struct EluF {
  float alpha;
  template <typename V> V operator()(const V &x) const {
    return sel(x >= V(0), x, V(alpha) * (xsimd::exp(x) - V(1)));
  }
};
struct SeluF {
  float alpha, gamma;
  template <typename V> V operator()(const V &x) const {
    return sel(x > V(0), V(gamma) * x, V(gamma) * (V(alpha) * xsimd::exp(x) - V(alpha)));
  }
};
/// max(0, x) + min(0, neg), with NaN propagated alike by the SIMD body and
/// the scalar tail (xsimd's min/max keep a NaN operand in one position on
/// batches and in the other on scalars, so activations use sel()).
struct CeluF {
  float alpha;
  template <typename V> V operator()(const V &x) const {
    V neg = V(alpha) * (xsimd::exp(x / V(alpha)) - V(1));
    return sel(x < V(0), V(0), x) + sel(neg > V(0), V(0), neg);
  }
};
struct SigmoidF {
  template <typename V> V operator()(const V &x) const {
    return V(1) / (V(1) + xsimd::exp(-x));
  }
};
/// y clamped to [0, 1]; NaN stays NaN.
template <typename V> V clamp01(const V &y) {
  V z = sel(y > V(1), V(1), y);
  return sel(z < V(0), V(0), z);
}
struct HardSigmoidF {
  float alpha, beta;
  template <typename V> V operator()(const V &x) const { return clamp01(V(alpha) * x + V(beta)); }
};
struct HardSwishF {
  template <typename V> V operator()(const V &x) const {
    return x * clamp01(x * V(1.0 / 6.0) + V(0.5));
  }
};

#if defined(__x86_64__) && defined(__GNUC__)
/// HardSwishF on AVX-512, sixteen lanes at a time: its operations, the
/// multiply and the add each rounded (their rounding-mode forms, which the
/// compiler does not fuse into one multiply-add), so its bits.
__attribute__((target("avx512f"))) void hardSwishAvx512(const float *in, float *out, int64_t n) {
  constexpr int kNearest = _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC;
  const __m512 sixth = _mm512_set1_ps(static_cast<float>(1.0 / 6.0)), half = _mm512_set1_ps(0.5f);
  const __m512 one = _mm512_set1_ps(1.0f), zero = _mm512_setzero_ps();
  for (int64_t i = 0; i < n; i += 16) {
    const __mmask16 m =
        n - i >= 16 ? __mmask16(0xFFFF) : static_cast<__mmask16>((1u << (n - i)) - 1u);
    const __m512 x = _mm512_maskz_loadu_ps(m, in + i);
    // (The maskz forms with every lane set: GCC 12 warns on the plain ones.)
    __m512 t = _mm512_maskz_add_round_ps(
        0xFFFF, _mm512_maskz_mul_round_ps(0xFFFF, x, sixth, kNearest), half, kNearest);
    t = _mm512_mask_blend_ps(_mm512_cmp_ps_mask(t, one, _CMP_GT_OQ), t, one);
    t = _mm512_mask_blend_ps(_mm512_cmp_ps_mask(t, zero, _CMP_LT_OQ), t, zero);
    _mm512_mask_storeu_ps(out + i, m, _mm512_mul_ps(x, t));
  }
}
#endif

/// HardSwish over a float span: hardSwishAvx512 where the kernels run
/// AVX-512, else HardSwishF's batches of the build's width.
void hardSwishSpan(const float *in, float *out, int64_t n) {
#if defined(__x86_64__) && defined(__GNUC__)
  if (simd::currentIsa().load() == simd::Isa::Avx512)
    return hardSwishAvx512(in, out, n);
#endif
  using B = xsimd::batch<float>;
  constexpr int64_t W = static_cast<int64_t>(B::size);
  int64_t i = 0;
  for (; i + W <= n; i += W)
    HardSwishF{}(B::load_unaligned(in + i)).store_unaligned(out + i);
  for (; i < n; ++i)
    out[i] = HardSwishF{}(in[i]);
}
/// log(1 + exp(x)) without overflow.
struct SoftplusF {
  template <typename V> V operator()(const V &x) const {
    V t = xsimd::log1p(xsimd::exp(-xsimd::abs(x)));
    return xsimd::max(x, V(0)) + t;
  }
};
struct SoftsignF {
  template <typename V> V operator()(const V &x) const { return x / (V(1) + xsimd::abs(x)); }
};
struct ThresholdedReluF {
  float alpha;
  template <typename V> V operator()(const V &x) const { return sel(x > V(alpha), x, V(0)); }
};
struct GeluF {
  template <typename V> V operator()(const V &x) const {
    return V(0.5) * x * (V(1) + xsimd::erf(x * V(M_SQRT1_2)));
  }
};
struct GeluTanhF {
  template <typename V> V operator()(const V &x) const {
    V inner = V(0.7978845608028654) * (x + V(0.044715) * x * x * x);
    return V(0.5) * x * (V(1) + xsimd::tanh(inner));
  }
};
struct MishF {
  template <typename V> V operator()(const V &x) const {
    return x * xsimd::tanh(SoftplusF{}(x));
  }
};
/// Clip in the compute type: x < lo ? lo : x, then > hi ? hi : that, so a
/// NaN input stays NaN and a NaN bound clips nothing (as ONNX Runtime).
template <typename B> struct ClipF {
  B lo, hi;
  template <typename V> V operator()(const V &x) const {
    V y = sel(x < V(lo), V(lo), x);
    return sel(y > V(hi), V(hi), y);
  }
};
struct ShrinkF {
  float lambd, bias;
  template <typename V> V operator()(const V &x) const {
    if constexpr (isIntLike<V>) {
      double d = static_cast<double>(x);
      double r = d < -lambd ? d + bias : d > lambd ? d - bias : 0.0;
      return floatToInt<V>(r);
    } else {
      return sel(x < V(-lambd), x + V(bias), sel(x > V(lambd), x - V(bias), V(0)));
    }
  }
};

//===----------------------------------------------------------------------===//
// Kernels
//===----------------------------------------------------------------------===//

template <typename Op> Status floatKernel(KernelContext &ctx) { return floatUnary(ctx, Op{}); }
template <typename Types, typename Op> Status numericKernel(KernelContext &ctx) {
  return numericUnary<Types>(ctx, Op{});
}

Status leakyReluKernel(KernelContext &ctx) {
  return floatUnary(ctx, LeakyReluF{ctx.attrFloat("alpha", 0.01f)});
}
Status eluKernel(KernelContext &ctx) { return floatUnary(ctx, EluF{ctx.attrFloat("alpha", 1.0f)}); }
Status seluKernel(KernelContext &ctx) {
  return floatUnary(ctx, SeluF{ctx.attrFloat("alpha", 1.67326319217681884765625f),
                               ctx.attrFloat("gamma", 1.05070102214813232421875f)});
}
Status celuKernel(KernelContext &ctx) {
  float alpha = ctx.attrFloat("alpha", 1.0f);
  if (alpha == 0)
    return ctx.error("attribute 'alpha' must not be 0");
  return floatUnary(ctx, CeluF{alpha});
}
Status hardSigmoidKernel(KernelContext &ctx) {
  return floatUnary(ctx, HardSigmoidF{ctx.attrFloat("alpha", 0.2f), ctx.attrFloat("beta", 0.5f)});
}
Status thresholdedReluKernel(KernelContext &ctx) {
  return floatUnary(ctx, ThresholdedReluF{ctx.attrFloat("alpha", 1.0f)});
}
Status geluKernel(KernelContext &ctx) {
  std::string approx = ctx.attrString("approximate", "none");
  if (approx == "none")
    return floatUnary(ctx, WithSpan<GeluF, vmath::gelu>{});
  if (approx == "tanh")
    return floatUnary(ctx, GeluTanhF{});
  return ctx.error("attribute 'approximate' must be 'none' or 'tanh', got '" + approx + "'");
}
Status shrinkKernel(KernelContext &ctx) {
  return numericUnary<NumericTypes>(ctx,
                                    ShrinkF{ctx.attrFloat("lambd", 0.5f), ctx.attrFloat("bias", 0.0f)});
}

/// Clip-1/6: bounds are attributes (float types only), by default the
/// largest finite float (so +-inf become +-FLT_MAX, as the spec says).
Status clipAttrKernel(KernelContext &ctx) {
  float lo = ctx.attrFloat("min", std::numeric_limits<float>::lowest());
  float hi = ctx.attrFloat("max", std::numeric_limits<float>::max());
  return floatUnary(ctx, ClipF<float>{lo, hi});
}

/// The largest finite value of element type T, in the compute type.
template <typename T> ComputeType<T> largestFinite() {
  if constexpr (std::is_same_v<T, Half>)
    return 65504.0f;
  else if constexpr (std::is_same_v<T, BFloat16>)
    return BFloat16::fromBits(0x7f7f).toFloat();
  else
    return std::numeric_limits<T>::max();
}

/// Clip-11+: optional scalar inputs min and max of the input's type; absent
/// bounds are the type's numeric_limits lowest() and max() (the spec's
/// defaults: infinities become the largest finite values).
Status clipKernel(KernelContext &ctx) {
  const Tensor *X;
  ONNXSLIM_RETURN_IF_ERROR(ctx.requireTensor(0, X));
  return dispatchType<NumericTypes>(X->dtype(), [&](auto tag) -> Status {
    using T = typename decltype(tag)::type;
    using C = ComputeType<T>;
    using B = std::conditional_t<std::is_same_v<C, double> || isIntLike<C>, C, float>;
    B hi = static_cast<B>(largestFinite<T>());
    B lo = static_cast<B>(std::numeric_limits<C>::lowest());
    if constexpr (isFloatLike<T>)
      lo = -hi;
    for (size_t i : {size_t{1}, size_t{2}}) {
      if (!ctx.hasInput(i))
        continue;
      const Tensor *bound = ctx.tensor(i);
      if (!bound || bound->dtype() != X->dtype())
        return ctx.error("input " + std::to_string(i) + " must be a tensor of " +
                         dataTypeName(X->dtype()));
      if (bound->numElements() != 1)
        return ctx.error("input " + std::to_string(i) + " must be a scalar");
      ComputeView<T> v;
      ONNXSLIM_RETURN_IF_ERROR(viewCompute(*bound, v));
      (i == 1 ? lo : hi) = static_cast<B>(v[0]);
    }
    return numericUnary<NumericTypes>(ctx, ClipF<B>{lo, hi});
  });
}

Status isNaNKernel(KernelContext &ctx) {
  return floatPredicate(ctx, [](auto x) { return std::isnan(x); });
}
Status isInfKernel(KernelContext &ctx) {
  bool neg = ctx.attrInt("detect_negative", 1) != 0;
  bool pos = ctx.attrInt("detect_positive", 1) != 0;
  return floatPredicate(ctx, [=](auto x) { return std::isinf(x) && (x > 0 ? pos : neg); });
}

Status notKernel(KernelContext &ctx) {
  const Tensor *X;
  ONNXSLIM_RETURN_IF_ERROR(ctx.requireTensor(0, X));
  ElemView<bool> in;
  ONNXSLIM_RETURN_IF_ERROR(viewElements(*X, in));
  std::optional<TensorBuilder> b;
  ONNXSLIM_RETURN_IF_ERROR(allocOutput(DataType::Bool, X->dims(), b));
  bool *o = b->dataAs<bool>();
  for (int64_t i = 0; i < in.size(); ++i)
    o[i] = !in[i];
  ctx.setOutput(0, b->finish());
  return Status::success();
}

struct BitNotF {
  template <typename V> V operator()(const V &x) const { return static_cast<V>(~x); }
};

} // namespace

void registerElementwiseUnaryKernels(OpRegistry &r) {
  constexpr int64_t L = kLatestOpset;
  // Math.
  r.add("Abs", 1, L, numericKernel<NumericTypes, AbsF>);
  r.add("Neg", 1, L, numericKernel<SignedNumericTypes, NegF>);
  r.add("Sign", 9, L, numericKernel<NumericTypes, SignF>);
  r.add("Reciprocal", 1, L, floatKernel<ReciprocalF>);
  r.add("Floor", 1, L, floatKernel<FloorF>);
  r.add("Ceil", 1, L, floatKernel<CeilF>);
  r.add("Round", 11, L, floatKernel<RoundF>);
  r.add("Sqrt", 1, L, floatKernel<SqrtF>);
  r.add("Exp", 1, L, floatKernel<WithSpan<ExpF, vmath::exp>>);
  r.add("Log", 1, L, floatKernel<LogF>);
  r.add("Sin", 7, L, floatKernel<SinF>);
  r.add("Cos", 7, L, floatKernel<CosF>);
  r.add("Tan", 7, L, floatKernel<TanF>);
  r.add("Asin", 7, L, floatKernel<AsinF>);
  r.add("Acos", 7, L, floatKernel<AcosF>);
  r.add("Atan", 7, L, floatKernel<AtanF>);
  r.add("Sinh", 9, L, floatKernel<SinhF>);
  r.add("Cosh", 9, L, floatKernel<CoshF>);
  r.add("Tanh", 1, L, floatKernel<WithSpan<TanhF, vmath::tanh>>);
  r.add("Asinh", 9, L, floatKernel<AsinhF>);
  r.add("Acosh", 9, L, floatKernel<AcoshF>);
  r.add("Atanh", 9, L, floatKernel<AtanhF>);
  r.add("Erf", 9, L, floatKernel<WithSpan<ErfF, vmath::erf>>);
  r.add("IsNaN", 9, L, isNaNKernel);
  r.add("IsInf", 10, L, isInfKernel);
  r.add("Not", 1, L, notKernel);
  r.add("BitwiseNot", 18, L, numericKernel<IntTypes, BitNotF>);
  // Activations.
  r.add("Relu", 1, L, numericKernel<SignedNumericTypes, ReluF>);
  r.add("LeakyRelu", 1, L, leakyReluKernel);
  r.add("Elu", 1, L, eluKernel);
  r.add("Selu", 1, L, seluKernel);
  r.add("Celu", 12, L, celuKernel);
  r.add("Sigmoid", 1, L, floatKernel<WithSpan<SigmoidF, vmath::sigmoid>>);
  r.add("HardSigmoid", 1, L, hardSigmoidKernel);
  r.add("HardSwish", 14, L, floatKernel<WithSpan<HardSwishF, hardSwishSpan>>);
  r.add("Softplus", 1, L, floatKernel<SoftplusF>);
  r.add("Softsign", 1, L, floatKernel<SoftsignF>);
  r.add("ThresholdedRelu", 10, L, thresholdedReluKernel);
  r.add("Gelu", 20, L, geluKernel);
  r.add("Mish", 18, L, floatKernel<MishF>);
  r.add("Clip", 1, 10, clipAttrKernel);
  r.add("Clip", 11, L, clipKernel);
  r.add("Shrink", 9, L, shrinkKernel);
}

} // namespace onnxslim::rt
