//===- runtime/kernels/TensorHelpers.h - Shared layout-kernel helpers -*- C++ -*-===//
//
// Private helpers of the tensor-manipulation, control-flow and sequence
// kernels: axis normalization, reading integer inputs, a dtype visitor that
// includes float16/bfloat16 (as storage wrappers converting through float),
// and a strided copy that moves elements of any dtype (strings included) from
// a source tensor into a dense output, copying contiguous runs with memcpy.
// Most layout ops (Transpose, Slice, Expand, Tile, DepthToSpace...) are one
// strided copy with the right strides.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "runtime/Kernel.h"

#include <array>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <type_traits>
#include <vector>

namespace onnxslim::rt {

/// Given a sparse tensor, Result: its dense equivalent (error on malformed indices).
Status densifySparse(const SparseTensor &sparse, TensorPtr &out);

namespace tops {

//===----------------------------------------------------------------------===//
// 16-bit floats
//===----------------------------------------------------------------------===//

float halfToFloat(uint16_t h);
uint16_t floatToHalf(float f);
inline float bf16ToFloat(uint16_t b) {
  uint32_t u = uint32_t{b} << 16;
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}
inline uint16_t floatToBf16(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  if (std::isnan(f))
    return static_cast<uint16_t>((u >> 16) | 0x40);
  u += 0x7FFF + ((u >> 16) & 1); // round to nearest even
  return static_cast<uint16_t>(u >> 16);
}

/// Storage wrappers so templates can tell the 16-bit float types apart.
struct F16 {
  uint16_t bits;
};
struct BF16 {
  uint16_t bits;
};

/// A float8 element (E4M3FN, E4M3FNUZ, E5M2, E5M2FNUZ) of type `t` as a
/// double (runtime/kernels/Cast.cpp; NaN for another type).
double float8ToDouble(DataType t, uint8_t bits);

/// Converts any element type to double (for comparisons and arithmetic).
template <typename T> inline double toDouble(T v) { return static_cast<double>(v); }
template <> inline double toDouble(F16 v) { return halfToFloat(v.bits); }
template <> inline double toDouble(BF16 v) { return bf16ToFloat(v.bits); }

/// Converts a double to an element type (saturation is not attempted).
template <typename T> inline T fromDouble(double v) { return static_cast<T>(v); }
template <> inline F16 fromDouble<F16>(double v) { return F16{floatToHalf(static_cast<float>(v))}; }
template <> inline BF16 fromDouble<BF16>(double v) { return BF16{floatToBf16(static_cast<float>(v))}; }
template <> inline bool fromDouble<bool>(double v) { return v != 0; }

/// The type arithmetic on T is done in (float for the 16-bit floats).
template <typename T> struct ComputeOf {
  using type = T;
};
template <> struct ComputeOf<F16> {
  using type = float;
};
template <> struct ComputeOf<BF16> {
  using type = float;
};
template <typename T> using ComputeT = typename ComputeOf<T>::type;
template <typename T> inline ComputeT<T> widen(T v) { return v; }
template <> inline float widen(F16 v) { return halfToFloat(v.bits); }
template <> inline float widen(BF16 v) { return bf16ToFloat(v.bits); }
template <typename T> inline T narrow(ComputeT<T> v) { return static_cast<T>(v); }
template <> inline F16 narrow<F16>(float v) { return F16{floatToHalf(v)}; }
template <> inline BF16 narrow<BF16>(float v) { return BF16{floatToBf16(v)}; }

/// Reads element i of a tensor as T without alignment or bool-validity
/// assumptions (a bool byte other than 0/1 reads as true).
template <typename T> inline T load(const uint8_t *base, int64_t i) {
  if constexpr (std::is_same_v<T, bool>) {
    return base[i] != 0;
  } else {
    T v;
    std::memcpy(&v, base + i * static_cast<int64_t>(sizeof(T)), sizeof(T));
    return v;
  }
}
template <typename T> inline void store(uint8_t *base, int64_t i, T v) {
  std::memcpy(base + i * static_cast<int64_t>(sizeof(T)), &v, sizeof(T));
}

/// Calls `f.template operator()<T>()` with the C++ element type of `dt`
/// (F16/BF16 for the 16-bit floats). Returns false for types it does not
/// handle (strings, complex, 8-bit floats, 4-bit ints).
template <typename F> bool visitNumeric(DataType dt, F &&f) {
  switch (dt) {
  case DataType::Float: f.template operator()<float>(); return true;
  case DataType::Double: f.template operator()<double>(); return true;
  case DataType::Float16: f.template operator()<F16>(); return true;
  case DataType::BFloat16: f.template operator()<BF16>(); return true;
  case DataType::Int8: f.template operator()<int8_t>(); return true;
  case DataType::Int16: f.template operator()<int16_t>(); return true;
  case DataType::Int32: f.template operator()<int32_t>(); return true;
  case DataType::Int64: f.template operator()<int64_t>(); return true;
  case DataType::UInt8: f.template operator()<uint8_t>(); return true;
  case DataType::UInt16: f.template operator()<uint16_t>(); return true;
  case DataType::UInt32: f.template operator()<uint32_t>(); return true;
  case DataType::UInt64: f.template operator()<uint64_t>(); return true;
  case DataType::Bool: f.template operator()<bool>(); return true;
  default: return false;
  }
}

//===----------------------------------------------------------------------===//
// Shapes and inputs
//===----------------------------------------------------------------------===//

/// Given an axis in [-rank, rank), Result: it in [0, rank), or an error.
Status normalizeAxis(int64_t axis, int64_t rank, int64_t &out, const char *what = "axis");

/// Reads an integer tensor (int8..uint64) as int64 values.
Status readInts(const Tensor &t, std::vector<int64_t> &out, const char *what);

/// Reads a scalar (or one-element) numeric tensor as double.
Status readScalar(const Tensor &t, double &out, const char *what);

/// Row-major strides (in elements) of `dims`.
std::vector<int64_t> stridesOf(const std::vector<int64_t> &dims);

/// An int64 tensor with `dims` and `values`.
TensorPtr makeInt64(std::vector<int64_t> dims, const std::vector<int64_t> &values);

/// Error when a tensor of `dims` and `dt` would be negative-sized, overflow,
/// or exceed the interpreter's memory limit.
Status checkOutputSize(const KernelContext &ctx, const std::vector<int64_t> &dims, DataType dt);

/// Error unless `dt` is a type the byte-moving kernels handle (fixed-size or string).
Status checkMovable(DataType dt);

/// Given source strides (in elements, may be 0 or negative) for each output
/// dim and a starting element offset into `src`, Execute: copies the
/// elements into `dst` (dense, row-major over `dims`), Result: dst filled.
/// The caller guarantees every addressed element is inside `src`.
void stridedCopy(const Tensor &src, int64_t srcOffset, const std::vector<int64_t> &dims,
                 const std::vector<int64_t> &srcStrides, TensorBuilder &dst,
                 int64_t dstOffset = 0, const std::vector<int64_t> *dstStrides = nullptr);

/// Copies element `from` of `src` to element `to` of `dst` (any movable type).
inline void copyElement(const Tensor &src, int64_t from, TensorBuilder &dst, int64_t to,
                        size_t elemSize) {
  if (elemSize == 0)
    dst.strings()[to] = src.strings()[from];
  else
    std::memcpy(dst.data() + to * elemSize, src.rawData() + from * elemSize, elemSize);
}

/// Builds a new tensor of `dims` whose element i is src element index[i].
Status gatherByIndex(const Tensor &src, const std::vector<int64_t> &dims,
                     const std::vector<int64_t> &index, TensorPtr &out);

/// Same data viewed with other dims (no copy of the bytes).
TensorPtr reshaped(const TensorPtr &t, std::vector<int64_t> dims);

/// "[2, 3, 4]"
std::string dimsToString(const std::vector<int64_t> &dims);

/// Calls fn(outIndex, off0, off1, ...) for every element of `outDims`, where
/// off_k is the element offset into operand k read with `strides[k]`.
template <size_t K, typename Fn>
void forEachBroadcast(const std::vector<int64_t> &outDims,
                      const std::array<std::vector<int64_t>, K> &strides, Fn &&fn) {
  int64_t total = 1;
  for (int64_t d : outDims)
    total *= d;
  if (total <= 0)
    return;
  size_t rank = outDims.size();
  std::vector<int64_t> counter(rank, 0);
  std::array<int64_t, K> off{};
  for (int64_t i = 0; i < total; ++i) {
    fn(i, off);
    for (size_t a = rank; a-- > 0;) {
      for (size_t k = 0; k < K; ++k)
        off[k] += strides[k][a];
      if (++counter[a] < outDims[a])
        break;
      for (size_t k = 0; k < K; ++k)
        off[k] -= strides[k][a] * outDims[a];
      counter[a] = 0;
    }
  }
}

/// Broadcasts shapes numpy-style; error when incompatible.
Status broadcastShapes(const std::vector<std::vector<int64_t>> &shapes, std::vector<int64_t> &out);

/// Strides (in elements) to read a tensor of `dims` broadcast to `outDims`
/// (0 along broadcast dims; `dims` is right-aligned).
std::vector<int64_t> broadcastStrides(const std::vector<int64_t> &dims,
                                      const std::vector<int64_t> &outDims);

} // namespace tops
} // namespace onnxslim::rt
