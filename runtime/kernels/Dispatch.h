//===- runtime/kernels/Dispatch.h - Shared kernel helpers ------*- C++ -*-===//
//
// Helpers shared by the kernel families (private to runtime/kernels/):
//
//  - element-type dispatch: `dispatchType<FloatTypes>(dtype, fn)` calls
//    `fn(TypeTag<T>{})` with the C++ type T of `dtype` when it is in the list,
//    and returns an "unsupported element type" error otherwise;
//  - typed, alignment-safe views of input tensors (ElemView) and checked
//    allocation of outputs;
//  - safe numeric conversions (wrapping integer arithmetic, float -> integer
//    casts without undefined behaviour, float16/bfloat16 through float);
//  - numpy broadcasting: the output shape of several inputs and a loop plan
//    (BroadcastPlan) that coalesces dimensions so that the innermost loop is a
//    contiguous run in which every input is either contiguous or a scalar;
//  - a generic SIMD map loop parameterized by the batch type (the header
//    itself does not include xsimd: kernel .cpp files pass xsimd::batch).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "runtime/Float16.h"
#include "runtime/Kernel.h"
#include "runtime/ThreadPool.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

namespace onnxslim::rt {

//===----------------------------------------------------------------------===//
// Element types
//===----------------------------------------------------------------------===//

template <typename T> struct TypeTag {
  using type = T;
};
template <typename... Ts> struct TypeList {};

template <typename A, typename B> struct ConcatLists;
template <typename... A, typename... B> struct ConcatLists<TypeList<A...>, TypeList<B...>> {
  using type = TypeList<A..., B...>;
};

using FloatTypes = TypeList<float, double, Half, BFloat16>;
using SignedIntTypes = TypeList<int8_t, int16_t, int32_t, int64_t>;
using UnsignedIntTypes = TypeList<uint8_t, uint16_t, uint32_t, uint64_t>;
using IntTypes = ConcatLists<SignedIntTypes, UnsignedIntTypes>::type;
using NumericTypes = ConcatLists<FloatTypes, IntTypes>::type;
using SignedNumericTypes = ConcatLists<FloatTypes, SignedIntTypes>::type;
using NumericBoolTypes = ConcatLists<NumericTypes, TypeList<bool>>::type;
using AllTypes = ConcatLists<NumericBoolTypes, TypeList<std::string>>::type;

template <typename T> inline constexpr bool isHalfLike = std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>;
template <typename T>
inline constexpr bool isFloatLike = std::is_floating_point_v<T> || isHalfLike<T>;
template <typename T>
inline constexpr bool isIntLike = std::is_integral_v<T> && !std::is_same_v<T, bool>;

/// The ONNX element type of C++ type T.
template <typename T> constexpr DataType dataTypeOf() {
  if constexpr (std::is_same_v<T, float>) return DataType::Float;
  else if constexpr (std::is_same_v<T, double>) return DataType::Double;
  else if constexpr (std::is_same_v<T, Half>) return DataType::Float16;
  else if constexpr (std::is_same_v<T, BFloat16>) return DataType::BFloat16;
  else if constexpr (std::is_same_v<T, int8_t>) return DataType::Int8;
  else if constexpr (std::is_same_v<T, int16_t>) return DataType::Int16;
  else if constexpr (std::is_same_v<T, int32_t>) return DataType::Int32;
  else if constexpr (std::is_same_v<T, int64_t>) return DataType::Int64;
  else if constexpr (std::is_same_v<T, uint8_t>) return DataType::UInt8;
  else if constexpr (std::is_same_v<T, uint16_t>) return DataType::UInt16;
  else if constexpr (std::is_same_v<T, uint32_t>) return DataType::UInt32;
  else if constexpr (std::is_same_v<T, uint64_t>) return DataType::UInt64;
  else if constexpr (std::is_same_v<T, bool>) return DataType::Bool;
  else if constexpr (std::is_same_v<T, std::string>) return DataType::String;
  else static_assert(sizeof(T) == 0, "not an element type");
}

/// The type a kernel computes in: float for float16/bfloat16, else T itself.
template <typename T> using ComputeType = std::conditional_t<isHalfLike<T>, float, T>;

namespace detail {
template <typename F, typename... Ts> Status dispatchIn(DataType t, F &f, TypeList<Ts...>) {
  Status result;
  bool found = ((dataTypeOf<Ts>() == t ? (result = f(TypeTag<Ts>{}), true) : false) || ...);
  if (!found)
    return Status::error("unsupported element type '" + dataTypeName(t) + "'");
  return result;
}
} // namespace detail

/// Given an element type and a list, Execute: calls `fn(TypeTag<T>{})` for the
/// matching C++ type, Result: its Status, or an error when `t` is not listed.
template <typename List, typename F> Status dispatchType(DataType t, F &&fn) {
  return detail::dispatchIn(t, fn, List{});
}

/// Whether `t` is in type list `List`.
template <typename List> bool typeIn(DataType t) {
  return [t]<typename... Ts>(TypeList<Ts...>) { return ((dataTypeOf<Ts>() == t) || ...); }(List{});
}

//===----------------------------------------------------------------------===//
// Conversions
//===----------------------------------------------------------------------===//

/// Unsigned type in which integer T wraps without undefined behaviour (at
/// least `unsigned`, so that small types do not promote to signed int).
template <typename T>
using WrapType =
    std::conditional_t<(sizeof(T) < sizeof(unsigned)), unsigned, std::make_unsigned_t<T>>;

template <typename T> inline T wrapAdd(T a, T b) {
  if constexpr (isIntLike<T>)
    return static_cast<T>(static_cast<WrapType<T>>(a) + static_cast<WrapType<T>>(b));
  else
    return a + b;
}
template <typename T> inline T wrapSub(T a, T b) {
  if constexpr (isIntLike<T>)
    return static_cast<T>(static_cast<WrapType<T>>(a) - static_cast<WrapType<T>>(b));
  else
    return a - b;
}
template <typename T> inline T wrapMul(T a, T b) {
  if constexpr (isIntLike<T>)
    return static_cast<T>(static_cast<WrapType<T>>(a) * static_cast<WrapType<T>>(b));
  else
    return a * b;
}
template <typename T> inline T wrapNeg(T a) {
  if constexpr (isIntLike<T>)
    return static_cast<T>(WrapType<T>(0) - static_cast<WrapType<T>>(a));
  else
    return -a;
}

/// Float -> integer conversion without undefined behaviour. In range it
/// truncates toward zero; NaN and out-of-range values (whose result the ONNX
/// spec leaves undefined, see floatToIntIsDefined) give what ONNX Runtime
/// returns on x86-64, measured with tools/oracle: the "integer indefinite"
/// value of a conversion to int32 (narrow types then keep its low bits) or
/// int64; uint32 and uint64 convert values from 2^31 (2^63) up by
/// subtracting that power and flipping the top bit back, so 3e9 -> uint32 is
/// exact while 5e9 and +inf give 0 and NaN gives 2^31 (2^63).
template <typename I> inline I floatToInt(double v) {
  auto toInt32 = [](double x) {
    return (std::isnan(x) || x >= 2147483648.0 || x <= -2147483649.0)
               ? std::numeric_limits<int32_t>::min()
               : static_cast<int32_t>(x);
  };
  auto toInt64 = [](double x) {
    return (std::isnan(x) || x >= 9223372036854775808.0 || x < -9223372036854775808.0)
               ? std::numeric_limits<int64_t>::min()
               : static_cast<int64_t>(x);
  };
  if constexpr (std::is_same_v<I, bool>) {
    return v != 0;
  } else if constexpr (std::is_same_v<I, uint32_t>) {
    if (v >= 2147483648.0)
      return static_cast<uint32_t>(toInt32(v - 2147483648.0)) ^ 0x80000000u;
    return static_cast<uint32_t>(toInt32(v));
  } else if constexpr (std::is_same_v<I, uint64_t>) {
    if (v >= 9223372036854775808.0)
      return static_cast<uint64_t>(toInt64(v - 9223372036854775808.0)) ^ (uint64_t{1} << 63);
    return static_cast<uint64_t>(toInt64(v));
  } else if constexpr (sizeof(I) <= 4) {
    return static_cast<I>(toInt32(v));
  } else {
    return static_cast<I>(toInt64(v));
  }
}

/// Whether the ONNX spec defines converting float `v` to integer type I:
/// its integer part must be representable (NaN and infinities never are).
/// Any value converts to bool (v != 0).
template <typename I> inline bool floatToIntIsDefined(double v) {
  if constexpr (std::is_same_v<I, bool>) {
    return true;
  } else {
    double t = std::trunc(v); // NaN stays NaN and fails both comparisons
    return t >= static_cast<double>(std::numeric_limits<I>::lowest()) &&
           t < std::ldexp(1.0, std::numeric_limits<I>::digits);
  }
}

/// Converts one element between any two numeric/bool element types (not
/// strings): through float for float16/bfloat16, with floatToInt semantics
/// for float -> integer and value != 0 for -> bool.
template <typename To, typename From> inline To convertElem(From v) {
  if constexpr (std::is_same_v<To, From>) {
    return v;
  } else if constexpr (isHalfLike<From>) {
    return convertElem<To>(v.toFloat());
  } else if constexpr (std::is_same_v<To, Half>) {
    if constexpr (std::is_same_v<From, double>)
      return Half::fromBits(doubleToHalfBits(v));
    else
      return Half::fromFloat(static_cast<float>(v));
  } else if constexpr (std::is_same_v<To, BFloat16>) {
    if constexpr (std::is_same_v<From, double>)
      return BFloat16::fromBits(doubleToBFloat16Bits(v));
    else
      return BFloat16::fromFloat(static_cast<float>(v));
  } else if constexpr (std::is_same_v<To, bool>) {
    return v != From(0);
  } else if constexpr (std::is_floating_point_v<From> && std::is_integral_v<To>) {
    return floatToInt<To>(static_cast<double>(v));
  } else {
    return static_cast<To>(v);
  }
}

/// Element to its compute type (float for float16/bfloat16).
template <typename T> inline ComputeType<T> toCompute(T v) {
  if constexpr (isHalfLike<T>)
    return v.toFloat();
  else
    return v;
}
/// Compute type back to the element type (round to nearest even for 16-bit floats).
template <typename T> inline T fromCompute(ComputeType<T> v) {
  if constexpr (isHalfLike<T>)
    return T::fromFloat(v);
  else
    return v;
}

//===----------------------------------------------------------------------===//
// Tensor access
//===----------------------------------------------------------------------===//

/// Given an element type and dims, Execute: checks the size and allocates a
/// writable tensor (zeroed unless `fill` says otherwise), Result: `out` holds it.
inline Status allocOutput(DataType dtype, std::vector<int64_t> dims,
                          std::optional<TensorBuilder> &out,
                          TensorBuilder::Fill fill = TensorBuilder::Fill::Zeroed) {
  int64_t n = 0;
  ONNXSLIM_RETURN_IF_ERROR(checkedNumElements(dims, dtype, n));
  out.emplace(dtype, std::move(dims), fill);
  return Status::success();
}

/// A read-only typed view of a tensor's elements. Points into the tensor's
/// buffer, or into an aligned copy when the bytes are misaligned for T (raw
/// data inside a mapped model file can sit at any offset). A bool byte
/// other than 0 and 1 is true: bool data holding one is viewed through a
/// copy of 0s and 1s, as reading such a byte as a C++ bool is undefined
/// behaviour (kernels then compute on true and false only).
template <typename T> class ElemView {
public:
  const T *data() const { return ptr_; }
  int64_t size() const { return n_; }
  const T &operator[](int64_t i) const { return ptr_[i]; }
  const T *begin() const { return ptr_; }
  const T *end() const { return ptr_ + n_; }

private:
  template <typename U> friend Status viewElements(const Tensor &t, ElemView<U> &v);
  const T *ptr_ = nullptr;
  int64_t n_ = 0;
  std::unique_ptr<T[]> copy_;
};

/// Given a tensor of element type T, Execute: checks that its data size
/// matches its dims, Result: `v` views its elements; an error otherwise.
template <typename T> Status viewElements(const Tensor &t, ElemView<T> &v) {
  if (t.dtype() != dataTypeOf<T>())
    return Status::error("expected a tensor of " + dataTypeName(dataTypeOf<T>()) + ", got " +
                         dataTypeName(t.dtype()));
  if (!t.isConsistent())
    return Status::error("tensor data size does not match its shape");
  v.copy_.reset();
  v.n_ = t.numElements();
  if constexpr (std::is_same_v<T, std::string>) {
    v.ptr_ = t.strings().data();
  } else if constexpr (std::is_same_v<T, bool>) {
    const uint8_t *raw = t.rawData();
    if (std::any_of(raw, raw + v.n_, [](uint8_t b) { return b > 1; })) {
      v.copy_ = std::make_unique_for_overwrite<bool[]>(static_cast<size_t>(v.n_));
      for (int64_t i = 0; i < v.n_; ++i)
        v.copy_[i] = raw[i] != 0;
      v.ptr_ = v.copy_.get();
    } else {
      v.ptr_ = reinterpret_cast<const bool *>(raw);
    }
  } else {
    const uint8_t *raw = t.rawData();
    if (v.n_ > 0 && reinterpret_cast<uintptr_t>(raw) % alignof(T) != 0) {
      v.copy_ = std::make_unique_for_overwrite<T[]>(static_cast<size_t>(v.n_));
      std::memcpy(static_cast<void *>(v.copy_.get()), raw, static_cast<size_t>(v.n_) * sizeof(T));
      v.ptr_ = v.copy_.get();
    } else {
      v.ptr_ = reinterpret_cast<const T *>(raw);
    }
  }
  return Status::success();
}

/// A tensor's elements in their compute type: a view of the tensor for most
/// types, a float copy for float16/bfloat16.
template <typename T> class ComputeView {
public:
  using C = ComputeType<T>;
  const C *data() const { return ptr_; }
  int64_t size() const { return n_; }
  const C &operator[](int64_t i) const { return ptr_[i]; }

private:
  template <typename U> friend Status viewCompute(const Tensor &t, ComputeView<U> &v);
  ElemView<T> view_;
  std::vector<float> floats_;
  const C *ptr_ = nullptr;
  int64_t n_ = 0;
};

/// Given a tensor of element type T, Result: `v` holds its elements in the compute type.
template <typename T> Status viewCompute(const Tensor &t, ComputeView<T> &v) {
  ONNXSLIM_RETURN_IF_ERROR(viewElements(t, v.view_));
  v.n_ = v.view_.size();
  if constexpr (isHalfLike<T>) {
    v.floats_.resize(static_cast<size_t>(v.n_));
    for (int64_t i = 0; i < v.n_; ++i)
      v.floats_[static_cast<size_t>(i)] = v.view_[i].toFloat();
    v.ptr_ = v.floats_.data();
  } else {
    v.ptr_ = v.view_.data();
  }
  return Status::success();
}

/// A writable output of element type T that kernels fill in its compute
/// type: directly for most types, through a float buffer for float16 and
/// bfloat16 (rounded to nearest even by finish()). The storage is not
/// zeroed: users write every element.
template <typename T> class ComputeOutput {
public:
  using C = ComputeType<T>;
  /// Given dims, Execute: checks the size and allocates (uninitialized).
  Status init(std::vector<int64_t> dims) {
    ONNXSLIM_RETURN_IF_ERROR(allocOutput(dataTypeOf<T>(), std::move(dims), builder_,
                                         TensorBuilder::Fill::Uninitialized));
    if constexpr (isHalfLike<T>) {
      floats_.assign(static_cast<size_t>(builder_->numElements()), 0.0f);
      ptr_ = floats_.data();
    } else {
      ptr_ = builder_->template dataAs<T>();
    }
    return Status::success();
  }
  C *data() { return ptr_; }
  int64_t size() const { return builder_->numElements(); }
  TensorPtr finish() {
    if constexpr (isHalfLike<T>) {
      T *o = builder_->template dataAs<T>();
      for (size_t i = 0; i < floats_.size(); ++i)
        o[i] = T::fromFloat(floats_[i]);
    }
    return builder_->finish();
  }

private:
  std::optional<TensorBuilder> builder_;
  std::vector<float> floats_;
  C *ptr_ = nullptr;
};

/// Given a numeric/bool tensor, Execute: converts every element to C,
/// Result: `out` holds them (an error for strings or malformed data).
template <typename C> Status readAs(const Tensor &t, std::vector<C> &out) {
  return dispatchType<NumericBoolTypes>(t.dtype(), [&](auto tag) -> Status {
    using T = typename decltype(tag)::type;
    ElemView<T> v;
    ONNXSLIM_RETURN_IF_ERROR(viewElements(t, v));
    out.resize(static_cast<size_t>(v.size()));
    for (int64_t i = 0; i < v.size(); ++i)
      out[static_cast<size_t>(i)] = convertElem<C>(v[i]);
    return Status::success();
  });
}

/// Reads a scalar (or one-element tensor) as C.
template <typename C> Status readScalar(const Tensor &t, C &out) {
  if (t.numElements() != 1 || t.rank() > 1)
    return Status::error("expected a scalar");
  std::vector<C> v;
  ONNXSLIM_RETURN_IF_ERROR(readAs(t, v));
  out = v[0];
  return Status::success();
}

/// Given an axis in [-rank, rank), Result: it in [0, rank); an error otherwise.
inline Status normalizeAxis(int64_t axis, int64_t rank, int64_t &out) {
  out = 0;
  if (axis < -rank || axis >= rank)
    return Status::error("axis " + std::to_string(axis) + " is out of range for rank " +
                         std::to_string(rank));
  out = axis < 0 ? axis + rank : axis;
  return Status::success();
}

/// "[2,3,4]" for messages.
inline std::string shapeString(const std::vector<int64_t> &dims) {
  std::string s = "[";
  for (size_t i = 0; i < dims.size(); ++i)
    s += (i ? "," : "") + std::to_string(dims[i]);
  return s + "]";
}

//===----------------------------------------------------------------------===//
// Broadcasting
//===----------------------------------------------------------------------===//

/// Given shapes, Execute: numpy multidirectional broadcasting, Result: `out`
/// is the common shape; an error names the incompatible shapes.
inline Status broadcastShapes(const std::vector<std::vector<int64_t>> &shapes,
                              std::vector<int64_t> &out) {
  size_t rank = 0;
  for (const auto &s : shapes)
    rank = std::max(rank, s.size());
  out.assign(rank, 1);
  for (size_t d = 0; d < rank; ++d) {
    bool set = false;
    for (const auto &s : shapes) {
      if (d + s.size() < rank)
        continue;
      int64_t v = s[d + s.size() - rank];
      if (v < 0)
        return Status::error("negative dimension in " + shapeString(s));
      if (v == 1)
        continue;
      if (!set) {
        out[d] = v;
        set = true;
      } else if (out[d] != v) {
        std::string msg = "incompatible broadcast shapes";
        for (const auto &t : shapes)
          msg += " " + shapeString(t);
        return Status::error(msg);
      }
    }
  }
  return Status::success();
}

/// A loop plan over the broadcast output of several inputs. Dimensions of
/// size 1 are dropped and neighbours with the same broadcast pattern merged,
/// so `[N,C,H,W] + [1,C,1,1]` becomes N*C runs of H*W elements in which the
/// second input is a scalar. forEachRun calls `f(outOffset, inOffsets, len)`
/// for each run; within a run input i advances by innerStride(i) (0 or 1).
class BroadcastPlan {
public:
  /// Given input shapes, Execute: computes the broadcast shape and the loop nest.
  Status init(const std::vector<std::vector<int64_t>> &inputs) {
    std::vector<int64_t> out;
    ONNXSLIM_RETURN_IF_ERROR(broadcastShapes(inputs, out));
    build(inputs, out);
    return Status::success();
  }
  /// Like init, but every input must broadcast to exactly `target`
  /// (unidirectional broadcasting, as PRelu's slope or Expand).
  Status initTo(const std::vector<std::vector<int64_t>> &inputs,
                const std::vector<int64_t> &target) {
    std::vector<std::vector<int64_t>> all = inputs;
    all.push_back(target);
    std::vector<int64_t> out;
    ONNXSLIM_RETURN_IF_ERROR(broadcastShapes(all, out));
    if (out != target)
      return Status::error("shape " + shapeString(inputs.back()) +
                           " does not broadcast to " + shapeString(target));
    build(inputs, out);
    return Status::success();
  }

  const std::vector<int64_t> &outDims() const { return outDims_; }
  int64_t outSize() const { return outSize_; }
  int64_t innerSize() const { return inner_; }
  int64_t innerStride(size_t input) const { return innerStride_[input]; }
  size_t numInputs() const { return innerStride_.size(); }

  /// Calls f(int64_t outOffset, const int64_t *inOffsets, int64_t len) per run.
  template <typename F> void forEachRun(F &&f) const {
    if (outSize_ > 0)
      runRange(0, outSize_ / inner_, f);
  }

  /// forEachRun split across the thread pool (runtime/ThreadPool.h) when the
  /// output is large: each run, or each piece of the single run, is passed
  /// to `f` exactly once, so `f` must only write the output it is given.
  template <typename F> void forEachRunParallel(F &&f) const {
    const int64_t runs = inner_ > 0 ? outSize_ / inner_ : 0;
    if (runs == 1) {
      const size_t nIn = innerStride_.size();
      parallelSpans(outSize_, 16, [&](int64_t begin, int64_t end) {
        std::vector<int64_t> off(nIn);
        for (size_t i = 0; i < nIn; ++i)
          off[i] = begin * innerStride_[i];
        f(begin, static_cast<const int64_t *>(off.data()), end - begin);
      });
      return;
    }
    if (outSize_ < kParallelMinElements || insideParallelTask() || threadCount() <= 1) {
      forEachRun(f);
      return;
    }
    const int threads = threadCount();
    parallelFor(threads, [&](int64_t t) { runRange(runs * t / threads, runs * (t + 1) / threads, f); });
  }

private:
  /// forEachRun over runs [r0, r1) only.
  template <typename F> void runRange(int64_t r0, int64_t r1, F &f) const {
    if (r0 >= r1)
      return;
    const size_t nIn = innerStride_.size(), rank = outerDims_.size();
    std::vector<int64_t> idx(rank, 0), off(nIn, 0);
    for (size_t d = rank, rest = static_cast<size_t>(r0); d-- > 0;) {
      idx[d] = static_cast<int64_t>(rest % static_cast<size_t>(outerDims_[d]));
      rest /= static_cast<size_t>(outerDims_[d]);
      for (size_t i = 0; i < nIn; ++i)
        off[i] += idx[d] * outerStrides_[d * nIn + i];
    }
    for (int64_t r = r0; r < r1; ++r) {
      f(r * inner_, static_cast<const int64_t *>(off.data()), inner_);
      for (size_t d = rank; d-- > 0;) {
        const int64_t *st = &outerStrides_[d * nIn];
        if (++idx[d] < outerDims_[d]) {
          for (size_t i = 0; i < nIn; ++i)
            off[i] += st[i];
          break;
        }
        for (size_t i = 0; i < nIn; ++i)
          off[i] -= st[i] * (outerDims_[d] - 1);
        idx[d] = 0;
      }
    }
  }

  void build(const std::vector<std::vector<int64_t>> &inputs, const std::vector<int64_t> &out) {
    outDims_ = out;
    outSize_ = 1;
    for (int64_t d : out)
      outSize_ *= d;
    size_t nIn = inputs.size();
    size_t rank = out.size();
    // Merged dims: size and, per input, whether it is broadcast there.
    std::vector<int64_t> sizes;
    std::vector<std::vector<bool>> bcast; // [merged dim][input]
    for (size_t d = 0; d < rank; ++d) {
      if (out[d] == 1)
        continue;
      std::vector<bool> flags(nIn);
      for (size_t i = 0; i < nIn; ++i) {
        const auto &s = inputs[i];
        flags[i] = d + s.size() < rank || s[d + s.size() - rank] == 1;
      }
      if (!sizes.empty() && bcast.back() == flags) {
        sizes.back() *= out[d];
      } else {
        sizes.push_back(out[d]);
        bcast.push_back(std::move(flags));
      }
    }
    // Element strides of each input over the merged dims (0 where broadcast).
    size_t m = sizes.size();
    std::vector<int64_t> strides(m * nIn, 0);
    for (size_t i = 0; i < nIn; ++i) {
      int64_t running = 1;
      for (size_t d = m; d-- > 0;) {
        if (!bcast[d][i]) {
          strides[d * nIn + i] = running;
          running *= sizes[d];
        }
      }
    }
    innerStride_.assign(nIn, 0);
    if (m == 0) {
      inner_ = 1;
      outerDims_.clear();
      outerStrides_.clear();
      return;
    }
    inner_ = sizes.back();
    for (size_t i = 0; i < nIn; ++i)
      innerStride_[i] = strides[(m - 1) * nIn + i];
    outerDims_.assign(sizes.begin(), sizes.end() - 1);
    outerStrides_.assign(strides.begin(), strides.end() - static_cast<std::ptrdiff_t>(nIn));
  }

  std::vector<int64_t> outDims_;
  int64_t outSize_ = 0;
  int64_t inner_ = 1;
  std::vector<int64_t> innerStride_;
  std::vector<int64_t> outerDims_;
  std::vector<int64_t> outerStrides_; // [outer dim][input]
};

//===----------------------------------------------------------------------===//
// SIMD loops (the batch type comes from the kernel .cpp: xsimd::batch<T>)
//===----------------------------------------------------------------------===//

/// out[i] = op(in[i]) for i < n: full batches, then a scalar tail. `op` is
/// called with a Batch and with a T (a generic lambda serves both).
template <typename Batch, typename T, typename Op>
inline void simdMap(const T *in, T *out, int64_t n, const Op &op) {
  constexpr int64_t W = static_cast<int64_t>(Batch::size);
  parallelSpans(n, W, [&](int64_t begin, int64_t end) {
    // The pointers in locals: read through the closure, they were loaded
    // again after every store (an SSE store may alias anything).
    const T *src = in;
    T *dst = out;
    int64_t i = begin;
    for (; i + W <= end; i += W)
      op(Batch::load_unaligned(src + i)).store_unaligned(dst + i);
    for (; i < end; ++i)
      dst[i] = op(src[i]);
  });
}

/// Converts a float16/bfloat16 span to float in chunks, runs `op(const float
/// *, float *, n)` on each chunk and converts back (no full-size temporaries).
template <typename T, typename Op>
inline void mapThroughFloat(const T *in, T *out, int64_t n, const Op &op) {
  constexpr int64_t kChunk = 2048;
  float a[kChunk], b[kChunk];
  for (int64_t s = 0; s < n; s += kChunk) {
    int64_t len = std::min(kChunk, n - s);
    for (int64_t i = 0; i < len; ++i)
      a[i] = in[s + i].toFloat();
    op(static_cast<const float *>(a), static_cast<float *>(b), len);
    for (int64_t i = 0; i < len; ++i)
      out[s + i] = T::fromFloat(b[i]);
  }
}

/// Given a float/double/float16/bfloat16 tensor and a span function
/// `op(const U *in, U *out, n)` callable for U = float and double (a generic
/// lambda), Execute: applies it elementwise, Result: `out` has x's type and shape.
template <typename Op> Status mapFloatTensor(const Tensor &x, const Op &op, TensorPtr &out) {
  return dispatchType<FloatTypes>(x.dtype(), [&](auto tag) -> Status {
    using T = typename decltype(tag)::type;
    ElemView<T> in;
    ONNXSLIM_RETURN_IF_ERROR(viewElements(x, in));
    std::optional<TensorBuilder> b;
    ONNXSLIM_RETURN_IF_ERROR(
        allocOutput(x.dtype(), x.dims(), b, TensorBuilder::Fill::Uninitialized));
    if constexpr (isHalfLike<T>)
      mapThroughFloat(in.data(), b->dataAs<T>(), in.size(), op);
    else
      op(in.data(), b->dataAs<T>(), in.size());
    out = b->finish();
    return Status::success();
  });
}

} // namespace onnxslim::rt
