//===- runtime/Float16.h - float16 / bfloat16 conversions ------*- C++ -*-===//
//
// IEEE half precision (float16) and bfloat16 element types for the runtime.
// Both are stored as 16 raw bits; kernels compute in float and round back
// with round-to-nearest-even, as ONNX Runtime and numpy do. `Half` and
// `BFloat16` are distinct types (not uint16_t) so that templates dispatched
// on the element type can tell them apart from uint16.
//
// Header-only, standard library only; used by every kernel family.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <bit>
#include <cstddef>
#include <cstdint>

namespace onnxslim::rt {

/// float32 -> float16 bits, round to nearest even; overflow gives +-inf, NaN
/// stays a (quiet) NaN, tiny values become subnormals or signed zero.
inline uint16_t floatToHalfBits(float f) {
  uint32_t x = std::bit_cast<uint32_t>(f);
  uint32_t sign = (x >> 16) & 0x8000u;
  uint32_t absx = x & 0x7fffffffu;
  if (absx >= 0x7f800000u) // inf or NaN
    return static_cast<uint16_t>(sign | (absx > 0x7f800000u ? 0x7e00u | ((absx >> 13) & 0x3ffu)
                                                            : 0x7c00u));
  if (absx >= 0x47800000u) // >= 65536: certainly beyond the largest half
    return static_cast<uint16_t>(sign | 0x7c00u);
  if (absx < 0x38800000u) { // below 2^-14: a half subnormal or zero
    if (absx < 0x33000000u) // <= 2^-25 rounds to zero (2^-25 itself ties to even 0)
      return static_cast<uint16_t>(sign);
    uint32_t e = absx >> 23;
    uint32_t mant = (absx & 0x7fffffu) | 0x800000u;
    uint32_t shift = 126 - e; // 14..24
    uint32_t q = mant >> shift;
    uint32_t rem = mant & ((1u << shift) - 1);
    uint32_t halfway = 1u << (shift - 1);
    if (rem > halfway || (rem == halfway && (q & 1u)))
      ++q;
    return static_cast<uint16_t>(sign | q);
  }
  uint32_t h = (absx - 0x38000000u) >> 13; // rebias exponent 127 -> 15
  uint32_t rem = absx & 0x1fffu;
  if (rem > 0x1000u || (rem == 0x1000u && (h & 1u)))
    ++h; // a carry into the exponent is the correct rounding (up to inf)
  return static_cast<uint16_t>(sign | h);
}

/// float16 bits -> float32 (exact).
inline float halfBitsToFloat(uint16_t h) {
  uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  uint32_t exp = (h >> 10) & 0x1fu;
  uint32_t mant = h & 0x3ffu;
  if (exp == 0x1f)
    return std::bit_cast<float>(sign | 0x7f800000u | (mant << 13));
  if (exp == 0) {
    float v = static_cast<float>(mant) * 5.9604644775390625e-08f; // mant * 2^-24, exact
    return sign ? -v : v;
  }
  return std::bit_cast<float>(sign | ((exp + 112) << 23) | (mant << 13));
}

/// float32 -> bfloat16 bits, round to nearest even; NaN stays a quiet NaN.
inline uint16_t floatToBFloat16Bits(float f) {
  uint32_t x = std::bit_cast<uint32_t>(f);
  if ((x & 0x7fffffffu) > 0x7f800000u)
    return static_cast<uint16_t>((x >> 16) | 0x40u);
  x += 0x7fffu + ((x >> 16) & 1u);
  return static_cast<uint16_t>(x >> 16);
}

/// bfloat16 bits -> float32 (exact).
inline float bfloat16BitsToFloat(uint16_t b) {
  return std::bit_cast<float>(static_cast<uint32_t>(b) << 16);
}

/// float64 -> float16 bits with a single rounding (to nearest even): the
/// double is first rounded to float with round-to-odd, which makes the
/// second rounding exact.
inline uint16_t doubleToHalfBits(double d) {
  float f = static_cast<float>(d);
  if (static_cast<double>(f) != d && d == d && (std::bit_cast<uint32_t>(f) & 1u) == 0 &&
      (std::bit_cast<uint32_t>(f) & 0x7fffffffu) < 0x7f800000u) {
    uint32_t bits = std::bit_cast<uint32_t>(f);
    // Step one ulp toward d: away from zero when |d| > |f|, else toward zero.
    double fd = static_cast<double>(f);
    bool awayFromZero = (d < 0 ? -d : d) > (fd < 0 ? -fd : fd);
    bits = awayFromZero ? bits + 1 : bits - 1;
    f = std::bit_cast<float>(bits);
  }
  return floatToHalfBits(f);
}

/// float64 -> bfloat16 bits with a single rounding (see doubleToHalfBits).
inline uint16_t doubleToBFloat16Bits(double d) {
  float f = static_cast<float>(d);
  if (static_cast<double>(f) != d && d == d && (std::bit_cast<uint32_t>(f) & 1u) == 0 &&
      (std::bit_cast<uint32_t>(f) & 0x7fffffffu) < 0x7f800000u) {
    uint32_t bits = std::bit_cast<uint32_t>(f);
    double fd = static_cast<double>(f);
    bool awayFromZero = (d < 0 ? -d : d) > (fd < 0 ? -fd : fd);
    bits = awayFromZero ? bits + 1 : bits - 1;
    f = std::bit_cast<float>(bits);
  }
  return floatToBFloat16Bits(f);
}

/// An IEEE float16 element (raw bits).
struct Half {
  uint16_t bits = 0;
  static Half fromFloat(float f) { return Half{floatToHalfBits(f)}; }
  static Half fromBits(uint16_t b) { return Half{b}; }
  float toFloat() const { return halfBitsToFloat(bits); }
};

/// A bfloat16 element (raw bits: the high half of a float32).
struct BFloat16 {
  uint16_t bits = 0;
  static BFloat16 fromFloat(float f) { return BFloat16{floatToBFloat16Bits(f)}; }
  static BFloat16 fromBits(uint16_t b) { return BFloat16{b}; }
  float toFloat() const { return bfloat16BitsToFloat(bits); }
};

static_assert(sizeof(Half) == 2 && sizeof(BFloat16) == 2);

/// Bulk conversions (n elements; ranges must not overlap).
inline void halfToFloat(const Half *in, float *out, size_t n) {
  for (size_t i = 0; i < n; ++i)
    out[i] = in[i].toFloat();
}
inline void floatToHalf(const float *in, Half *out, size_t n) {
  for (size_t i = 0; i < n; ++i)
    out[i] = Half::fromFloat(in[i]);
}
inline void bfloat16ToFloat(const BFloat16 *in, float *out, size_t n) {
  for (size_t i = 0; i < n; ++i)
    out[i] = in[i].toFloat();
}
inline void floatToBFloat16(const float *in, BFloat16 *out, size_t n) {
  for (size_t i = 0; i < n; ++i)
    out[i] = BFloat16::fromFloat(in[i]);
}

} // namespace onnxslim::rt
