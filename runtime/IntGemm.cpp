//===- runtime/IntGemm.cpp - Exact 8-bit integer products -----------------===//
//
// Layouts (runtime/IntGemm.h gives the arithmetic):
//  - A' is packed once per call: rows padded to a multiple of kRows, each
//    row's K bytes padded with zeros to a multiple of 4 (K4 quads);
//  - B' is packed a chunk of columns at a time, in panels of kCols columns:
//    panel[q][n][j] = B'[4q + j][n], so one 64-byte vector holds four k of
//    sixteen columns and vpdpbusd adds their four products to each column's
//    32-bit lane; rows past K and columns past N are zeros.
// A chunk's panels fit in the L2 cache; a task takes chunks, and for each
// block of kRows rows of A' walks its panels, keeping the rows in L1.
//
//===----------------------------------------------------------------------===//

#include "runtime/IntGemm.h"

#include "runtime/Simd.h"
#include "runtime/ThreadPool.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

namespace onnxslim::rt {
namespace {

constexpr int kRows = 8;  ///< rows of A' per micro-kernel tile
constexpr int kCols = 32; ///< columns of B' per panel (two AVX-512 vectors)
/// Bytes of packed B' a chunk aims at (an L2 share).
constexpr int64_t kChunkBytes = int64_t{256} << 10;

/// What the tile adds to A'B' for its rows and columns (pointers at the
/// tile's first row and column).
struct Epilogue {
  const int32_t *aZero; ///< aZero'[m] (per row)
  const int32_t *rowW;  ///< K aZero'[m] - rowsum(A')[m] (per row)
  const int32_t *colB;  ///< colsum(B')[n]
  const int32_t *bZero; ///< bZero'[n], or one value when !bZeroPerColumn
  bool bZeroPerColumn;
};

/// A tile in plain loops: rows <= kRows rows of A' (row stride lda, bytes)
/// against one packed panel of k4 quads, cols <= kCols columns written to C.
/// Unsigned arithmetic: wraps modulo 2^32 as the vector form does.
__attribute__((always_inline)) inline void tileLoopsBody(int64_t k4, const int8_t *a, int64_t lda,
                                                         int rows, const uint8_t *panel, int32_t *C,
                                                         int64_t ldc, int cols, const Epilogue &e) {
  uint32_t acc[kRows][kCols] = {};
  for (int64_t q = 0; q < k4; ++q) {
    const uint8_t *bq = panel + q * 4 * kCols;
    for (int r = 0; r < rows; ++r) {
      const int8_t *ar = a + r * lda + 4 * q;
      const int32_t s0 = ar[0], s1 = ar[1], s2 = ar[2], s3 = ar[3];
      for (int n = 0; n < kCols; ++n)
        acc[r][n] += static_cast<uint32_t>(s0 * bq[4 * n] + s1 * bq[4 * n + 1] + s2 * bq[4 * n + 2] +
                                           s3 * bq[4 * n + 3]);
    }
  }
  for (int r = 0; r < rows; ++r)
    for (int n = 0; n < cols; ++n) {
      uint32_t bz = static_cast<uint32_t>(e.bZeroPerColumn ? e.bZero[n] : e.bZero[0]);
      uint32_t v = acc[r][n] - static_cast<uint32_t>(e.aZero[r]) * static_cast<uint32_t>(e.colB[n]) +
                   bz * static_cast<uint32_t>(e.rowW[r]);
      C[r * ldc + n] = static_cast<int32_t>(v);
    }
}

void tileLoops(int64_t k4, const int8_t *a, int64_t lda, int rows, const uint8_t *panel, int32_t *C,
               int64_t ldc, int cols, const Epilogue &e) {
  tileLoopsBody(k4, a, lda, rows, panel, C, ldc, cols, e);
}

#ifdef ONNXSLIM_ISA_X86
__attribute__((target("avx2,fma"))) void tileLoopsAvx2(int64_t k4, const int8_t *a, int64_t lda,
                                                       int rows, const uint8_t *panel, int32_t *C,
                                                       int64_t ldc, int cols, const Epilogue &e) {
  tileLoopsBody(k4, a, lda, rows, panel, C, ldc, cols, e);
}

#define ONNXSLIM_VNNI __attribute__((target("avx512f,avx512bw,avx512vnni")))

/// The tile with vpdpbusd: kRows x kCols accumulators in sixteen registers.
/// Rows of A' past `rows` are the packing's zero rows (read, never stored).
ONNXSLIM_VNNI void tileVnni512(int64_t k4, const int8_t *a, int64_t lda, int rows,
                               const uint8_t *panel, int32_t *C, int64_t ldc, int cols,
                               const Epilogue &e) {
  __m512i c00 = _mm512_setzero_si512(), c01 = c00, c10 = c00, c11 = c00, c20 = c00, c21 = c00,
          c30 = c00, c31 = c00, c40 = c00, c41 = c00, c50 = c00, c51 = c00, c60 = c00, c61 = c00,
          c70 = c00, c71 = c00;
  const int8_t *a0 = a, *a1 = a + lda, *a2 = a + 2 * lda, *a3 = a + 3 * lda, *a4 = a + 4 * lda,
               *a5 = a + 5 * lda, *a6 = a + 6 * lda, *a7 = a + 7 * lda;
  for (int64_t q = 0; q < k4; ++q) {
    const __m512i b0 = _mm512_load_si512(panel + q * 4 * kCols);
    const __m512i b1 = _mm512_load_si512(panel + q * 4 * kCols + 64);
    int32_t w;
#define ONNXSLIM_ROW(R)                                                                            \
  std::memcpy(&w, a##R + 4 * q, 4);                                                                \
  {                                                                                                \
    const __m512i s = _mm512_set1_epi32(w);                                                        \
    c##R##0 = _mm512_dpbusd_epi32(c##R##0, b0, s);                                                 \
    c##R##1 = _mm512_dpbusd_epi32(c##R##1, b1, s);                                                 \
  }
    ONNXSLIM_ROW(0)
    ONNXSLIM_ROW(1)
    ONNXSLIM_ROW(2)
    ONNXSLIM_ROW(3)
    ONNXSLIM_ROW(4)
    ONNXSLIM_ROW(5)
    ONNXSLIM_ROW(6)
    ONNXSLIM_ROW(7)
#undef ONNXSLIM_ROW
  }
  const __mmask16 m0 = cols >= 16 ? __mmask16(0xFFFF) : __mmask16((1u << cols) - 1);
  const __mmask16 m1 = cols >= 32 ? __mmask16(0xFFFF)
                       : cols <= 16 ? __mmask16(0)
                                    : __mmask16((1u << (cols - 16)) - 1);
  const __m512i colB0 = _mm512_maskz_loadu_epi32(m0, e.colB), colB1 = _mm512_maskz_loadu_epi32(m1, e.colB + 16);
  const __m512i bz0 = e.bZeroPerColumn ? _mm512_maskz_loadu_epi32(m0, e.bZero) : _mm512_set1_epi32(e.bZero[0]);
  const __m512i bz1 = e.bZeroPerColumn ? _mm512_maskz_loadu_epi32(m1, e.bZero + 16) : bz0;
  const __m512i acc[kRows][2] = {{c00, c01}, {c10, c11}, {c20, c21}, {c30, c31},
                                 {c40, c41}, {c50, c51}, {c60, c61}, {c70, c71}};
  for (int r = 0; r < rows; ++r) {
    const __m512i az = _mm512_set1_epi32(e.aZero[r]), rw = _mm512_set1_epi32(e.rowW[r]);
    __m512i v0 = _mm512_sub_epi32(acc[r][0], _mm512_mullo_epi32(az, colB0));
    __m512i v1 = _mm512_sub_epi32(acc[r][1], _mm512_mullo_epi32(az, colB1));
    v0 = _mm512_add_epi32(v0, _mm512_mullo_epi32(bz0, rw));
    v1 = _mm512_add_epi32(v1, _mm512_mullo_epi32(bz1, rw));
    _mm512_mask_storeu_epi32(C + r * ldc, m0, v0);
    _mm512_mask_storeu_epi32(C + r * ldc + 16, m1, v1);
  }
}

bool cpuHasVnni512() {
  static const bool has = [] {
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
           __builtin_cpu_supports("avx512vnni");
  }();
  return has;
}
#endif

using TileFn = void (*)(int64_t, const int8_t *, int64_t, int, const uint8_t *, int32_t *, int64_t,
                        int, const Epilogue &);

/// The tile of the current family (runtime/Simd.h): VNNI within AVX-512
/// when the CPU has it.
TileFn currentTile(const char **name = nullptr) {
  TileFn fn = tileLoops;
  const char *n = "loops";
#ifdef ONNXSLIM_ISA_X86
  const simd::Isa isa = simd::currentIsa().load(std::memory_order_relaxed);
  if (isa == simd::Isa::Avx512 && cpuHasVnni512()) {
    fn = tileVnni512;
    n = "vnni512";
  } else if (isa != simd::Isa::Baseline) {
    fn = tileLoopsAvx2;
    n = "loops-avx2";
  }
#endif
  if (name)
    *name = n;
  return fn;
}

/// Writes four rows' bytes r[0..3][c] for c in [0, n) (n <= kCols) as the
/// panel's quads dst[4 c + j] = r[j][c] ^ mask byte j.
void interleave4(const uint8_t *const r[4], int64_t c0, int64_t n, uint32_t mask, uint8_t *dst) {
  int64_t c = 0;
#ifdef __SSE2__
  const __m128i mv = _mm_set1_epi32(static_cast<int>(mask));
  for (; c + 16 <= n; c += 16) {
    const __m128i a = _mm_loadu_si128(reinterpret_cast<const __m128i *>(r[0] + c0 + c));
    const __m128i b = _mm_loadu_si128(reinterpret_cast<const __m128i *>(r[1] + c0 + c));
    const __m128i e = _mm_loadu_si128(reinterpret_cast<const __m128i *>(r[2] + c0 + c));
    const __m128i f = _mm_loadu_si128(reinterpret_cast<const __m128i *>(r[3] + c0 + c));
    const __m128i ab0 = _mm_unpacklo_epi8(a, b), ab1 = _mm_unpackhi_epi8(a, b);
    const __m128i ef0 = _mm_unpacklo_epi8(e, f), ef1 = _mm_unpackhi_epi8(e, f);
    __m128i *out = reinterpret_cast<__m128i *>(dst + 4 * c);
    _mm_storeu_si128(out, _mm_xor_si128(_mm_unpacklo_epi16(ab0, ef0), mv));
    _mm_storeu_si128(out + 1, _mm_xor_si128(_mm_unpackhi_epi16(ab0, ef0), mv));
    _mm_storeu_si128(out + 2, _mm_xor_si128(_mm_unpacklo_epi16(ab1, ef1), mv));
    _mm_storeu_si128(out + 3, _mm_xor_si128(_mm_unpackhi_epi16(ab1, ef1), mv));
  }
#endif
  for (; c < n; ++c) {
    const uint32_t v = (uint32_t{r[0][c0 + c]} | uint32_t{r[1][c0 + c]} << 8 |
                        uint32_t{r[2][c0 + c]} << 16 | uint32_t{r[3][c0 + c]} << 24) ^
                       mask;
    std::memcpy(dst + 4 * c, &v, 4);
  }
}

/// Adds each column's packed bytes over the panel's k4 quads to colSum[0..kCols).
void columnSumsLoops(const uint8_t *panel, int64_t k4, int32_t *colSum) {
  for (int64_t q = 0; q < k4; ++q)
    for (int n = 0; n < kCols; ++n) {
      const uint8_t *b = panel + q * 4 * kCols + 4 * n;
      colSum[n] += b[0] + b[1] + b[2] + b[3];
    }
}

#ifdef ONNXSLIM_ISA_X86
ONNXSLIM_VNNI void columnSumsVnni512(const uint8_t *panel, int64_t k4, int32_t *colSum) {
  const __m512i ones = _mm512_set1_epi8(1);
  __m512i s0 = _mm512_loadu_si512(colSum), s1 = _mm512_loadu_si512(colSum + 16);
  for (int64_t q = 0; q < k4; ++q) {
    s0 = _mm512_dpbusd_epi32(s0, _mm512_load_si512(panel + q * 4 * kCols), ones);
    s1 = _mm512_dpbusd_epi32(s1, _mm512_load_si512(panel + q * 4 * kCols + 64), ones);
  }
  _mm512_storeu_si512(colSum, s0);
  _mm512_storeu_si512(colSum + 16, s1);
}
#endif

/// Packs B' columns [n0, n0 + count) of the K rows into panels (`out`,
/// zero-filled past K and count) and writes their column sums (colSum has
/// room for whole panels).
void packChunk(const IntGemmRows &B, bool flip, bool vnni, int64_t K, int64_t k4, int64_t n0,
               int64_t count, uint8_t *out, int32_t *colSum, std::vector<uint8_t> &scratch) {
  const int64_t panels = (count + kCols - 1) / kCols;
  const int64_t panelBytes = k4 * 4 * kCols;
  // The last panel's columns past `count` stay zero.
  if (count % kCols)
    std::memset(out + (panels - 1) * panelBytes, 0, static_cast<size_t>(panelBytes));
  std::fill(colSum, colSum + panels * kCols, 0);
  scratch.resize(static_cast<size_t>(5 * count));
  uint8_t *zeros = scratch.data() + 4 * count;
  std::memset(zeros, 0, static_cast<size_t>(count));
  for (int64_t q = 0; q < k4; ++q) {
    const uint8_t *r[4];
    uint32_t mask = 0;
    for (int j = 0; j < 4; ++j) {
      const int64_t k = 4 * q + j;
      r[j] = k < K ? B.row(k, n0, count, scratch.data() + j * count) : zeros;
      if (flip && k < K)
        mask |= uint32_t{0x80} << (8 * j);
    }
    for (int64_t p = 0; p < panels; ++p)
      interleave4(r, p * kCols, std::min<int64_t>(kCols, count - p * kCols), mask,
                  out + p * panelBytes + q * 4 * kCols);
  }
  for (int64_t p = 0; p < panels; ++p) {
#ifdef ONNXSLIM_ISA_X86
    if (vnni) {
      columnSumsVnni512(out + p * panelBytes, k4, colSum + p * kCols);
      continue;
    }
#endif
    (void)vnni;
    columnSumsLoops(out + p * panelBytes, k4, colSum + p * kCols);
  }
}

#ifdef ONNXSLIM_ISA_X86
__attribute__((target("avx512f"))) void extendRangeAvx512(const float *x, int64_t n, float &lo,
                                                          float &hi) {
  __m512 l = _mm512_set1_ps(lo), h = _mm512_set1_ps(hi);
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    const __m512 v = _mm512_loadu_ps(x + i);
    l = _mm512_maskz_min_ps(0xFFFF, v, l); // a NaN in v keeps l
    h = _mm512_maskz_max_ps(0xFFFF, v, h);
  }
  // (The maskz forms throughout: the plain ones start from an undefined
  // vector that GCC 12 reports as maybe uninitialized.)
  alignas(64) float ls[16], hs[16];
  _mm512_store_ps(ls, l);
  _mm512_store_ps(hs, h);
  for (int j = 0; j < 16; ++j) {
    lo = std::min(lo, ls[j]);
    hi = std::max(hi, hs[j]);
  }
  for (; i < n; ++i) {
    lo = std::min(lo, x[i]);
    hi = std::max(hi, x[i]);
  }
}

__attribute__((target("avx512f"))) void quantizeToUint8Avx512(const float *x, int64_t n,
                                                                       float scale, float zero,
                                                                       uint8_t *y) {
  const __m512 s = _mm512_set1_ps(scale), z = _mm512_set1_ps(zero);
  const __m512 lo = _mm512_setzero_ps(), hi = _mm512_set1_ps(255.0f);
  for (int64_t i = 0; i < n; i += 16) {
    const __mmask16 m = n - i >= 16 ? __mmask16(0xFFFF) : __mmask16((1u << (n - i)) - 1);
    __m512 v = _mm512_div_ps(_mm512_maskz_loadu_ps(m, x + i), s);
    v = _mm512_maskz_roundscale_ps(0xFFFF, v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    v = _mm512_maskz_min_ps(0xFFFF, _mm512_maskz_max_ps(0xFFFF, _mm512_add_ps(v, z), lo), hi);
    _mm512_mask_cvtepi32_storeu_epi8(y + i, m, _mm512_maskz_cvtps_epi32(0xFFFF, v));
  }
}
#endif

} // namespace

void extendRange(const float *x, int64_t n, float &lo, float &hi) {
#ifdef ONNXSLIM_ISA_X86
  if (simd::currentIsa().load(std::memory_order_relaxed) == simd::Isa::Avx512)
    return extendRangeAvx512(x, n, lo, hi);
#endif
  for (int64_t i = 0; i < n; ++i) {
    lo = std::min(lo, x[i]);
    hi = std::max(hi, x[i]);
  }
}

void quantizeToUint8(const float *x, int64_t n, float scale, float zero, uint8_t *y) {
#ifdef ONNXSLIM_ISA_X86
  if (simd::currentIsa().load(std::memory_order_relaxed) == simd::Isa::Avx512)
    return quantizeToUint8Avx512(x, n, scale, zero, y);
#endif
  // The rounded quotient is an integer; adding the zero point is exact
  // below 2^24 and saturates either way above.
  for (int64_t i = 0; i < n; ++i)
    y[i] = static_cast<uint8_t>(std::clamp(std::nearbyint(x[i] / scale) + zero, 0.0f, 255.0f));
}

const char *intGemmKernelName() {
  const char *name = nullptr;
  currentTile(&name);
  return name;
}

void intGemm(int64_t M, int64_t N, int64_t K, const uint8_t *A, int64_t lda, const IntOperand &a,
             const IntGemmRows &B, const IntOperand &b, int32_t *C, int64_t ldc) {
  if (M <= 0 || N <= 0)
    return;
  const int64_t k4 = (K + 3) / 4, rowBytes = k4 * 4;
  const int64_t mPad = (M + kRows - 1) / kRows * kRows;
  // A' (signed) with its zero points and row terms.
  std::vector<int8_t> ap(static_cast<size_t>(mPad * rowBytes), 0);
  std::vector<int32_t> aZero(static_cast<size_t>(M)), rowW(static_cast<size_t>(M));
  const int32_t aShift = a.isSigned ? 0 : 128;
  for (int64_t m = 0; m < M; ++m) {
    const uint8_t *src = A + m * lda;
    int8_t *dst = ap.data() + m * rowBytes;
    uint32_t sum = 0;
    for (int64_t k = 0; k < K; ++k) {
      const int32_t v = (a.isSigned ? static_cast<int8_t>(src[k]) : src[k]) - aShift;
      dst[k] = static_cast<int8_t>(v);
      sum += static_cast<uint32_t>(v);
    }
    const int32_t z = (a.zero ? a.zero[a.zeroPerIndex ? m : 0] : 0) - aShift;
    aZero[static_cast<size_t>(m)] = z;
    rowW[static_cast<size_t>(m)] =
        static_cast<int32_t>(static_cast<uint32_t>(K) * static_cast<uint32_t>(z) - sum);
  }
  // B' (unsigned): an int8 B moves up by 128, and its zero points with it.
  const int32_t bShift = b.isSigned ? 128 : 0;
  std::vector<int32_t> bZero;
  if (b.zero && b.zeroPerIndex)
    for (int64_t n = 0; n < N; ++n)
      bZero.push_back(b.zero[n] + bShift);
  else
    bZero.push_back((b.zero ? b.zero[0] : 0) + bShift);
  const bool bPerColumn = bZero.size() > 1;

  // Chunks of columns: about kChunkBytes of packed B' each, and at least two
  // per thread when the pool splits the product.
  int64_t chunk = std::clamp<int64_t>(kChunkBytes / std::max<int64_t>(rowBytes, 1) / kCols * kCols,
                                      kCols, 64 * kCols);
  const bool split = worthSplitting(M * N * K, M * K + K * N + M * N);
  if (split) {
    const int64_t perThread = (N + 2 * threadCount() - 1) / (2 * threadCount());
    chunk = std::min(chunk, std::max<int64_t>(kCols, (perThread + kCols - 1) / kCols * kCols));
  }
  const int64_t chunks = (N + chunk - 1) / chunk;
  const char *kernel = nullptr;
  const TileFn tile = currentTile(&kernel);
  const bool vnni = std::strcmp(kernel, "vnni512") == 0;
  parallelForIf(split, chunks, [&](int64_t t) {
    thread_local simd::AlignedVector<uint8_t> packed;
    thread_local std::vector<int32_t> colSum;
    thread_local std::vector<uint8_t> scratch;
    const int64_t n0 = t * chunk, count = std::min(chunk, N - n0);
    const int64_t panels = (count + kCols - 1) / kCols, panelBytes = k4 * 4 * kCols;
    packed.resize(static_cast<size_t>(panels * panelBytes));
    colSum.resize(static_cast<size_t>(panels * kCols));
    packChunk(B, b.isSigned, vnni, K, k4, n0, count, packed.data(), colSum.data(), scratch);
    for (int64_t m0 = 0; m0 < M; m0 += kRows) {
      const int rows = static_cast<int>(std::min<int64_t>(kRows, M - m0));
      for (int64_t p = 0; p < panels; ++p) {
        const int64_t c0 = p * kCols;
        const int cols = static_cast<int>(std::min<int64_t>(kCols, count - c0));
        const Epilogue e{aZero.data() + m0, rowW.data() + m0, colSum.data() + c0,
                         bPerColumn ? bZero.data() + n0 + c0 : bZero.data(), bPerColumn};
        tile(k4, ap.data() + m0 * rowBytes, rowBytes, rows, packed.data() + p * panelBytes,
             C + m0 * ldc + n0 + c0, ldc, cols, e);
      }
    }
  });
}

} // namespace onnxslim::rt
