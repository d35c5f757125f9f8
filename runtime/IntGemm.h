//===- runtime/IntGemm.h - Exact 8-bit integer products ---------*- C++ -*-===//
//
// The integer product behind MatMulInteger, ConvInteger, QLinearMatMul and
// QLinearConv:
//
//   C[m][n] = sum over k of (A[m][k] - aZero[m]) * (B[k][n] - bZero[n])
//
// with 8-bit operands (each uint8 or int8) and int32 results, exact modulo
// 2^32 (what an int32 accumulator gives; the value itself whenever it fits).
// Integer sums do not depend on their order, so every micro-kernel family
// and every thread count gives the same bits.
//
// The engine turns the product into one of a signed A' and an unsigned B'
// (a uint8 A is shifted by -128, an int8 B by +128, their zero points with
// them), packs B' in panels of 32 columns whose four consecutive k share a
// 32-bit lane, and multiplies with AVX-512 VNNI's vpdpbusd where the CPU has
// it (the AVX-512 family), with plain loops the compiler vectorizes
// otherwise. The zero points enter afterwards, through the row sums of A'
// and the column sums of B':
//
//   C = A'B' - aZero'[m] * colsum(B')[n] + bZero'[n] * (K aZero'[m] - rowsum(A')[m])
//
// B comes row by row from an IntGemmRows, so a convolution hands over its
// im2col rows a piece at a time and never builds the whole matrix.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstdint>

namespace onnxslim::rt {

/// The rows of the B operand, K x N bytes.
class IntGemmRows {
public:
  virtual ~IntGemmRows() = default;
  /// Given a row k and the columns [n0, n0 + count), Result: a pointer to
  /// B[k][n0] ... B[k][n0 + count - 1], either into B itself or into
  /// `scratch` (count bytes) after writing them there.
  virtual const uint8_t *row(int64_t k, int64_t n0, int64_t count, uint8_t *scratch) const = 0;
};

/// The rows of a row-major matrix in memory.
class DenseRows final : public IntGemmRows {
public:
  DenseRows(const uint8_t *data, int64_t ld) : data_(data), ld_(ld) {}
  const uint8_t *row(int64_t k, int64_t n0, int64_t, uint8_t *) const override {
    return data_ + k * ld_ + n0;
  }

private:
  const uint8_t *data_;
  int64_t ld_;
};

/// An 8-bit operand's bytes' type and zero points (one value, or one per row
/// of A / column of B), in the operand's own type (0..255 or -128..127).
struct IntOperand {
  bool isSigned = false;
  const int32_t *zero = nullptr; ///< null: zero
  bool zeroPerIndex = false;     ///< false: zero[0] for all
};

/// Given A (M x K bytes, row stride lda), B's rows (K x N) and their types
/// and zero points, Execute: writes C (M x N int32, row stride ldc) as the
/// header says, splitting the columns across the thread pool when that pays.
void intGemm(int64_t M, int64_t N, int64_t K, const uint8_t *A, int64_t lda, const IntOperand &a,
             const IntGemmRows &B, const IntOperand &b, int32_t *C, int64_t ldc);

/// Given n floats, Execute: widens [lo, hi] to cover them (NaNs are
/// skipped), as DynamicQuantizeLinear's range.
void extendRange(const float *x, int64_t n, float &lo, float &hi);

/// Given n floats, Result: y[i] = saturate(round_half_even(x[i] / scale) +
/// zero) to 0..255, as QuantizeLinear to uint8 (scale != 0).
void quantizeToUint8(const float *x, int64_t n, float scale, float zero, uint8_t *y);

/// The micro-kernel intGemm uses now: "vnni512" or "loops".
const char *intGemmKernelName();

} // namespace onnxslim::rt
