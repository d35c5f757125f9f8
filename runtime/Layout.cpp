//===- runtime/Layout.cpp - Channels-last values --------------------------===//
#include "runtime/Layout.h"
#include "runtime/Simd.h"
#include "runtime/ThreadPool.h"

#include <algorithm>
#include <cstring>

namespace onnxslim::rt {
namespace {

/// The transpose of a rows x cols block of elements of E bytes (row
/// strides ld and ldDst), in tiles that stay in the L1 cache.
template <size_t E>
void transposeTiles(const uint8_t *src, int64_t ld, uint8_t *dst, int64_t ldDst, int64_t rows,
                    int64_t cols) {
  constexpr int64_t kTile = 16;
  for (int64_t r0 = 0; r0 < rows; r0 += kTile)
    for (int64_t c0 = 0; c0 < cols; c0 += kTile) {
      const int64_t r1 = std::min(rows, r0 + kTile), c1 = std::min(cols, c0 + kTile);
      for (int64_t c = c0; c < c1; ++c)
        for (int64_t r = r0; r < r1; ++r)
          std::memcpy(dst + (c * ldDst + r) * E, src + (r * ld + c) * E, E);
    }
}

} // namespace

void transposeImages(const uint8_t *src, uint8_t *dst, int64_t N, int64_t C, int64_t P,
                     size_t elemSize, bool toLast) {
  // Channels first, an image is C rows of P; channels last, P rows of C.
  const int64_t rows = toLast ? C : P, cols = toLast ? P : C;
  const int64_t image = C * P * static_cast<int64_t>(elemSize);
  parallelForIf(N > 1 && worthSplitting(N * C * P, N * C * P), N, [&](int64_t n) {
    const uint8_t *s = src + n * image;
    uint8_t *d = dst + n * image;
#ifdef ONNXSLIM_ISA_X86
    if (elemSize == 4 && simd::currentIsa().load() == simd::Isa::Avx512) {
      simd::transposeFloatsAvx512(reinterpret_cast<const float *>(s), cols, rows, cols,
                                  reinterpret_cast<float *>(d), rows);
      return;
    }
#endif
    switch (elemSize) {
    case 4: transposeTiles<4>(s, cols, d, rows, rows, cols); break;
    case 8: transposeTiles<8>(s, cols, d, rows, rows, cols); break;
    case 2: transposeTiles<2>(s, cols, d, rows, rows, cols); break;
    default:
      for (int64_t r = 0; r < rows; ++r)
        for (int64_t c = 0; c < cols; ++c)
          std::memcpy(d + (c * rows + r) * elemSize, s + (r * cols + c) * elemSize, elemSize);
    }
  });
}

RtValue channelsFirstCopy(const RtValue &v) {
  const Tensor &t = *v.tensor;
  const std::vector<int64_t> &d = t.dims();
  int64_t P = 1;
  for (size_t i = 2; i < d.size(); ++i)
    P *= d[i];
  TensorBuilder out(t.dtype(), d, TensorBuilder::Fill::Uninitialized);
  const size_t elem = t.numElements() > 0 ? t.byteSize() / static_cast<size_t>(t.numElements()) : 0;
  if (elem > 0)
    transposeImages(t.rawData(), out.data(), d[0], d[1], P, elem, false);
  return RtValue::fromTensor(out.finish());
}

TensorPtr withDims(const TensorPtr &t, std::vector<int64_t> dims) {
  return std::make_shared<const Tensor>(t->dtype(), std::move(dims), t->buffer());
}

bool channelsLastAvailable() {
#ifdef ONNXSLIM_ISA_X86
  return simd::currentIsa().load() == simd::Isa::Avx512;
#else
  return false;
#endif
}

} // namespace onnxslim::rt
