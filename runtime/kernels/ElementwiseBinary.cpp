//===- runtime/kernels/ElementwiseBinary.cpp - Broadcasting binary ops ----===//
//
// Binary elementwise ops with numpy broadcasting: arithmetic (Add, Sub, Mul,
// Div, Pow, Mod), Max/Min/Sum/Mean (variadic), bitwise and logical ops,
// comparisons and PRelu. Opset < 7 versions use the legacy `broadcast` /
// `axis` attributes.
//
// Every op runs through one loop driver: a BroadcastPlan splits the output
// into contiguous runs in which each input is either contiguous or a scalar
// (same shape, scalar operand and per-channel/per-row operands all become a
// few long runs), and each run is an xsimd batch loop with a scalar tail for
// float and double. float16/bfloat16 compute in float and round back.
// Integer arithmetic wraps (no undefined behaviour); integer division by zero
// is an error.
//
//===----------------------------------------------------------------------===//
#include "runtime/kernels/Dispatch.h"

#include <xsimd/xsimd.hpp>

#include <cmath>

namespace onnxslim::rt {
namespace {

template <typename V> inline constexpr bool isScalarV = std::is_arithmetic_v<V>;

/// select() for both scalars and batches.
template <typename T> inline T sel(bool c, T a, T b) { return c ? a : b; }
template <typename T, typename A>
inline xsimd::batch<T, A> sel(const xsimd::batch_bool<T, A> &c, const xsimd::batch<T, A> &a,
                              const xsimd::batch<T, A> &b) {
  return xsimd::select(c, a, b);
}

//===----------------------------------------------------------------------===//
// Loop driver
//===----------------------------------------------------------------------===//

/// One run: out[i] = op(a[i*sa], b[i*sb]) with sa, sb in {0, 1}.
template <typename CA, typename CB, typename CO, typename Op>
void binarySpan(const CA *a, int64_t sa, const CB *b, int64_t sb, CO *out, int64_t n,
                const Op &op) {
  if constexpr (Op::kSimd && std::is_same_v<CA, CB> && std::is_same_v<CA, CO> &&
                std::is_floating_point_v<CA>) {
    using B = xsimd::batch<CA>;
    constexpr int64_t W = static_cast<int64_t>(B::size);
    int64_t i = 0;
    if (sa && sb) {
      for (; i + W <= n; i += W)
        op(B::load_unaligned(a + i), B::load_unaligned(b + i)).store_unaligned(out + i);
      for (; i < n; ++i)
        out[i] = op(a[i], b[i]);
    } else if (sa) {
      CB s = *b;
      B vs(s);
      for (; i + W <= n; i += W)
        op(B::load_unaligned(a + i), vs).store_unaligned(out + i);
      for (; i < n; ++i)
        out[i] = op(a[i], s);
    } else if (sb) {
      CA s = *a;
      B vs(s);
      for (; i + W <= n; i += W)
        op(vs, B::load_unaligned(b + i)).store_unaligned(out + i);
      for (; i < n; ++i)
        out[i] = op(s, b[i]);
    } else {
      CO v = op(*a, *b);
      std::fill(out, out + n, v);
    }
  } else {
    if (sa && sb) {
      for (int64_t i = 0; i < n; ++i)
        out[i] = op(a[i], b[i]);
    } else if (sa) {
      const CB s = *b;
      for (int64_t i = 0; i < n; ++i)
        out[i] = op(a[i], s);
    } else if (sb) {
      const CA s = *a;
      for (int64_t i = 0; i < n; ++i)
        out[i] = op(s, b[i]);
    } else {
      CO v = op(*a, *b);
      for (int64_t i = 0; i < n; ++i)
        out[i] = v;
    }
  }
}

/// Runs `op` over a broadcast plan of two inputs.
template <typename CA, typename CB, typename CO, typename Op>
void runPlan(const BroadcastPlan &plan, const CA *a, const CB *b, CO *out, const Op &op) {
  int64_t sa = plan.innerStride(0), sb = plan.innerStride(1);
  plan.forEachRunParallel([&](int64_t o, const int64_t *off, int64_t n) {
    binarySpan(a + off[0], sa, b + off[1], sb, out + o, n, op);
  });
}

/// out = op(A, B) broadcast, A of element type TA, B of TB, out of TO.
template <typename TA, typename TB, typename TO, typename Op>
Status runBinary(const Tensor &A, const Tensor &B, const std::vector<int64_t> &aDims,
                 const std::vector<int64_t> &bDims, const Op &op, TensorPtr &out) {
  BroadcastPlan plan;
  ONNXSLIM_RETURN_IF_ERROR(plan.init({aDims, bDims}));
  ComputeView<TA> va;
  ONNXSLIM_RETURN_IF_ERROR(viewCompute(A, va));
  ComputeView<TB> vb;
  ONNXSLIM_RETURN_IF_ERROR(viewCompute(B, vb));
  ComputeOutput<TO> o;
  ONNXSLIM_RETURN_IF_ERROR(o.init(plan.outDims()));
  runPlan(plan, va.data(), vb.data(), o.data(), op);
  out = o.finish();
  return Status::success();
}

/// The output dims of A op B when no broadcast walk is needed: A and B of
/// one shape, or one of them a single element of no higher rank than the
/// other (the output then has the other's dims); null otherwise.
const std::vector<int64_t> *flatDims(const Tensor &A, const Tensor &B) {
  if (A.dims() == B.dims())
    return &A.dims();
  if (B.rank() <= A.rank() && B.numElements() == 1)
    return &A.dims();
  if (A.rank() <= B.rank() && A.numElements() == 1)
    return &B.dims();
  return nullptr;
}

/// out = op(A, B) for inputs flatDims takes, as one run over the n outputs
/// (each input read at unit stride, or stride 0 when it is the single
/// element): the plan's single run, cut across the threads the same way,
/// without building the plan (its vectors cost more than a small node's
/// arithmetic). Writes over an input this node reads for the last time,
/// when one has the output's shape (reusesInput).
template <typename TA, typename TB, typename TO, typename Op>
Status runFlat(KernelContext &ctx, const Tensor &A, const Tensor &B,
               const std::vector<int64_t> &dims, const Op &op, bool mayReuse, TensorPtr &out) {
  ComputeView<TA> va;
  ONNXSLIM_RETURN_IF_ERROR(viewCompute(A, va));
  ComputeView<TB> vb;
  ONNXSLIM_RETURN_IF_ERROR(viewCompute(B, vb));
  int64_t n = 1;
  for (int64_t d : dims)
    n *= d;
  const int64_t sa = A.numElements() == n ? 1 : 0, sb = B.numElements() == n ? 1 : 0;
  auto run = [&](ComputeType<TO> *o) {
    parallelSpans(n, 16, [&](int64_t begin, int64_t end) {
      binarySpan(va.data() + begin * sa, sa, vb.data() + begin * sb, sb, o + begin, end - begin,
                 op);
    });
  };
  if (mayReuse)
    for (size_t i : {size_t{0}, size_t{1}})
      if (const Tensor *R = ctx.reusableInput(i, A.dtype(), dims)) {
        run(const_cast<ComputeType<TO> *>(R->dataAs<ComputeType<TO>>()));
        out = std::make_shared<Tensor>(R->dtype(), R->dims(), R->buffer());
        return Status::success();
      }
  ComputeOutput<TO> o;
  ONNXSLIM_RETURN_IF_ERROR(o.init(dims));
  run(o.data());
  out = o.finish();
  return Status::success();
}

/// out = op(A, B) written over the bytes of an input of the output's shape
/// that this node reads for the last time (KernelContext::reusableInput):
/// each output element is computed from the same position of that input
/// before it is stored. False (nothing done) when no input qualifies.
template <typename T, typename Op>
bool reusesInput(KernelContext &ctx, const Tensor &A, const Tensor &B,
                 const std::vector<int64_t> &bDims, const Op &op, TensorPtr &out) {
  BroadcastPlan plan;
  if (!plan.init({A.dims(), bDims}).ok())
    return false;
  for (size_t i : {size_t{0}, size_t{1}}) {
    const Tensor *R = ctx.reusableInput(i, A.dtype(), plan.outDims());
    if (!R)
      continue;
    ComputeView<T> va, vb;
    if (!viewCompute(A, va).ok() || !viewCompute(B, vb).ok())
      return false;
    runPlan(plan, va.data(), vb.data(), const_cast<T *>(R->dataAs<T>()), op);
    out = std::make_shared<Tensor>(R->dtype(), R->dims(), R->buffer());
    return true;
  }
  return false;
}

/// The effective shape of B under the opset < 7 `broadcast`/`axis` rules.
Status legacyBroadcastDims(const KernelContext &ctx, const Tensor &A, const Tensor &B,
                           std::vector<int64_t> &bDims) {
  bDims = B.dims();
  if (ctx.attrInt("broadcast", 0) == 0 || !ctx.attr("axis"))
    return Status::success(); // equal shapes, or suffix matching == numpy rules
  int64_t rankA = A.rank(), rankB = B.rank();
  int64_t axis = ctx.attrInt("axis", 0);
  if (axis < 0)
    axis += rankA;
  if (axis < 0 || axis + rankB > rankA)
    return Status::error("broadcast axis " + std::to_string(ctx.attrInt("axis", 0)) +
                         " does not fit shapes " + shapeString(A.dims()) + " and " +
                         shapeString(B.dims()));
  bDims.assign(static_cast<size_t>(axis), 1);
  bDims.insert(bDims.end(), B.dims().begin(), B.dims().end());
  bDims.resize(static_cast<size_t>(rankA), 1);
  return Status::success();
}

Status sameTypes(const Tensor &A, const Tensor &B) {
  if (A.dtype() != B.dtype())
    return Status::error("input element types differ: " + dataTypeName(A.dtype()) + " and " +
                         dataTypeName(B.dtype()));
  return Status::success();
}

/// Two inputs of one type from `Types`; the output is of that type, or bool.
template <typename Types, bool kBoolOut, typename Op>
Status binaryOp(KernelContext &ctx, const Op &op, bool legacy) {
  const Tensor *A, *B;
  ONNXSLIM_RETURN_IF_ERROR(ctx.requireTensor(0, A));
  ONNXSLIM_RETURN_IF_ERROR(ctx.requireTensor(1, B));
  ONNXSLIM_RETURN_IF_ERROR(sameTypes(*A, *B));
  TensorPtr out;
  if (const std::vector<int64_t> *dims = legacy ? nullptr : flatDims(*A, *B)) {
    ONNXSLIM_RETURN_IF_ERROR(dispatchType<Types>(A->dtype(), [&](auto tag) -> Status {
      using T = typename decltype(tag)::type;
      using TO = std::conditional_t<kBoolOut, bool, T>;
      return runFlat<T, T, TO>(ctx, *A, *B, *dims, op,
                               !kBoolOut && std::is_floating_point_v<T>, out);
    }));
    ctx.setOutput(0, std::move(out));
    return Status::success();
  }
  std::vector<int64_t> bDims = B->dims();
  if (legacy)
    ONNXSLIM_RETURN_IF_ERROR(legacyBroadcastDims(ctx, *A, *B, bDims));
  ONNXSLIM_RETURN_IF_ERROR(dispatchType<Types>(A->dtype(), [&](auto tag) -> Status {
    using T = typename decltype(tag)::type;
    using TO = std::conditional_t<kBoolOut, bool, T>;
    if constexpr (!kBoolOut && std::is_floating_point_v<T>)
      if (reusesInput<T>(ctx, *A, *B, bDims, op, out))
        return Status::success();
    return runBinary<T, T, TO>(*A, *B, A->dims(), bDims, op, out);
  }));
  ctx.setOutput(0, std::move(out));
  return Status::success();
}

//===----------------------------------------------------------------------===//
// Ops (each callable on scalars of the compute type and, if kSimd, on batches)
//===----------------------------------------------------------------------===//

struct AddOp {
  static constexpr bool kSimd = true;
  template <typename V> V operator()(const V &a, const V &b) const { return wrapAdd(a, b); }
};
struct SubOp {
  static constexpr bool kSimd = true;
  template <typename V> V operator()(const V &a, const V &b) const { return wrapSub(a, b); }
};
struct MulOp {
  static constexpr bool kSimd = true;
  template <typename V> V operator()(const V &a, const V &b) const { return wrapMul(a, b); }
};
struct DivOp {
  static constexpr bool kSimd = true;
  mutable bool divByZero = false;
  template <typename V> V operator()(const V &a, const V &b) const {
    if constexpr (isIntLike<V>) {
      if (b == 0) {
        divByZero = true;
        return 0;
      }
      if constexpr (std::is_signed_v<V>)
        if (b == -1)
          return wrapNeg(a); // INT_MIN / -1 would trap
      return static_cast<V>(a / b);
    } else {
      return a / b;
    }
  }
};
struct ModOp {
  static constexpr bool kSimd = false;
  bool fmod = false;
  mutable bool divByZero = false;
  template <typename V> V operator()(const V &a, const V &b) const {
    if constexpr (isIntLike<V>) {
      if (b == 0) {
        divByZero = true;
        return 0;
      }
      if constexpr (std::is_signed_v<V>) {
        if (b == -1)
          return 0;
        V r = static_cast<V>(a % b);
        if (!fmod && r != 0 && ((r < 0) != (b < 0)))
          r = static_cast<V>(r + b);
        return r;
      } else {
        return static_cast<V>(a % b);
      }
    } else {
      V r = std::fmod(a, b);
      if (!fmod && r != 0 && ((r < 0) != (b < 0)))
        r += b;
      return r;
    }
  }
};
/// Max/Min propagate NaN (as numpy.maximum/minimum and ONNX Runtime do).
struct MaxOp {
  static constexpr bool kSimd = true;
  template <typename V> V operator()(const V &a, const V &b) const {
    if constexpr (std::is_floating_point_v<V>)
      return (a > b || a != a) ? a : b;
    else if constexpr (isScalarV<V>)
      return a > b ? a : b;
    else
      return sel(xsimd::isnan(a), a, xsimd::max(a, b));
  }
};
struct MinOp {
  static constexpr bool kSimd = true;
  template <typename V> V operator()(const V &a, const V &b) const {
    if constexpr (std::is_floating_point_v<V>)
      return (a < b || a != a) ? a : b;
    else if constexpr (isScalarV<V>)
      return a < b ? a : b;
    else
      return sel(xsimd::isnan(a), a, xsimd::min(a, b));
  }
};
struct PReluOp {
  static constexpr bool kSimd = true;
  template <typename V> V operator()(const V &x, const V &slope) const {
    if constexpr (isScalarV<V>)
      return x < V(0) ? wrapMul(x, slope) : x;
    else
      return sel(x < V(0), x * slope, x);
  }
};
struct BitAndOp {
  static constexpr bool kSimd = false;
  template <typename V> V operator()(V a, V b) const { return static_cast<V>(a & b); }
};
struct BitOrOp {
  static constexpr bool kSimd = false;
  template <typename V> V operator()(V a, V b) const { return static_cast<V>(a | b); }
};
struct BitXorOp {
  static constexpr bool kSimd = false;
  template <typename V> V operator()(V a, V b) const { return static_cast<V>(a ^ b); }
};
struct BitShiftOp {
  static constexpr bool kSimd = false;
  bool left = true;
  template <typename V> V operator()(V a, V b) const {
    if (b >= V(sizeof(V) * 8))
      return 0;
    return static_cast<V>(left ? a << b : a >> b);
  }
};
struct AndOp {
  static constexpr bool kSimd = false;
  bool operator()(bool a, bool b) const { return a && b; }
};
struct OrOp {
  static constexpr bool kSimd = false;
  bool operator()(bool a, bool b) const { return a || b; }
};
struct XorOp {
  static constexpr bool kSimd = false;
  bool operator()(bool a, bool b) const { return a != b; }
};
struct EqualOp {
  static constexpr bool kSimd = false;
  template <typename V> bool operator()(const V &a, const V &b) const { return a == b; }
};
struct LessOp {
  static constexpr bool kSimd = false;
  template <typename V> bool operator()(const V &a, const V &b) const { return a < b; }
};
struct LessOrEqualOp {
  static constexpr bool kSimd = false;
  template <typename V> bool operator()(const V &a, const V &b) const { return a <= b; }
};
struct GreaterOp {
  static constexpr bool kSimd = false;
  template <typename V> bool operator()(const V &a, const V &b) const { return a > b; }
};
struct GreaterOrEqualOp {
  static constexpr bool kSimd = false;
  template <typename V> bool operator()(const V &a, const V &b) const { return a >= b; }
};

//===----------------------------------------------------------------------===//
// Kernels
//===----------------------------------------------------------------------===//

template <typename Op, typename Types, bool kBoolOut, bool kLegacy>
Status simpleBinary(KernelContext &ctx) {
  return binaryOp<Types, kBoolOut>(ctx, Op{}, kLegacy);
}

template <bool kLegacy> Status divKernel(KernelContext &ctx) {
  DivOp op;
  ONNXSLIM_RETURN_IF_ERROR((binaryOp<NumericTypes, false>(ctx, op, kLegacy)));
  if (op.divByZero)
    return ctx.error("integer division by zero");
  return Status::success();
}

Status modKernel(KernelContext &ctx) {
  ModOp op;
  op.fmod = ctx.attrInt("fmod", 0) != 0;
  ONNXSLIM_RETURN_IF_ERROR((binaryOp<NumericTypes, false>(ctx, op, false)));
  if (op.divByZero)
    return ctx.error("integer modulo by zero");
  return Status::success();
}

Status bitShiftKernel(KernelContext &ctx) {
  BitShiftOp op;
  std::string dir = ctx.attrString("direction", "");
  if (dir != "LEFT" && dir != "RIGHT")
    return ctx.error("attribute 'direction' must be LEFT or RIGHT, got '" + dir + "'");
  op.left = dir == "LEFT";
  return binaryOp<UnsignedIntTypes, false>(ctx, op, false);
}

/// Equal over numbers, bools and (opset 19) strings.
template <bool kLegacy> Status equalKernel(KernelContext &ctx) {
  return binaryOp<AllTypes, true>(ctx, EqualOp{}, kLegacy);
}

/// x^e for an integer base: exact (wrapping) for non-negative integral
/// exponents, else pow in double truncated toward zero (as ONNX Runtime).
template <typename T> T intPow(T base, double e) {
  if (e >= 0 && e < 4294967296.0 && e == std::floor(e)) {
    uint64_t n = static_cast<uint64_t>(e);
    T result = 1, b = base;
    while (n) {
      if (n & 1)
        result = wrapMul(result, b);
      b = wrapMul(b, b);
      n >>= 1;
    }
    return result;
  }
  return floatToInt<T>(std::pow(static_cast<double>(base), e));
}

template <typename E> struct PowOp {
  static constexpr bool kSimd = false;
  template <typename V> V operator()(V a, E e) const {
    if constexpr (isIntLike<V>)
      return intPow(a, static_cast<double>(e));
    else
      return std::pow(a, static_cast<V>(e));
  }
};

/// Pow with a base of type T and an exponent of any numeric type (Pow-12+);
/// computed in the base's compute type (double for integer bases' exponents).
template <bool kLegacy> Status powKernel(KernelContext &ctx) {
  const Tensor *A, *B;
  ONNXSLIM_RETURN_IF_ERROR(ctx.requireTensor(0, A));
  ONNXSLIM_RETURN_IF_ERROR(ctx.requireTensor(1, B));
  if (!typeIn<NumericTypes>(B->dtype()))
    return ctx.error("unsupported exponent element type '" + dataTypeName(B->dtype()) + "'");
  std::vector<int64_t> bDims = B->dims();
  if (kLegacy)
    ONNXSLIM_RETURN_IF_ERROR(legacyBroadcastDims(ctx, *A, *B, bDims));
  TensorPtr out;
  ONNXSLIM_RETURN_IF_ERROR(dispatchType<NumericTypes>(A->dtype(), [&](auto tag) -> Status {
    using T = typename decltype(tag)::type;
    using C = ComputeType<T>;
    using E = std::conditional_t<std::is_floating_point_v<C>, C, double>;
    std::vector<E> exps;
    ONNXSLIM_RETURN_IF_ERROR(readAs(*B, exps));
    BroadcastPlan plan;
    ONNXSLIM_RETURN_IF_ERROR(plan.init({A->dims(), bDims}));
    ComputeView<T> va;
    ONNXSLIM_RETURN_IF_ERROR(viewCompute(*A, va));
    ComputeOutput<T> o;
    ONNXSLIM_RETURN_IF_ERROR(o.init(plan.outDims()));
    if constexpr (std::is_floating_point_v<C>) {
      // The common constant exponents run as SIMD maps.
      if (exps.size() == 1 && (exps[0] == E(2) || exps[0] == E(1) || exps[0] == E(0.5))) {
        E e = exps[0];
        MulOp mul;
        auto square = [&](const auto &x) { return mul(x, x); };
        auto sqrtf = [](const auto &x) { return xsimd::sqrt(x); };
        auto ident = [](const auto &x) { return x; };
        plan.forEachRun([&](int64_t oo, const int64_t *off, int64_t n) {
          const C *a = va.data() + off[0];
          C *dst = o.data() + oo;
          if (plan.innerStride(0) == 0) {
            C v = e == E(2) ? a[0] * a[0] : e == E(1) ? a[0] : std::sqrt(a[0]);
            std::fill(dst, dst + n, v);
          } else if (e == E(2)) {
            simdMap<xsimd::batch<C>>(a, dst, n, square);
          } else if (e == E(1)) {
            simdMap<xsimd::batch<C>>(a, dst, n, ident);
          } else {
            simdMap<xsimd::batch<C>>(a, dst, n, sqrtf);
          }
        });
        out = o.finish();
        return Status::success();
      }
    }
    runPlan(plan, va.data(), exps.data(), o.data(), PowOp<E>{});
    out = o.finish();
    return Status::success();
  }));
  ctx.setOutput(0, std::move(out));
  return Status::success();
}

/// PRelu: slope broadcasts unidirectionally to X. Before opset 7 a 1-D slope
/// of X's channel count applies along axis 1.
template <bool kLegacy> Status preluKernel(KernelContext &ctx) {
  const Tensor *X, *S;
  ONNXSLIM_RETURN_IF_ERROR(ctx.requireTensor(0, X));
  ONNXSLIM_RETURN_IF_ERROR(ctx.requireTensor(1, S));
  ONNXSLIM_RETURN_IF_ERROR(sameTypes(*X, *S));
  std::vector<int64_t> sDims = S->dims();
  if (kLegacy && S->rank() == 1 && X->rank() >= 2 && S->dims()[0] == X->dims()[1] &&
      S->dims()[0] != 1) {
    sDims.assign(static_cast<size_t>(X->rank() - 1), 1);
    sDims[0] = S->dims()[0];
  }
  TensorPtr out;
  ONNXSLIM_RETURN_IF_ERROR(dispatchType<SignedNumericTypes>(X->dtype(), [&](auto tag) -> Status {
    using T = typename decltype(tag)::type;
    BroadcastPlan plan;
    ONNXSLIM_RETURN_IF_ERROR(plan.initTo({X->dims(), sDims}, X->dims()));
    ComputeView<T> vx, vs;
    ONNXSLIM_RETURN_IF_ERROR(viewCompute(*X, vx));
    ONNXSLIM_RETURN_IF_ERROR(viewCompute(*S, vs));
    ComputeOutput<T> o;
    ONNXSLIM_RETURN_IF_ERROR(o.init(plan.outDims()));
    runPlan(plan, vx.data(), vs.data(), o.data(), PReluOp{});
    out = o.finish();
    return Status::success();
  }));
  ctx.setOutput(0, std::move(out));
  return Status::success();
}

/// Sum / Max / Min / Mean of any number of inputs, broadcast together.
template <typename Op, typename Types, bool kMean> Status variadicKernel(KernelContext &ctx) {
  size_t n = ctx.numInputs();
  if (n == 0)
    return ctx.error("expects at least one input");
  std::vector<const Tensor *> ins(n);
  for (size_t i = 0; i < n; ++i) {
    ONNXSLIM_RETURN_IF_ERROR(ctx.requireTensor(i, ins[i]));
    ONNXSLIM_RETURN_IF_ERROR(sameTypes(*ins[0], *ins[i]));
  }
  if (!typeIn<Types>(ins[0]->dtype()))
    return ctx.error("unsupported element type '" + dataTypeName(ins[0]->dtype()) + "'");
  if (n == 1) {
    ctx.setOutput(0, ctx.tensorPtr(0));
    return Status::success();
  }
  TensorPtr acc;
  ONNXSLIM_RETURN_IF_ERROR(dispatchType<Types>(ins[0]->dtype(), [&](auto tag) -> Status {
    using T = typename decltype(tag)::type;
    Op op;
    // ONNX Runtime evaluates a one-element first operand of float or double
    // as op(other, it), which decides which zero Max/Min return for +0 vs -0
    // (the spec leaves it open; its float16 kernels keep the order): the
    // same here, so folded values match it.
    auto step = [&](const Tensor &a, const Tensor &b, TensorPtr &out) {
      if (std::is_floating_point_v<T> && a.numElements() == 1 && b.numElements() != 1)
        return runBinary<T, T, T>(b, a, b.dims(), a.dims(), op, out);
      return runBinary<T, T, T>(a, b, a.dims(), b.dims(), op, out);
    };
    ONNXSLIM_RETURN_IF_ERROR(step(*ins[0], *ins[1], acc));
    for (size_t i = 2; i < n; ++i) {
      TensorPtr next;
      ONNXSLIM_RETURN_IF_ERROR(step(*acc, *ins[i], next));
      acc = std::move(next);
    }
    if constexpr (kMean) {
      TensorPtr mean;
      auto divide = [&](const auto *in, auto *out, int64_t len) {
        using U = std::remove_const_t<std::remove_pointer_t<decltype(in)>>;
        U count = static_cast<U>(n);
        for (int64_t i = 0; i < len; ++i)
          out[i] = in[i] / count;
      };
      ONNXSLIM_RETURN_IF_ERROR(mapFloatTensor(*acc, divide, mean));
      acc = std::move(mean);
    }
    return Status::success();
  }));
  ctx.setOutput(0, std::move(acc));
  return Status::success();
}

} // namespace

void registerElementwiseBinaryKernels(OpRegistry &r) {
  constexpr int64_t L = kLatestOpset;
  r.add("Add", 1, 6, simpleBinary<AddOp, NumericTypes, false, true>);
  r.add("Add", 7, L, simpleBinary<AddOp, NumericTypes, false, false>);
  r.add("Sub", 1, 6, simpleBinary<SubOp, NumericTypes, false, true>);
  r.add("Sub", 7, L, simpleBinary<SubOp, NumericTypes, false, false>);
  r.add("Mul", 1, 6, simpleBinary<MulOp, NumericTypes, false, true>);
  r.add("Mul", 7, L, simpleBinary<MulOp, NumericTypes, false, false>);
  r.add("Div", 1, 6, divKernel<true>);
  r.add("Div", 7, L, divKernel<false>);
  r.add("Pow", 1, 6, powKernel<true>);
  r.add("Pow", 7, L, powKernel<false>);
  r.add("Mod", 10, L, modKernel);
  r.add("Max", 1, L, variadicKernel<MaxOp, NumericTypes, false>);
  r.add("Min", 1, L, variadicKernel<MinOp, NumericTypes, false>);
  r.add("Sum", 1, L, variadicKernel<AddOp, NumericTypes, false>);
  r.add("Mean", 1, L, variadicKernel<AddOp, FloatTypes, true>);
  r.add("BitShift", 11, L, bitShiftKernel);
  r.add("BitwiseAnd", 18, L, simpleBinary<BitAndOp, IntTypes, false, false>);
  r.add("BitwiseOr", 18, L, simpleBinary<BitOrOp, IntTypes, false, false>);
  r.add("BitwiseXor", 18, L, simpleBinary<BitXorOp, IntTypes, false, false>);
  using Bools = TypeList<bool>;
  r.add("And", 1, 6, simpleBinary<AndOp, Bools, true, true>);
  r.add("And", 7, L, simpleBinary<AndOp, Bools, true, false>);
  r.add("Or", 1, 6, simpleBinary<OrOp, Bools, true, true>);
  r.add("Or", 7, L, simpleBinary<OrOp, Bools, true, false>);
  r.add("Xor", 1, 6, simpleBinary<XorOp, Bools, true, true>);
  r.add("Xor", 7, L, simpleBinary<XorOp, Bools, true, false>);
  r.add("Equal", 1, 6, equalKernel<true>);
  r.add("Equal", 7, L, equalKernel<false>);
  r.add("Less", 1, 6, simpleBinary<LessOp, NumericTypes, true, true>);
  r.add("Less", 7, L, simpleBinary<LessOp, NumericTypes, true, false>);
  r.add("Greater", 1, 6, simpleBinary<GreaterOp, NumericTypes, true, true>);
  r.add("Greater", 7, L, simpleBinary<GreaterOp, NumericTypes, true, false>);
  r.add("LessOrEqual", 12, L, simpleBinary<LessOrEqualOp, NumericTypes, true, false>);
  r.add("GreaterOrEqual", 12, L, simpleBinary<GreaterOrEqualOp, NumericTypes, true, false>);
  r.add("PRelu", 1, 6, preluKernel<true>);
  r.add("PRelu", 7, L, preluKernel<false>);
}

} // namespace onnxslim::rt
