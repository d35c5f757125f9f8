//===- runtime/conv/Im2col.cpp - Convolution lowered to GEMM --------------===//
//
// The convolutions that run on the GEMM engine (runtime/Gemm.h):
//  - convPointwiseGemm: a 1x1 kernel with unit strides and no padding is
//    one GEMM per (image, group) straight on X, cut into column pieces
//    (and blocks of output channels for narrow planes) as tasks;
//  - pointwiseTransposed: the same on planes of at most 64 positions, as
//    the transposed product (positions by channels) with the filters kept
//    packed, transposed back into the planes;
//  - convPositionRows: other 2-D convolutions on planes of at most 64
//    positions, and strided ones on planes of at most 1024, as that
//    transposed product over the column matrix, which each thread writes K
//    slice by K slice as the product reads it;
//  - convFewColumns: at most kFewColumns outputs per image, each a dot
//    product of a filter row with its gathered receptive field;
//  - convIm2col: everything else; the column matrix is written directly
//    in the GEMM engine's packed-B panel layout (no second copy) for a few
//    output rows at a time (sized for L2), from zero-padded copies of the
//    planes when they fit, each chunk a task.
// The bias is added after the product, as ONNX Runtime does, so roundings
// follow the same sequence (the GEMM adds it as it stores its results).
//
//===----------------------------------------------------------------------===//
#include "runtime/Gemm.h"
#include "runtime/Simd.h"
#include "runtime/ThreadPool.h"
#include "runtime/conv/Algorithms.h"
#include "runtime/conv/Common.h"
#include "runtime/conv/Kernels.h"

#include <xsimd/xsimd.hpp>

#include <algorithm>
#include <cstring>
#include <limits>
#include <numeric>
#include <type_traits>
#include <vector>

namespace onnxslim::rt::nn {
namespace {

/// Elements of a Conv column matrix chunk: small enough to stay in L2 between
/// its construction and the GEMM that reads it.
constexpr int64_t kConvColumnBudget = int64_t{1} << 17;

/// Elements of zero-padded input planes that im2col may stage (16 MB of floats).
constexpr int64_t kPaddedBudget = int64_t{1} << 22;

/// dst[i] = src[i] for i < n: inline SIMD copies, for the short runs (a
/// panel's width or less) of the column matrices, where a call to memcpy
/// per run cost more than the copy.
template <typename C> inline void copyShort(C *dst, const C *src, int64_t n) {
  int64_t i = 0;
  if constexpr (std::is_same_v<C, float> || std::is_same_v<C, double>) {
    using B = xsimd::batch<C>;
    constexpr int64_t W = static_cast<int64_t>(B::size);
    for (; i + W <= n; i += W)
      B::load_unaligned(src + i).store_unaligned(dst + i);
  }
  for (; i < n; ++i)
    dst[i] = src[i];
}

/// Copies `len` elements of a column-matrix row that starts at column j into
/// the packed-B panels it spans (see im2colPacked).
template <typename C>
inline void scatterToPanels(const C *row, int64_t len, int64_t j, int64_t panelWidth,
                            int64_t panelStride, C *base) {
  int64_t o = j % panelWidth;
  C *dst = base + (j / panelWidth) * panelStride + o;
  for (int64_t ox = 0; ox < len;) {
    int64_t n = std::min(panelWidth - o, len - ox);
    copyShort(dst, row + ox, n);
    ox += n;
    dst += panelStride - o;
    o = 0;
  }
}

/// Builds the column matrix of `channels` image planes for grid rows
/// [r0, r0+nRows) (row (c, kz, ky, kx), column = grid position - r0 * width)
/// straight in the GEMM engine's packed-B layout of `panelWidth`-column
/// panels (see gemmPanelWidth), so that the product reads it without another
/// copy. Columns past the end are zero.
template <typename C>
void im2colPacked(const C *img, int64_t channels, const Window::Dims3 &g, int64_t r0,
                  int64_t nRows, int64_t panelWidth, C *dst) {
  const int64_t ow = g.out[2], cols = nRows * ow;
  const int64_t inS = g.in[0] * g.in[1] * g.in[2];
  const int64_t K = channels * g.kernel[0] * g.kernel[1] * g.kernel[2];
  const int64_t panelStride = K * panelWidth;
  C *row = scratch<C, 1>(ow);
  for (int64_t c = 0; c < channels; ++c)
    for (int64_t kz = 0; kz < g.kernel[0]; ++kz)
      for (int64_t ky = 0; ky < g.kernel[1]; ++ky)
        for (int64_t kx = 0; kx < g.kernel[2]; ++kx) {
          int64_t kk = ((c * g.kernel[0] + kz) * g.kernel[1] + ky) * g.kernel[2] + kx;
          C *base = dst + kk * panelWidth;
          int64_t off = kx * g.dilations[2] - g.padBegin[2];
          int64_t lo, hi;
          validRange(off, g.strides[2], g.in[2], ow, lo, hi);
          for (int64_t r = r0; r < r0 + nRows; ++r) {
            int64_t oz = r / g.out[1], oy = r % g.out[1];
            int64_t iz = oz * g.strides[0] + kz * g.dilations[0] - g.padBegin[0];
            int64_t iy = oy * g.strides[1] + ky * g.dilations[1] - g.padBegin[1];
            if (iz < 0 || iz >= g.in[0] || iy < 0 || iy >= g.in[1]) {
              std::fill(row, row + ow, C(0));
            } else {
              const C *srow = img + c * inS + (iz * g.in[1] + iy) * g.in[2];
              std::fill(row, row + lo, C(0));
              std::fill(row + hi, row + ow, C(0));
              if (g.strides[2] == 1) {
                std::memcpy(row + lo, srow + lo + off, sizeof(C) * static_cast<size_t>(hi - lo));
              } else {
                for (int64_t ox = lo; ox < hi; ++ox)
                  row[ox] = srow[ox * g.strides[2] + off];
              }
            }
            scatterToPanels(row, ow, (r - r0) * ow, panelWidth, panelStride, base);
          }
        }
  if (int64_t tail = cols % panelWidth) {
    C *last = dst + (cols / panelWidth) * panelStride;
    for (int64_t kk = 0; kk < K; ++kk)
      std::fill(last + kk * panelWidth + tail, last + (kk + 1) * panelWidth, C(0));
  }
}

/// im2colPacked for 1-D/2-D geometry from `channels` padded planes (the
/// layout of planPadded, planes `planeSize` elements apart): every row of
/// the column matrix is then one contiguous run of a plane, copied straight
/// into the panels.
template <typename C>
void im2colFromPadded(const C *planes, int64_t planeSize, int64_t channels,
                      const Window::Dims3 &g, const PaddedPlan &p, int64_t r0, int64_t nRows,
                      int64_t panelWidth, C *dst) {
  const int64_t ow = g.out[2], cols = nRows * ow, kS = g.kernel[1] * g.kernel[2];
  const int64_t K = channels * kS, panelStride = K * panelWidth;
  const int64_t rowStep = g.strides[1] * p.rowPitch;
  for (int64_t c = 0; c < channels; ++c)
    for (int64_t t = 0; t < kS; ++t) {
      C *base = dst + (c * kS + t) * panelWidth;
      const C *src = planes + c * planeSize + p.tapRel[t] + r0 * rowStep;
      for (int64_t r = 0; r < nRows; ++r, src += rowStep)
        scatterToPanels(src, ow, r * ow, panelWidth, panelStride, base);
    }
  if (int64_t tail = cols % panelWidth) {
    C *last = dst + (cols / panelWidth) * panelStride;
    for (int64_t kk = 0; kk < K; ++kk)
      std::fill(last + kk * panelWidth + tail, last + (kk + 1) * panelWidth, C(0));
  }
}

} // namespace

/// Pointwise convolution (1x1 kernel, unit strides, no padding) as GEMMs
/// straight on X, one per (image, group), cut into column pieces and blocks
/// of output channels for the epilogue and the threads.
template <typename C>
void convPointwiseGemm(const C *x, const C *w, const C *bias, C *y, int64_t N, int64_t Cin,
                       int64_t M, int64_t group, const Window &win, const Epilogue<C> &epilogue) {
  const int64_t inS = win.inSize(), outS = win.outSize(), kS = win.kernelSize();
  const int64_t Cg = Cin / group, Mg = M / group;
  // The bias is added after the product (as ONNX Runtime does), so that the
  // rounding of every output follows the same sequence of operations; the
  // GEMM adds it as it stores its last K slice (see sgemm's rowBias).
  auto biasOf = [&](int64_t gi) { return bias ? bias + gi * Mg : nullptr; };
  const int64_t rows = Cg * kS;
  // Column pieces: with a fused clamp, about kMinChunkColumns wide, so
  // that the clamp reads its piece of the output while it is still in
  // L2; with threads, the pieces are the tasks. Every piece keeps
  // kMinThreadColumns columns, so the GEMM's K slice (MLAS's rule, which
  // only shortens it for narrower products) is the whole product's.
  const bool split = worthSplitting(N * M * Cg * outS, N * (Cin + M) * outS);
  int64_t pieces = epilogue.on() ? std::max<int64_t>(1, outS / kMinChunkColumns) : 1;
  if (split)
    pieces = std::max<int64_t>(pieces, 4 * threadCount());
  pieces = std::max<int64_t>(1, std::min(pieces, outS / kMinThreadColumns));
  constexpr int64_t kMinBlockRows = 16;
  // Narrow planes (see kChannelSplitPlane) are split by output channels
  // alone, when they have rows for a block per thread.
  const bool byChannels = split && outS < kChannelSplitPlane &&
                          Mg >= kMinBlockRows * threadCount();
  if (byChannels)
    pieces = 1;
  // Planes too narrow for enough pieces (a piece count that is not a
  // multiple of the threads leaves a core idle at the end) have their
  // output channels cut into blocks of kMinBlockRows or more as well, the
  // fewest that make the tasks at least two per thread and a whole number
  // per thread. Tasks run block by block, so each core writes whole
  // output planes. The GEMM's K slice depends on the columns only: a
  // block's outputs see the operations of the whole product.
  const int64_t threads = threadCount();
  int64_t blocks = 1;
  // (Split by channels: at least one block per thread when two are too
  // many for the rows.)
  auto fewestBlocks = [&](int64_t least) {
    for (int64_t b = 1; b <= Mg / kMinBlockRows; ++b)
      if (pieces * b >= least && pieces * b % threads == 0)
        return b;
    return int64_t{0};
  };
  if (split) {
    blocks = fewestBlocks(2 * threads);
    if (blocks == 0 && byChannels)
      blocks = fewestBlocks(threads);
    blocks = std::max<int64_t>(blocks, 1);
  }
  for (int64_t n = 0; n < N; ++n)
    for (int64_t gi = 0; gi < group; ++gi) {
      const C *xg = x + (n * Cin + gi * Cg) * inS;
      C *yg = y + (n * M + gi * Mg) * outS;
      const C *bg = biasOf(gi);
      auto piece = [&](int64_t task) {
        const int64_t t = task % pieces, b = task / pieces;
        const int64_t j0 = outS * t / pieces, j1 = outS * (t + 1) / pieces;
        // Block edges on multiples of 8 rows (whole micro-kernel panels).
        const int64_t m0 = b == 0 ? 0 : Mg * b / blocks / 8 * 8;
        const int64_t m1 = b + 1 == blocks ? Mg : Mg * (b + 1) / blocks / 8 * 8;
        gemm(false, false, m1 - m0, j1 - j0, Cg, C(1), w + (gi * Mg + m0) * rows, rows,
             xg + j0, inS, C(0), yg + m0 * outS + j0, outS, bg ? bg + m0 : nullptr);
        if (epilogue.on())
          for (int64_t m = m0; m < m1; ++m)
            epilogue(yg + m * outS + j0, j1 - j0);
      };
      parallelForIf(split, pieces * blocks, piece);
    }
}

/// Largest plane (output positions) of a pointwise convolution computed
/// transposed: a 7x7 plane fills 49 of the 64 lanes of two 32-column tiles
/// in the direct product, while 1280 output channels fill all of theirs
/// (bench/conv_notes.md: 1x1 convolutions on 7x7 planes ran at about half
/// the GEMM engine's rate; transposed, at its full rate). On 14x14 planes
/// the tiles waste 1/8, and the transpose back costs as much.
constexpr int64_t kTransposedMaxPlane = 64;

bool pointwiseIsTransposed(int64_t M, int64_t K, int64_t planeSize) {
  (void)K;
  return planeSize > kFewColumns && planeSize <= kTransposedMaxPlane &&
         M >= gemmPanelWidth<float>();
}

namespace {

/// The filters of every group transposed (K x Mg, row k the weights of input
/// channel k) and packed as the GEMM's B panels (gemmPanelWidth), kept in
/// `kept` when given.
const float *transposedFilters(const float *w, int64_t group, int64_t Mg, int64_t K,
                               PackedFilters *kept, int64_t parts = 1) {
  const int64_t width = gemmPanelWidth<float>(), panels = (Mg + width - 1) / width;
  const int64_t size = panels * K * width;
  if (kept && kept->holds(w, group, Mg, K, true, group * size, parts))
    return kept->data.data();
  float *packed = kept ? kept->data.data() : scratch<float, 11>(group * size);
  for (int64_t gi = 0; gi < group; ++gi)
    for (int64_t q = 0; q < parts; ++q) {
      // Part q: input channels [k0, k1), its panels at panels * k0 * width.
      const int64_t k0 = K * q / parts, k1 = K * (q + 1) / parts;
      packFilterColumns(w + gi * Mg * K + k0, K, 1, Mg, k1 - k0,
                        packed + gi * size + panels * k0 * width);
    }
  return packed;
}

} // namespace

namespace {

#ifdef ONNXSLIM_ISA_X86
/// biasClampRows on AVX-512: the same additions and compares.
__attribute__((target("avx512f"))) void biasClampRowsAvx512(float *y, int64_t P, int64_t M,
                                                             const float *bias, bool clamps,
                                                             float lo, float hi) {
  const __m512 vlo = _mm512_set1_ps(lo), vhi = _mm512_set1_ps(hi);
  for (int64_t p = 0; p < P; ++p) {
    float *row = y + p * M;
    for (int64_t m = 0; m < M; m += 16) {
      const __mmask16 k = M - m >= 16 ? __mmask16(0xFFFF) : __mmask16((1u << (M - m)) - 1u);
      __m512 v = _mm512_maskz_loadu_ps(k, row + m);
      if (bias)
        v = _mm512_add_ps(v, _mm512_maskz_loadu_ps(k, bias + m));
      if (clamps) {
        v = _mm512_mask_blend_ps(_mm512_cmp_ps_mask(v, vlo, _CMP_LT_OQ), v, vlo);
        v = _mm512_mask_blend_ps(_mm512_cmp_ps_mask(v, vhi, _CMP_GT_OQ), v, vhi);
      }
      _mm512_mask_storeu_ps(row + m, k, v);
    }
  }
}
#endif

/// Given P rows of M channels, Execute: adds the bias (per channel, when
/// given) to each row, then applies the epilogue's clamp (it adds nothing
/// here).
void biasClampRows(float *y, int64_t P, int64_t M, const float *bias,
                   const Epilogue<float> &epilogue) {
#ifdef ONNXSLIM_ISA_X86
  if (gemmEngineIsAvx512())
    return biasClampRowsAvx512(y, P, M, bias, epilogue.clamps, epilogue.lo, epilogue.hi);
#endif
  for (int64_t p = 0; p < P; ++p) {
    float *row = y + p * M;
    if (bias)
      for (int64_t m = 0; m < M; ++m)
        row[m] = row[m] + bias[m];
    if (epilogue.on())
      epilogue(row, M);
  }
}

/// Given A (P x K, read transposed when transA) and the filters packed as
/// the GEMM's B panels (K x M), Execute: C = A B (P x M, row stride M). A
/// product worth splitting that the GEMM would only cut K slice by K slice
/// (few output channels: each slice too small to split) is cut here, each
/// part over all of K. Its units are the panels, each cut into R pieces of
/// rows, the fewest that share evenly among the threads (five panels, as
/// 160 output channels make, left one core three and the other two), taken
/// panel by panel so that each thread reads about its share of the filters.
/// Every part rounds as the whole product would (sliceColumns), and a row's
/// sums do not depend on the rows around it, so the bits do not depend on
/// the thread count.
void gemmProductByPanels(bool transA, int64_t P, int64_t M, int64_t K, const float *a,
                         int64_t lda, const float *filters, int64_t width, float *c) {
  const int64_t panels = (M + width - 1) / width, threads = threadCount();
  if (panels * P < 2 || threads < 2 || gemmSplitsColumns(P, M, K) ||
      !worthSplitting(P * M * K, P * K + K * M + P * M)) {
    gemmPackedB(transA, P, M, K, 1.0f, a, lda, filters, width, 0.0f, c, M, nullptr, M);
    return;
  }
  const int64_t R = std::min(P, threads / std::gcd(panels, threads)), units = panels * R;
  // Rows [i0, i1) of panels [p0, p1).
  auto product = [&](int64_t p0, int64_t p1, int64_t i0, int64_t i1) {
    const int64_t j0 = p0 * width, j1 = std::min(M, p1 * width);
    if (j1 > j0 && i1 > i0)
      gemmPackedB(transA, i1 - i0, j1 - j0, K, 1.0f, transA ? a + i0 : a + i0 * lda, lda,
                  filters + j0 * K, width, 0.0f, c + i0 * M + j0, M, nullptr, M);
  };
  parallelFor(threads, [&](int64_t q) {
    const int64_t u0 = units * q / threads, u1 = units * (q + 1) / threads;
    int64_t u = u0;
    // A partial first panel, the whole panels, a partial last panel.
    if (u < u1 && u % R != 0) {
      const int64_t end = std::min(u1, (u / R + 1) * R);
      product(u / R, u / R + 1, P * (u % R) / R, P * ((end - 1) % R + 1) / R);
      u = end;
    }
    if (u1 - u >= R) {
      product(u / R, u1 / R, 0, P);
      u = u1 / R * R;
    }
    if (u < u1)
      product(u / R, u / R + 1, 0, P * (u1 % R) / R);
  });
}

/// gemmProductByPanels by `parts` parts of K (pointwiseKParts), the filters
/// packed part after part (transposedFilters): C = C_0 + C_1 + ..., each
/// C_q the product over input channels [K q / parts, K (q + 1) / parts)
/// alone, added up in order. On threads each part on its own (in pieces of
/// rows when the threads outnumber the parts), then the sums by rows; on
/// one thread the same products and sums one after another, so the same
/// bits.
void gemmProductByParts(bool transA, int64_t P, int64_t M, int64_t K, const float *a,
                        int64_t lda, const float *filters, int64_t width, int64_t parts,
                        float *c) {
  const int64_t panels = (M + width - 1) / width;
  const bool split = worthSplitting(P * M * K, P * K + K * M + P * M);
  const int64_t pieces = split ? std::clamp<int64_t>(threadCount() / parts, 1, P) : 1;
  float *partials = scratch<float, 22>((parts - 1) * P * M);
  parallelForIf(split, parts * pieces, [&](int64_t t) {
    const int64_t q = t / pieces, r = t % pieces;
    const int64_t k0 = K * q / parts, k1 = K * (q + 1) / parts;
    const int64_t i0 = P * r / pieces, i1 = P * (r + 1) / pieces;
    const float *aq = transA ? a + k0 * lda + i0 : a + i0 * lda + k0;
    float *dst = q == 0 ? c : partials + (q - 1) * P * M;
    if (i1 > i0)
      gemmPackedB(transA, i1 - i0, M, k1 - k0, 1.0f, aq, lda, filters + panels * k0 * width, width,
                  0.0f, dst + i0 * M, M, nullptr, M);
  });
  const int64_t chunks = split ? std::min<int64_t>(P, threadCount()) : 1;
  parallelForIf(split, chunks, [&](int64_t t) {
    const int64_t i0 = P * t / chunks, i1 = P * (t + 1) / chunks;
    for (int64_t q = 1; q < parts; ++q)
      addFloats(c + i0 * M, partials + (q - 1) * P * M + i0 * M, (i1 - i0) * M);
  });
}

/// Given T (P positions by Mg channels, row stride ldt), Execute: writes
/// its transpose into Mg rows of P at y (row stride ldy), adding the bias,
/// sixteen channels at a time so that each row of T is read once.
void transposeBlock(const float *t, int64_t ldt, int64_t P, int64_t Mg, const float *bias,
                    float *y, int64_t ldy) {
#ifdef ONNXSLIM_ISA_X86
  if (gemmEngineIsAvx512())
    return simd::transposeFloatsAvx512(t, ldt, P, Mg, y, ldy, bias);
#endif
  for (int64_t m0 = 0; m0 < Mg; m0 += 16) {
    const int64_t mn = std::min<int64_t>(16, Mg - m0);
    for (int64_t p = 0; p < P; ++p) {
      const float *src = t + p * ldt + m0;
      float *dst = y + m0 * ldy + p;
      if (bias)
        for (int64_t j = 0; j < mn; ++j)
          dst[j * ldy] = src[j] + bias[m0 + j];
      else
        for (int64_t j = 0; j < mn; ++j)
          dst[j * ldy] = src[j];
    }
  }
}

void transposeBack(const float *t, int64_t P, int64_t Mg, const float *bias, float *y) {
  transposeBlock(t, Mg, P, Mg, bias, y, P);
}

} // namespace

/// The product of each (image, group) is T = X^T W^T (positions by output
/// channels, through gemmPackedB with X read transposed in place), then y =
/// T^T plus the bias (added after the product, as everywhere); then the
/// epilogue. The GEMM cuts its work for the threads itself, and its sums do
/// not depend on how.
void pointwiseTransposed(const float *x, const float *w, const float *bias, float *y, int64_t N,
                         int64_t Cin, int64_t M, int64_t group, int64_t planeSize,
                         const Epilogue<float> &epilogue, PackedFilters *kept) {
  const int64_t Cg = Cin / group, Mg = M / group, P = planeSize;
  const int64_t width = gemmPanelWidth<float>(), size = (Mg + width - 1) / width * Cg * width;
  const int64_t parts = group == 1 ? pointwiseKParts(Mg, Cg, P) : 1;
  const float *filters = transposedFilters(w, group, Mg, Cg, kept, parts);
  float *t = scratch<float, 12>(P * Mg);
  for (int64_t n = 0; n < N; ++n)
    for (int64_t gi = 0; gi < group; ++gi) {
      if (parts > 1)
        gemmProductByParts(true, P, Mg, Cg, x + (n * Cin + gi * Cg) * P, P, filters + gi * size,
                           width, parts, t);
      else
        gemmProductByPanels(true, P, Mg, Cg, x + (n * Cin + gi * Cg) * P, P, filters + gi * size,
                            width, t);
      float *yg = y + (n * M + gi * Mg) * P;
      transposeBack(t, P, Mg, bias ? bias + gi * Mg : nullptr, yg);
      if (epilogue.on())
        for (int64_t m = 0; m < Mg; ++m)
          epilogue(yg + m * P, P);
    }
}

/// The product T = X^T W^T of pointwiseTransposed, with X read in place in
/// either layout; a channels-last y is T itself, to which the bias is added
/// and the clamp applied row by row (on threads, by rows, when large), else
/// T is transposed back as there.
void pointwiseChannelsLast(const float *x, bool xLast, const float *w, const float *bias, float *y,
                           bool yLast, int64_t N, int64_t K, int64_t M, int64_t P,
                           const Epilogue<float> &epilogue, PackedFilters *kept) {
  const int64_t width = gemmPanelWidth<float>(), parts = pointwiseKParts(M, K, P);
  const float *filters = transposedFilters(w, 1, M, K, kept, parts);
  float *t = yLast ? nullptr : scratch<float, 12>(P * M);
  for (int64_t n = 0; n < N; ++n) {
    const float *xn = x + n * K * P;
    float *yn = y + n * M * P;
    if (parts > 1)
      gemmProductByParts(!xLast, P, M, K, xn, xLast ? K : P, filters, width, parts,
                         yLast ? yn : t);
    else
      gemmProductByPanels(!xLast, P, M, K, xn, xLast ? K : P, filters, width, yLast ? yn : t);
    if (!yLast) {
      transposeBack(t, P, M, bias, yn);
      if (epilogue.on())
        for (int64_t m = 0; m < M; ++m)
          epilogue(yn + m * P, P);
      continue;
    }
    if (bias || epilogue.on())
      biasClampRows(yn, P, M, bias, epilogue);
  }
}

namespace {

#ifdef ONNXSLIM_ISA_X86
/// Where up to 16 lanes of a row panel come from in a plane, on AVX-512:
/// lane r (of `lanes`) is element idx[r] of the 16 loaded from `base`
/// (those of `load`).
struct PanelSegment {
  int32_t idx[16];
  int32_t base;
  __mmask16 load, lanes;
};
#endif

/// Output and input channels from which convPositionRows takes a plane of
/// at most kTransposedMaxPlane outputs: with fewer, writing the column
/// matrix costs about what the product saves over the direct one
/// (bench/conv_notes.md).
constexpr int64_t kPositionRowsMinOutputs = 64, kPositionRowsMinInputs = 16;

/// Output channels from which convPositionRows takes a strided
/// convolution of up to kPositionRowsMaxStridedPlane outputs (or one whose
/// rows the direct product's tiles cover poorly): the direct
/// product's tiles cover strided rows poorly, and the column matrix is
/// written once per 128 or more multiply-adds of each of its elements
/// (with 64 output channels, 3x3 at stride 2 on 56x56 ran slower). Larger
/// planes were not measured.
constexpr int64_t kPositionRowsMinStridedOutputs = 128, kPositionRowsMaxStridedPlane = 1024;

/// Row panels times taps up to which convPositionRows plans a convolution
/// (ColumnRowPanels keeps an entry of about 300 bytes for each): ResNet's
/// 3x3 layers need 45 to 774, a 7x7 kernel on 1024 outputs 4214.
constexpr int64_t kPositionRowsMaxPlanEntries = int64_t{1} << 14;

/// Segments per tap up to which a panel's lanes are loaded and permuted;
/// beyond, they are gathered.
constexpr int kMaxSegments = 4;

/// The column matrix of one image's planes (2-D) as a product's A: P
/// positions by K = channels x taps (the filters' order), the input each
/// position reads at each tap, zero in the padding. Planned once per
/// geometry; `pack` then writes any block of it as RowPanelPacker does.
class ColumnRowPanels {
public:
  ColumnRowPanels(const Window::Dims3 &g, int64_t MR)
      : MR_(MR), kS_(g.kernel[1] * g.kernel[2]), P_(g.out[1] * g.out[2]),
        planeSize_(g.in[1] * g.in[2]) {
    const int64_t panels = (P_ + MR - 1) / MR, kw = g.kernel[2], ow = g.out[2];
    offsets_.assign(static_cast<size_t>(panels * kS_ * MR), -1);
    for (int64_t p = 0; p < P_; ++p)
      for (int64_t t = 0; t < kS_; ++t) {
        const int64_t iy = p / ow * g.strides[1] + t / kw * g.dilations[1] - g.padBegin[1];
        const int64_t ix = p % ow * g.strides[2] + t % kw * g.dilations[2] - g.padBegin[2];
        if (iy >= 0 && iy < g.in[1] && ix >= 0 && ix < g.in[2])
          offsets_[static_cast<size_t>((p / MR * kS_ + t) * MR + p % MR)] =
              static_cast<int32_t>(iy * g.in[2] + ix);
      }
#ifdef ONNXSLIM_ISA_X86
    if (MR <= 16 && gemmEngineIsAvx512()) {
      segments_.resize(static_cast<size_t>(panels * kS_ * kMaxSegments));
      counts_.resize(static_cast<size_t>(panels * kS_));
      for (int64_t i = 0; i < panels * kS_; ++i)
        counts_[static_cast<size_t>(i)] =
            planSegments(offsets_.data() + i * MR, segments_.data() + i * kMaxSegments);
    }
#endif
  }

  /// Given image x, Execute: writes rows [i0, i0 + rows) (a multiple of
  /// MR from) by columns [k0, k0 + kc) into dst as row panels.
  void pack(const float *x, int64_t i0, int64_t rows, int64_t k0, int64_t kc, float *dst) const {
    for (int64_t ir = 0; ir < rows; ir += MR_) {
      const int64_t q = (i0 + ir) / MR_;
      float *out = dst + ir * kc;
#ifdef ONNXSLIM_ISA_X86
      if (!counts_.empty()) {
        panelAvx512(x, q, k0, kc, out);
        continue;
      }
#endif
      int64_t t = k0 % kS_;
      const float *plane = x + k0 / kS_ * planeSize_;
      for (int64_t k = 0; k < kc; ++k, out += MR_) {
        const int32_t *off = offsets_.data() + (q * kS_ + t) * MR_;
        for (int64_t r = 0; r < MR_; ++r) {
          const float v = plane[std::max(off[r], 0)];
          out[r] = off[r] >= 0 ? v : 0.0f;
        }
        if (++t == kS_) {
          t = 0;
          plane += planeSize_;
        }
      }
    }
  }

private:
#ifdef ONNXSLIM_ISA_X86
  /// Given one tap's MR offsets in a panel (-1: padding or past the last
  /// position), Result: how many segments cover them (-1: more than
  /// kMaxSegments), written to seg.
  int planSegments(const int32_t *offsets, PanelSegment *seg) const {
    int n = 0;
    for (int64_t r = 0; r < MR_; ++r) {
      const int32_t o = offsets[r];
      if (o < 0)
        continue;
      int s = 0;
      while (s < n && !(o >= seg[s].base && o - seg[s].base < 16))
        ++s;
      if (s == n) {
        if (n == kMaxSegments)
          return -1;
        seg[n] = PanelSegment{};
        seg[n++].base = o;
      }
      seg[s].idx[r] = o - seg[s].base;
      seg[s].load = static_cast<__mmask16>(seg[s].load | 1u << (o - seg[s].base));
      seg[s].lanes = static_cast<__mmask16>(seg[s].lanes | 1u << r);
    }
    return n;
  }

  /// Columns [k0, k0 + kc) of row panel q on AVX-512: each tap's lanes as
  /// planSegments planned them (a masked load and a permutation per
  /// segment), or gathered where it declined.
  __attribute__((target("avx512f"))) void panelAvx512(const float *x, int64_t q, int64_t k0,
                                                      int64_t kc, float *out) const {
    const __mmask16 store = simd::firstLanes(MR_);
    int64_t t = k0 % kS_;
    const float *plane = x + k0 / kS_ * planeSize_;
    for (int64_t k = 0; k < kc; ++k, out += MR_) {
      const int64_t i = q * kS_ + t;
      const PanelSegment *seg = segments_.data() + i * kMaxSegments;
      const int n = counts_[static_cast<size_t>(i)];
      __m512 v = _mm512_setzero_ps();
      if (n >= 0) {
        for (int s = 0; s < n; ++s)
          v = _mm512_mask_permutexvar_ps(v, seg[s].lanes, _mm512_loadu_si512(seg[s].idx),
                                         _mm512_maskz_loadu_ps(seg[s].load, plane + seg[s].base));
      } else {
        const __m512i idx = _mm512_maskz_loadu_epi32(store, offsets_.data() + i * MR_);
        v = _mm512_mask_i32gather_ps(
            v, _mm512_mask_cmpge_epi32_mask(store, idx, _mm512_setzero_si512()), idx, plane, 4);
      }
      _mm512_mask_storeu_ps(out, store, v);
      if (++t == kS_) {
        t = 0;
        plane += planeSize_;
      }
    }
  }

  std::vector<PanelSegment> segments_;
  std::vector<int> counts_; ///< per panel and tap: planSegments' result
#endif
  int64_t MR_, kS_, P_, planeSize_;
  std::vector<int32_t> offsets_; ///< per panel, tap and lane (-1: zero)
};

} // namespace

bool positionRowsFit(const Window::Dims3 &g, int64_t Cin, int64_t M, int64_t group) {
  const int64_t outS = g.out[0] * g.out[1] * g.out[2];
  const int64_t rowPanels = (outS + gemmRowPanelHeight() - 1) / gemmRowPanelHeight();
  if (group != 1 || g.in[0] != 1 || g.kernel[0] != 1 || outS <= kFewColumns ||
      Cin < kPositionRowsMinInputs || g.in[1] * g.in[2] > std::numeric_limits<int32_t>::max() ||
      rowPanels * g.kernel[1] * g.kernel[2] > kPositionRowsMaxPlanEntries)
    return false;
  if (outS <= kTransposedMaxPlane)
    return M >= kPositionRowsMinOutputs;
  if (outS > kPositionRowsMaxStridedPlane || M < kPositionRowsMinStridedOutputs)
    return false;
  if (g.strides[1] > 1 || g.strides[2] > 1)
    return true;
  // At unit strides, rows the direct product's half tiles would cover
  // poorly (over 1/8 of their columns empty: Inception's 1x7 kernels on
  // 17-wide rows), where Winograd does not take the kernel.
  const int64_t half = directColumnTile() / 2, ow = g.out[2];
  return (ow + half - 1) / half * half * 7 > ow * 8 && !winogradFits(g, Cin, M, group);
}

/// Each thread multiplies the column matrix, written K slice by K slice
/// into its own caches as the product reads it (ColumnRowPanels), over all
/// of K with the whole product's K slice (the same bits on any thread
/// count): on a small plane, all positions by a range of whole filter
/// panels; on a larger one, a range of row panels of positions by all
/// filters. Then it transposes its part of the output back into the planes.
void convPositionRows(const float *x, const float *w, const float *bias, float *y, int64_t N,
                      int64_t Cin, int64_t M, const Window::Dims3 &g,
                      const Epilogue<float> &epilogue, PackedFilters *kept) {
  const int64_t K = Cin * g.kernel[1] * g.kernel[2], P = g.out[1] * g.out[2];
  const int64_t inS = g.in[1] * g.in[2], width = gemmPanelWidth<float>();
  const int64_t MR = gemmRowPanelHeight();
  const bool byFilters = P <= kTransposedMaxPlane;
  const int64_t pieces = byFilters ? (M + width - 1) / width : (P + MR - 1) / MR;
  const int64_t pieceSize = byFilters ? width : MR;
  const float *filters = transposedFilters(w, 1, M, K, kept);
  float *t = scratch<float, 12>(P * M);
  const ColumnRowPanels plan(g, MR);
  const int64_t parts = worthSplitting(P * M * K, P * K + K * M + P * M)
                            ? std::min<int64_t>(pieces, threadCount())
                            : 1;
  for (int64_t n = 0; n < N; ++n) {
    const float *xn = x + n * Cin * inS;
    float *yn = y + n * M * P;
    parallelForIf(parts > 1, parts, [&](int64_t q) {
      const int64_t end = byFilters ? M : P;
      const int64_t b = pieces * q / parts * pieceSize;
      const int64_t e = std::min(end, pieces * (q + 1) / parts * pieceSize);
      if (e <= b)
        return;
      // Filters [j0, j1) by positions [i0, i1).
      const int64_t j0 = byFilters ? b : 0, j1 = byFilters ? e : M;
      const int64_t i0 = byFilters ? 0 : b, i1 = byFilters ? P : e;
      const RowPanelPacker<float> columns = [&](int64_t r0, int64_t rows, int64_t k0, int64_t kc,
                                                float *dst) {
        plan.pack(xn, i0 + r0, rows, k0, kc, dst);
      };
      gemmPackedB(columns, i1 - i0, j1 - j0, K, filters + j0 * K, t + i0 * M + j0, M, M);
      transposeBlock(t + i0 * M + j0, M, i1 - i0, j1 - j0, bias ? bias + j0 : nullptr,
                     yn + j0 * P + i0, P);
      if (epilogue.on())
        for (int64_t m = j0; m < j1; ++m)
          epilogue(yn + m * P + i0, i1 - i0);
    });
  }
}

bool channelsLastPlaneFits(int64_t planeSize) {
  return planeSize > kFewColumns && planeSize <= kTransposedMaxPlane;
}

/// Convolution with at most kFewColumns output positions per image (a
/// frame of a 1-D signal, a tiny feature map): each position's receptive
/// field is gathered into one row (zeros in the padding), and every output
/// is a dot product of a filter row with it (gemmFewColumns), with no
/// packing of the filters.
template <typename C>
void convFewColumns(const C *x, const C *w, const C *bias, C *y, int64_t N, int64_t Cin,
                    int64_t M, int64_t group, const Window::Dims3 &g, const Epilogue<C> &epilogue) {
  const int64_t Cg = Cin / group, Mg = M / group;
  const int64_t kS = g.kernel[0] * g.kernel[1] * g.kernel[2], rows = Cg * kS;
  const int64_t inS = g.in[0] * g.in[1] * g.in[2], outS = g.out[0] * g.out[1] * g.out[2];
  std::vector<C> fields(static_cast<size_t>(outS * rows));
  for (int64_t n = 0; n < N; ++n)
    for (int64_t gi = 0; gi < group; ++gi) {
      const C *xg = x + (n * Cin + gi * Cg) * inS;
      for (int64_t j = 0; j < outS; ++j) {
        const int64_t oz = j / (g.out[1] * g.out[2]), oy = j / g.out[2] % g.out[1],
                      ox = j % g.out[2];
        C *dst = fields.data() + j * rows;
        for (int64_t c = 0; c < Cg; ++c)
          for (int64_t kz = 0; kz < g.kernel[0]; ++kz)
            for (int64_t ky = 0; ky < g.kernel[1]; ++ky)
              for (int64_t kx = 0; kx < g.kernel[2]; ++kx) {
                const int64_t iz = oz * g.strides[0] + kz * g.dilations[0] - g.padBegin[0];
                const int64_t iy = oy * g.strides[1] + ky * g.dilations[1] - g.padBegin[1];
                const int64_t ix = ox * g.strides[2] + kx * g.dilations[2] - g.padBegin[2];
                const bool in = iz >= 0 && iz < g.in[0] && iy >= 0 && iy < g.in[1] && ix >= 0 &&
                                ix < g.in[2];
                *dst++ = in ? xg[c * inS + (iz * g.in[1] + iy) * g.in[2] + ix] : C(0);
              }
      }
      C *yg = y + (n * M + gi * Mg) * outS;
      gemmFewColumns(Mg, outS, rows, w + gi * Mg * rows, rows, fields.data(), rows, yg, outS,
                     bias ? bias + gi * Mg : nullptr);
      if (epilogue.on())
        for (int64_t m = 0; m < Mg; ++m)
          epilogue(yg + m * outS, outS);
    }
}

/// Convolution as im2col + GEMM: the column matrix is written directly in
/// the GEMM engine's packed-B panel layout (no second copy), for a few
/// output rows at a time (sized for L2), from zero-padded copies of the
/// group's planes when they fit (1-D/2-D), each chunk one task.
template <typename C>
void convIm2col(const C *x, const C *w, const C *bias, C *y, int64_t N, int64_t Cin, int64_t M,
                int64_t group, const Window &win, const Epilogue<C> &epilogue) {
  const Window::Dims3 g = win.to3d();
  const int64_t inS = win.inSize(), outS = win.outSize(), kS = win.kernelSize();
  const int64_t Cg = Cin / group, Mg = M / group;
  // The bias is added after the product (as ONNX Runtime does), so that the
  // rounding of every output follows the same sequence of operations; the
  // GEMM adds it as it stores its last K slice (see sgemm's rowBias).
  auto biasOf = [&](int64_t gi) { return bias ? bias + gi * Mg : nullptr; };
  const int64_t rows = Cg * kS;
  const int64_t ow = g.out[2], gridRows = g.out[0] * g.out[1];
  // Chunks small enough for L2 when that still leaves the GEMM at least
  // kMinChunkColumns columns (it repacks A for every call); never larger
  // than the few-MB chunks.
  int64_t step =
      std::min(chunkRows(rows, ow, gridRows),
               std::max((kConvColumnBudget + rows * ow - 1) / std::max<int64_t>(1, rows * ow),
                        (kMinChunkColumns + ow - 1) / ow));
  // With threads, the chunks are the tasks (each builds its own columns and
  // runs its GEMM): cut into a multiple of the thread count, at least four
  // per thread (a late worker then leaves its share to the others), as long
  // as a chunk keeps kMinThreadColumns columns. The GEMM's K slice is the whole
  // product's whatever the cut (gemmPackedB's sliceColumns), so results do
  // not depend on it.
  const int threads =
      worthSplitting(N * M * rows * outS, N * (Cin * inS + M * outS)) ? threadCount() : 1;
  if (threads > 1) {
    int64_t chunks = (gridRows + step - 1) / step;
    chunks = std::max<int64_t>((chunks + threads - 1) / threads * threads, 4 * threads);
    int64_t even = (gridRows + chunks - 1) / chunks;
    if (even * ow >= kMinThreadColumns && gridRows > even)
      step = even;
  }
  const int64_t chunks = (gridRows + step - 1) / step;
  const int64_t width = gemmPanelWidth<C>();
  const int64_t colSize = rows * ((step * ow + width - 1) / width) * width;
  // 1-D/2-D: the group's channels are first copied zero-padded (a pass over
  // the input), so that every column row is one contiguous copy.
  PaddedPlan plan;
  const bool padded = planPadded(g, plan) && Cg * plan.rows * plan.rowPitch <= kPaddedBudget;
  const int64_t planeSize = plan.rows * plan.rowPitch;
  C *planes = padded ? scratch<C, 2>(Cg * planeSize) : nullptr;
  for (int64_t n = 0; n < N; ++n)
    for (int64_t gi = 0; gi < group; ++gi) {
      const C *xg = x + (n * Cin + gi * Cg) * inS;
      const C *wg = w + gi * Mg * rows;
      C *yg = y + (n * M + gi * Mg) * outS;
      if (padded) {
        auto fill = [&](int64_t c) { fillPadded(xg + c * inS, g, plan, planes + c * planeSize); };
        parallelForIf(threads > 1 && Cg * planeSize >= kParallelMinElements, Cg, fill);
      }
      auto chunk = [&](int64_t t) {
        const int64_t r0 = t * step, nr = std::min(step, gridRows - r0);
        C *col = scratch<C>(colSize);
        if (padded)
          im2colFromPadded(planes, planeSize, Cg, g, plan, r0, nr, width, col);
        else
          im2colPacked(xg, Cg, g, r0, nr, width, col);
        gemmPackedB(false, Mg, nr * ow, rows, C(1), wg, rows, col, width, C(0), yg + r0 * ow,
                    outS, biasOf(gi), outS);
        if (epilogue.on())
          for (int64_t m = 0; m < Mg; ++m)
            epilogue(yg + m * outS + r0 * ow, nr * ow);
      };
      parallelForIf(threads > 1, chunks, chunk);
    }
}

template void convPointwiseGemm<float>(const float *, const float *, const float *, float *,
                                      int64_t, int64_t, int64_t, int64_t, const Window &,
                                      const Epilogue<float> &);
template void convPointwiseGemm<double>(const double *, const double *, const double *, double *,
                                      int64_t, int64_t, int64_t, int64_t, const Window &,
                                      const Epilogue<double> &);
template void convFewColumns<float>(const float *, const float *, const float *, float *, int64_t,
                                   int64_t, int64_t, int64_t, const Window::Dims3 &,
                                   const Epilogue<float> &);
template void convFewColumns<double>(const double *, const double *, const double *, double *, int64_t,
                                   int64_t, int64_t, int64_t, const Window::Dims3 &,
                                   const Epilogue<double> &);
template void convIm2col<float>(const float *, const float *, const float *, float *, int64_t,
                               int64_t, int64_t, int64_t, const Window &, const Epilogue<float> &);
template void convIm2col<double>(const double *, const double *, const double *, double *, int64_t,
                               int64_t, int64_t, int64_t, const Window &, const Epilogue<double> &);

} // namespace onnxslim::rt::nn
