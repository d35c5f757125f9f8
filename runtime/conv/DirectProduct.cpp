//===- runtime/conv/DirectProduct.cpp - Convolution as an implicit GEMM --===//
//
// The direct convolution product (convProductDirect in
// runtime/conv/Kernels.h): a GEMM of the filters, packed in the GEMM
// engine's row panels (runtime/Gemm.h, packRowPanels), by a virtual column
// matrix whose row k is the caller's zero-padded input planes read at tap
// k's offset, so a convolution at unit stride needs no column matrix at
// all. Its register tiles are the GEMM micro-kernels' (6 x 2 batches on
// baseline xsimd, 6 x 16 floats on AVX2 + FMA, 12 x 32 on AVX-512F), each
// row of B read as two unaligned vectors per k at that row's offset; the
// family follows the GEMM engine's (runtime/Simd.h). It runs on the
// calling thread: the convolutions cut their outputs into bands or pieces,
// each a task (runtime/conv/Direct.cpp, Winograd.cpp).
//
//===----------------------------------------------------------------------===//
#include "runtime/Gemm.h"
#include "runtime/Simd.h"
#include "runtime/conv/ClampSimd.h"
#include "runtime/conv/Kernels.h"

#include <algorithm>
#include <cstring>
#include <utility>

namespace onnxslim::rt {
namespace {

using simd::AlignedVector;
using simd::Batch;
using simd::currentIsa;
using simd::Isa;

/// Computes the rows x NR tile of a direct convolution product made of two
/// halves of NR/2 virtual columns: the first starts at b (row k at
/// b + off[k]), the second at b + bStep. Multiplies by the A panel `a`
/// (K x MR, packRowPanels' layout), adds bias[i] to row i when given, clamps when
/// asked, and stores the first n0 columns of the first half at
/// dst + i * ldd and the first n1 of the second at dst + dstStep + i * ldd
/// (with `accumulate`, adding them to what is there first). All NR/2
/// columns of a half are read.
using DirectKernelFn = void (*)(int64_t K, const float *a, const float *b, int64_t bStep,
                                const int64_t *off, bool accumulate, const float *bias,
                                const StoreClamp *clamp, float *dst, int64_t dstStep,
                                int64_t ldd, int64_t rows, int64_t n0, int64_t n1);

/// The direct kernel of a family with its tile.
struct DirectEngine {
  int64_t MR, NR;
  DirectKernelFn kernel;
};

/// Calls K<ROWS>::run for rows in [1, MAX] (as byRows does for the GEMM).
template <int MAX, template <int> class K>
void directByRows(int64_t kc, const float *a, const float *b, int64_t bStep, const int64_t *off,
                  bool accumulate, const float *bias, const StoreClamp *clamp, float *dst,
                  int64_t dstStep, int64_t ldd, int64_t rows, int64_t n0, int64_t n1) {
  [&]<int... I>(std::integer_sequence<int, I...>) {
    ((rows == I + 1 ? (K<I + 1>::run(kc, a, b, bStep, off, accumulate, bias, clamp, dst,
                                      dstStep, ldd, n0, n1),
                       true)
                    : false) ||
     ...);
  }(std::make_integer_sequence<int, MAX>{});
}

template <int ROWS> struct DirectBaseline {
  static void run(int64_t K, const float *a, const float *b, int64_t bStep, const int64_t *off,
                  bool accumulate, const float *bias, const StoreClamp *clamp, float *dst,
                  int64_t dstStep, int64_t ldd, int64_t n0, int64_t n1) {
    using B = Batch<float>;
    constexpr int64_t W = static_cast<int64_t>(B::size), MR = 6;
    B c[2][ROWS];
    for (int i = 0; i < ROWS; ++i)
      c[0][i] = c[1][i] = B(0.0f);
    for (int64_t k = 0; k < K; ++k, a += MR) {
      const float *bk = b + off[k];
      const B b0 = B::load_unaligned(bk), b1 = B::load_unaligned(bk + bStep);
#pragma GCC unroll 6
      for (int i = 0; i < ROWS; ++i) {
        const B ai(a[i]);
        c[0][i] = xsimd::fma(ai, b0, c[0][i]);
        c[1][i] = xsimd::fma(ai, b1, c[1][i]);
      }
    }
    const int64_t n[2] = {n0, n1};
#pragma GCC unroll 2
    for (int h = 0; h < 2; ++h) {
      if (n[h] == 0)
        continue;
#pragma GCC unroll 6
      for (int i = 0; i < ROWS; ++i) {
        float *d = dst + h * dstStep + i * ldd;
        alignas(64) float v[W];
        if (n[h] == W) {
          B x = c[h][i];
          if (accumulate)
            x = B::load_unaligned(d) + x;
          if (bias)
            x += B(bias[i]);
          clampBatch(x, clamp).store_unaligned(d);
          continue;
        }
        c[h][i].store_aligned(v);
        for (int64_t j = 0; j < n[h]; ++j) {
          float x = accumulate ? d[j] + v[j] : v[j];
          if (bias)
            x += bias[i];
          d[j] = clampScalar(x, clamp);
        }
      }
    }
  }
};

#ifdef ONNXSLIM_ISA_X86

template <int ROWS>
__attribute__((target("avx2,fma"))) void
directAvx2(int64_t K, const float *a, const float *b, int64_t bStep, const int64_t *off,
           bool accumulate, const float *bias, const StoreClamp *clamp, float *dst,
           int64_t dstStep, int64_t ldd, int64_t n0, int64_t n1) {
  __m256 c[2][ROWS];
#pragma GCC unroll 6
  for (int i = 0; i < ROWS; ++i)
    c[0][i] = c[1][i] = _mm256_setzero_ps();
  for (int64_t k = 0; k < K; ++k, a += 6) {
    const float *bk = b + off[k];
    const __m256 b0 = _mm256_loadu_ps(bk), b1 = _mm256_loadu_ps(bk + bStep);
#pragma GCC unroll 6
    for (int i = 0; i < ROWS; ++i) {
      const __m256 ai = _mm256_broadcast_ss(a + i);
      c[0][i] = _mm256_fmadd_ps(ai, b0, c[0][i]);
      c[1][i] = _mm256_fmadd_ps(ai, b1, c[1][i]);
    }
  }
  const int64_t n[2] = {n0, n1};
#pragma GCC unroll 2
  for (int h = 0; h < 2; ++h) {
    if (n[h] == 0)
      continue;
    // Lanes below n[h] (all of them for a full half).
    const __m256i mask = _mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int>(n[h])),
                                            _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
    const bool full = n[h] == 8;
#pragma GCC unroll 6
    for (int i = 0; i < ROWS; ++i) {
      float *d = dst + h * dstStep + i * ldd;
      __m256 x = c[h][i];
      if (accumulate)
        x = _mm256_add_ps(full ? _mm256_loadu_ps(d) : _mm256_maskload_ps(d, mask), x);
      if (bias)
        x = _mm256_add_ps(x, _mm256_set1_ps(bias[i]));
      x = clampAvx2(x, clamp);
      if (full)
        _mm256_storeu_ps(d, x);
      else
        _mm256_maskstore_ps(d, mask, x);
    }
  }
}

/// With TWO false, the tile's second half is empty (n1 == 0: a plane's
/// last columns short of a half tile pair): only the first is computed.
template <int ROWS, bool TWO>
__attribute__((target("avx512f"))) void
directAvx512(int64_t K, const float *a, const float *b, int64_t bStep, const int64_t *off,
             bool accumulate, const float *bias, const StoreClamp *clamp, float *dst,
             int64_t dstStep, int64_t ldd, int64_t n0, int64_t n1) {
  __m512 c[2][ROWS];
#pragma GCC unroll 12
  for (int i = 0; i < ROWS; ++i)
    c[0][i] = c[1][i] = _mm512_setzero_ps();
  for (int64_t k = 0; k < K; ++k, a += 12) {
    const float *bk = b + off[k];
    const __m512 b0 = _mm512_loadu_ps(bk);
    const __m512 b1 = TWO ? _mm512_loadu_ps(bk + bStep) : b0;
#pragma GCC unroll 12
    for (int i = 0; i < ROWS; ++i) {
      const __m512 ai = _mm512_set1_ps(a[i]);
      c[0][i] = _mm512_fmadd_ps(ai, b0, c[0][i]);
      if constexpr (TWO)
        c[1][i] = _mm512_fmadd_ps(ai, b1, c[1][i]);
    }
  }
  const int64_t n[2] = {n0, n1};
  // Unrolled, so that c[h] is a register, not a stack array indexed at run time.
#pragma GCC unroll 2
  for (int h = 0; h < (TWO ? 2 : 1); ++h) {
    if (n[h] == 0)
      continue;
    const __mmask16 mask = static_cast<__mmask16>((1u << n[h]) - 1u);
    const bool full = n[h] == 16;
#pragma GCC unroll 12
    for (int i = 0; i < ROWS; ++i) {
      float *d = dst + h * dstStep + i * ldd;
      __m512 x = c[h][i];
      if (accumulate)
        x = _mm512_add_ps(full ? _mm512_loadu_ps(d) : _mm512_maskz_loadu_ps(mask, d), x);
      if (bias)
        x = _mm512_add_ps(x, _mm512_set1_ps(bias[i]));
      x = clampAvx512(x, clamp);
      if (full)
        _mm512_storeu_ps(d, x);
      else
        _mm512_mask_storeu_ps(d, mask, x);
    }
  }
}

template <int ROWS> struct DirectAvx2 {
  static void run(int64_t K, const float *a, const float *b, int64_t bStep, const int64_t *off,
                  bool accumulate, const float *bias, const StoreClamp *clamp, float *dst,
                  int64_t dstStep, int64_t ldd, int64_t n0, int64_t n1) {
    directAvx2<ROWS>(K, a, b, bStep, off, accumulate, bias, clamp, dst, dstStep, ldd, n0, n1);
  }
};
template <int ROWS> struct DirectAvx512 {
  static void run(int64_t K, const float *a, const float *b, int64_t bStep, const int64_t *off,
                  bool accumulate, const float *bias, const StoreClamp *clamp, float *dst,
                  int64_t dstStep, int64_t ldd, int64_t n0, int64_t n1) {
    if (n1 == 0)
      directAvx512<ROWS, false>(K, a, b, bStep, off, accumulate, bias, clamp, dst, dstStep, ldd,
                                n0, n1);
    else
      directAvx512<ROWS, true>(K, a, b, bStep, off, accumulate, bias, clamp, dst, dstStep, ldd,
                               n0, n1);
  }
};

#endif // ONNXSLIM_ISA_X86

/// The direct kernel of the active family.
DirectEngine directEngine() {
#ifdef ONNXSLIM_ISA_X86
  switch (currentIsa().load()) {
  case Isa::Avx512:
    return {12, 32, directByRows<12, DirectAvx512>};
  case Isa::Avx2:
    return {6, 16, directByRows<6, DirectAvx2>};
  case Isa::Baseline:
    break;
  }
#endif
  return {6, 2 * static_cast<int64_t>(Batch<float>::size), directByRows<6, DirectBaseline>};
}

/// Tiles of a block: each A panel slice is used for all of them in a row.
constexpr int64_t kDirectTileBlock = 8;

/// Result elements of a block at most (they stay in L2 across its slices).
constexpr int64_t kDirectBlockElements = int64_t{1} << 15;

/// Deepest K slice of the direct product. Each slice after the first
/// reloads and stores the block's results again, so slices are long: the A
/// panel then streams from L2 rather than staying in L1, which the
/// kernel's 24 multiply-adds per step hide.
constexpr int64_t kDirectSlice = 2048;

} // namespace

int64_t directColumnTile() { return directEngine().NR; }

int64_t directSliceCount(int64_t K, int64_t count) {
  return std::max((K + kDirectSlice - 1) / kDirectSlice, count);
}

int64_t directPanels(int64_t M) {
  const int64_t MR = directEngine().MR;
  return (M + MR - 1) / MR;
}

int64_t directPanelStart(int64_t M, int64_t p) { return M * p / directPanels(M); }

int64_t directFilterElements(int64_t M, int64_t K) {
  return directPanels(M) * directEngine().MR * K;
}

void packDirectFilters(int64_t M, int64_t K, const float *A, int64_t lda, float *packed) {
  const int64_t MR = directEngine().MR, panels = directPanels(M);
  for (int64_t p = 0; p < panels; ++p) {
    const int64_t m0 = directPanelStart(M, p), m1 = directPanelStart(M, p + 1);
    packRowPanels(m1 - m0, K, A + m0 * lda, lda, MR, packed + p * MR * K);
  }
}

void convProductDirect(int64_t M, int64_t K, const float *packed, const float *B,
                       const int64_t *offsets, int64_t rows, int64_t pitch, int64_t width,
                       float *C, int64_t ldc, const float *rowBias, const StoreClamp *clamp,
                       int64_t panelBegin, int64_t panelEnd, DirectSlices range) {
  if (M <= 0 || K <= 0 || rows <= 0 || width <= 0)
    return;
  const DirectEngine e = directEngine();
  const int64_t MR = e.MR, NR = e.NR, W = NR / 2;
  const int64_t allPanels = directPanels(M);
  if (panelEnd < 0)
    panelEnd = allPanels;
  const int64_t panels = panelEnd - panelBegin;
  // First row of panel p (directPanelStart, without its engine lookup).
  auto panelStart = [&](int64_t p) { return M * p / allPanels; };
  if (panels <= 0)
    return;
  const int64_t columns = (rows - 1) * pitch + width;
  // Two ways to cut the outputs into tiles of two halves of W columns:
  //  - by halves: each row is cut into halves from its start (the last one
  //    short when W does not divide the width), and a tile is two
  //    consecutive halves, in the same row or the next, so no tile computes
  //    the padding columns or crosses a row end;
  //  - through the padding: tiles NR virtual columns apart, the padding
  //    columns computed and dropped; a tile that crosses a row end is
  //    summed aside in `block` and its outputs copied into C after its
  //    last K slice.
  // Whichever computes fewer columns per row: by halves when the row's
  // last half is nearly full.
  const int64_t rowHalves = (width + W - 1) / W;
  const bool byHalves = rowHalves * W <= pitch;
  const int64_t halves = rows * rowHalves;
  const int64_t tiles = byHalves ? (halves + 1) / 2 : (columns + NR - 1) / NR;
  // K in balanced slices of at most kDirectSlice: an A panel's slice and
  // the block's B runs for it stay in L2. At least as many as the caller
  // asks, of which the call sums [kBegin, kEnd).
  const int64_t slices = directSliceCount(K, range.count);
  const int64_t KC = (K + slices - 1) / slices;
  const int64_t kBegin = std::min(K, range.begin * KC);
  const int64_t kEnd = range.end < 0 ? K : std::min(K, range.end * KC);
  if (kBegin >= kEnd)
    return;
  // Columns per block: up to kDirectTileBlock tiles, fewer for tall M.
  const int64_t blockTiles =
      std::clamp<int64_t>(kDirectBlockElements / (panels * MR * NR), 1, kDirectTileBlock);
  const int64_t ldd = blockTiles * NR;
  thread_local AlignedVector<float> block;
  if (!byHalves && block.size() < static_cast<size_t>(panels * MR * ldd))
    block.resize(static_cast<size_t>(panels * MR * ldd));
  // Where tile t reads and stores: its halves' first virtual columns and
  // output positions (or, aside, its place in `block`), and the columns of
  // each half stored.
  struct Place {
    int64_t column, bStep, output, outStep, n0, n1;
    bool aside;
  };
  auto half = [&](int64_t h) {
    const int64_t y = h / rowHalves, x = h % rowHalves * W;
    return Place{y * pitch + x, 0, y * width + x, 0, std::min(W, width - x), 0, false};
  };
  auto place = [&](int64_t t) {
    if (byHalves) {
      const Place h0 = half(2 * t);
      // A missing second half reads the first's columns and stores none.
      const Place h1 =
          2 * t + 1 < halves ? half(2 * t + 1) : Place{h0.column, 0, h0.output, 0, 0, 0, false};
      return Place{h0.column, h1.column - h0.column, h0.output, h1.output - h0.output, h0.n0,
                   h1.n0, false};
    }
    const int64_t v = t * NR, y = v / pitch, x = v % pitch;
    return Place{v, W, y * width + x, W, W, W, x + NR > width};
  };
  // Block by block, K slice by slice, panel by panel: each A panel slice
  // serves the block's tiles in a row. Every output's sum is the same
  // wherever its tile falls.
  for (int64_t tb = 0; tb < tiles; tb += blockTiles) {
    const int64_t te = std::min(tiles, tb + blockTiles);
    for (int64_t pc = kBegin; pc < kEnd; pc += KC) {
      const int64_t kc = std::min(KC, kEnd - pc);
      const bool last = pc + kc == K;
      for (int64_t p = panelBegin; p < panelEnd; ++p) {
        const int64_t m0 = panelStart(p), panelRows = panelStart(p + 1) - m0;
        const float *bias = last && rowBias ? rowBias + m0 : nullptr;
        for (int64_t t = tb; t < te; ++t) {
          const Place pl = place(t);
          float *dst = pl.aside ? block.data() + (p - panelBegin) * MR * ldd + (t - tb) * NR
                                : C + m0 * ldc + pl.output;
          e.kernel(kc, packed + p * MR * K + pc * MR, B + pl.column, pl.bStep, offsets + pc,
                   pc > kBegin, bias, last ? clamp : nullptr, dst, pl.outStep, pl.aside ? ldd : ldc,
                   panelRows, pl.n0, pl.n1);
        }
      }
    }
    for (int64_t t = tb; t < te && !byHalves; ++t) {
      if (!place(t).aside)
        continue;
      const int64_t v1 = std::min((t + 1) * NR, columns);
      for (int64_t v = t * NR; v < v1;) {
        const int64_t y = v / pitch, x = v % pitch, seg = std::min(v1 - v, pitch - x);
        if (const int64_t n = std::min(seg, width - x); n > 0)
          for (int64_t p = panelBegin; p < panelEnd; ++p) {
            // Panel p's rows start at slot (p - panelBegin) * MR of `block`.
            const float *slot = block.data() + (p - panelBegin) * MR * ldd + (v - tb * NR);
            for (int64_t m = panelStart(p); m < panelStart(p + 1); ++m)
              std::memcpy(C + m * ldc + y * width + x, slot + (m - panelStart(p)) * ldd,
                          sizeof(float) * static_cast<size_t>(n));
          }
        v += seg;
      }
    }
  }
}

} // namespace onnxslim::rt
