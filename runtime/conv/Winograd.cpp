//===- runtime/conv/Winograd.cpp - Winograd F(2x2, 3x3) convolution -------===//
//
// Float 3x3 convolutions at unit strides and dilations, one group, with 16
// or more channels each way, as Winograd's minimal filtering F(2x2, 3x3):
// 16 direct products (convProductDirect, runtime/conv/Kernels.h) of the
// transformed filters, kept transformed in the node's state for a constant
// W, by the transformed input patches, chunk by chunk of tile rows. The
// input and output transforms have AVX-512 versions (the same additions
// and subtractions in the same order as the portable loops beside them).
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
#include <type_traits>
#include <vector>

namespace onnxslim::rt::nn {
namespace {

using simd::currentIsa;
using simd::Isa;

#ifdef ONNXSLIM_ISA_X86
/// Lanes [0, n) of a 16-lane step at q (all when 16 fit).
inline __mmask16 lanesFrom(int64_t q, int64_t n) {
  return n - q >= 16 ? __mmask16(0xFFFF) : static_cast<__mmask16>((1u << (n - q)) - 1u);
}

__attribute__((target("avx512f"))) void winogradRowCombosAvx512(const float *d, int64_t ld,
                                                                 int64_t n, float *t,
                                                                 int64_t ldt) {
  for (int64_t q = 0; q < n; q += 16) {
    const __mmask16 m = lanesFrom(q, n);
    const __m512 d0 = _mm512_maskz_loadu_ps(m, d + q), d1 = _mm512_maskz_loadu_ps(m, d + ld + q),
                 d2 = _mm512_maskz_loadu_ps(m, d + 2 * ld + q),
                 d3 = _mm512_maskz_loadu_ps(m, d + 3 * ld + q);
    _mm512_mask_storeu_ps(t + q, m, _mm512_sub_ps(d0, d2));
    _mm512_mask_storeu_ps(t + ldt + q, m, _mm512_add_ps(d1, d2));
    _mm512_mask_storeu_ps(t + 2 * ldt + q, m, _mm512_sub_ps(d2, d1));
    _mm512_mask_storeu_ps(t + 3 * ldt + q, m, _mm512_sub_ps(d1, d3));
  }
}

__attribute__((target("avx512f"))) void winogradColumnCombosAvx512(const float *e,
                                                                    const float *o, int64_t n,
                                                                    float *v, int64_t ldv) {
  for (int64_t q = 0; q < n; q += 16) {
    const __mmask16 m = lanesFrom(q, n);
    const __m512 e0 = _mm512_maskz_loadu_ps(m, e + q), e1 = _mm512_maskz_loadu_ps(m, e + q + 1),
                 o0 = _mm512_maskz_loadu_ps(m, o + q), o1 = _mm512_maskz_loadu_ps(m, o + q + 1);
    _mm512_mask_storeu_ps(v + q, m, _mm512_sub_ps(e0, e1));
    _mm512_mask_storeu_ps(v + ldv + q, m, _mm512_add_ps(o0, e1));
    _mm512_mask_storeu_ps(v + 2 * ldv + q, m, _mm512_sub_ps(e1, o0));
    _mm512_mask_storeu_ps(v + 3 * ldv + q, m, _mm512_sub_ps(o0, o1));
  }
}

__attribute__((target("avx512f"))) void winogradOutputRowAvx512(const float *p, int64_t ld,
                                                                 int row, int64_t n, float bias,
                                                                 int64_t ow, float *y) {
  const __m512i lo = _mm512_setr_epi32(0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23);
  const __m512i hi =
      _mm512_setr_epi32(8, 24, 9, 25, 10, 26, 11, 27, 12, 28, 13, 29, 14, 30, 15, 31);
  const __m512 b = _mm512_set1_ps(bias);
  for (int64_t q = 0; q < n; q += 16) {
    const __mmask16 m = lanesFrom(q, n);
    // Rows 0-2 of the products for output row 0, rows 1-3 for row 1.
    const float *p0 = p + (row == 0 ? 0 : 4) * ld + q;
    __m512 s[4];
#pragma GCC unroll 4
    for (int j = 0; j < 4; ++j) {
      const __m512 a = _mm512_maskz_loadu_ps(m, p0 + j * ld),
                   c = _mm512_maskz_loadu_ps(m, p0 + (4 + j) * ld),
                   e = _mm512_maskz_loadu_ps(m, p0 + (8 + j) * ld);
      s[j] = row == 0 ? _mm512_add_ps(_mm512_add_ps(a, c), e)
                      : _mm512_sub_ps(_mm512_sub_ps(a, c), e);
    }
    const __m512 even = _mm512_add_ps(_mm512_add_ps(_mm512_add_ps(s[0], s[1]), s[2]), b);
    const __m512 odd = _mm512_add_ps(_mm512_sub_ps(_mm512_sub_ps(s[1], s[2]), s[3]), b);
    // Outputs 2q .. 2q + 31, interleaved, up to ow.
    const int64_t left = ow - 2 * q;
    const __mmask16 m0 = lanesFrom(0, std::min<int64_t>(left, 16));
    const __mmask16 m1 = left > 16 ? lanesFrom(0, left - 16) : __mmask16(0);
    _mm512_mask_storeu_ps(y + 2 * q, m0, _mm512_permutex2var_ps(even, lo, odd));
    if (m1)
      _mm512_mask_storeu_ps(y + 2 * q + 16, m1, _mm512_permutex2var_ps(even, hi, odd));
  }
}
#endif

/// The transforms of convWinograd, AVX-512's; Result: false, with nothing
/// written, on other engines (the caller then computes the same operations
/// in the same order itself).
///  - winogradRowCombos: rows r of d (ld apart) to rows of t (ldt apart):
///    t0 = d0 - d2, t1 = d1 + d2, t2 = d2 - d1, t3 = d1 - d3, for q < n.
///  - winogradColumnCombos: a row's even columns e and odd columns o (read
///    up to index n) to rows of v (ldv apart): v0 = e[q] - e[q+1],
///    v1 = o[q] + e[q+1], v2 = e[q+1] - o[q], v3 = o[q] - o[q+1].
///  - winogradOutputRow: output row `row` (0 or 1) of n tiles from the 16
///    products p + xi * ld: s_j = (p_j + p_4+j) + p_8+j for row 0,
///    (p_4+j - p_8+j) - p_12+j for row 1; y[2q] = ((s0 + s1) + s2) + bias,
///    y[2q+1] = ((s1 - s2) - s3) + bias, for outputs below ow.
bool winogradRowCombos(const float *d, int64_t ld, int64_t n, float *t, int64_t ldt) {
#ifdef ONNXSLIM_ISA_X86
  if (currentIsa().load() == Isa::Avx512) {
    winogradRowCombosAvx512(d, ld, n, t, ldt);
    return true;
  }
#endif
  (void)d, (void)ld, (void)n, (void)t, (void)ldt;
  return false;
}

bool winogradColumnCombos(const float *e, const float *o, int64_t n, float *v, int64_t ldv) {
#ifdef ONNXSLIM_ISA_X86
  if (currentIsa().load() == Isa::Avx512) {
    winogradColumnCombosAvx512(e, o, n, v, ldv);
    return true;
  }
#endif
  (void)e, (void)o, (void)n, (void)v, (void)ldv;
  return false;
}

bool winogradOutputRow(const float *p, int64_t ld, int row, int64_t n, float bias, int64_t ow,
                       float *y) {
#ifdef ONNXSLIM_ISA_X86
  if (currentIsa().load() == Isa::Avx512) {
    winogradOutputRowAvx512(p, ld, row, n, bias, ow, y);
    return true;
  }
#endif
  (void)p, (void)ld, (void)row, (void)n, (void)bias, (void)ow, (void)y;
  return false;
}

/// Output tiles (2x2 outputs each) of a Winograd chunk, about: its 16
/// products are then GEMMs of a few hundred columns, and its transformed
/// inputs and products (16 x channels x tiles each) stay within a few MB.
constexpr int64_t kWinogradTiles = 256;

/// Fewest input and output channels of a convolution run as Winograd
/// products (below, the 16 products are too small for the GEMM).
constexpr int64_t kWinogradMinChannels = 16;

/// fn(q, batch) for q = 0, W, 2W, ... while a whole batch of W fits in n,
/// then fn(q, 0.0f) for each q left: one body for both (see loadAt).
template <typename Fn> inline void forBatches(int64_t n, Fn &&fn) {
  using B = xsimd::batch<float>;
  constexpr int64_t W = static_cast<int64_t>(B::size);
  int64_t q = 0;
  for (; q + W <= n; q += W)
    fn(q, B(0.0f));
  for (; q < n; ++q)
    fn(q, 0.0f);
}

template <typename V> inline V loadAt(const float *p, int64_t q) {
  if constexpr (std::is_same_v<V, float>)
    return p[q];
  else
    return V::load_unaligned(p + q);
}

template <typename V> inline void storeAt(float *p, int64_t q, V v) {
  if constexpr (std::is_same_v<V, float>)
    p[q] = v;
  else
    v.store_unaligned(p + q);
}

/// The filters of convWinograd: U[xi] (M x Cin) = G g G^T at each position
/// xi of the transformed domain, G = [1 0 0; .5 .5 .5; .5 -.5 .5; 0 0 1],
/// packed for the direct product (convProductDirect) position by position.
/// Kept in `kept` (group -1 marks the Winograd form) for a constant W, and
/// taken from there while w, its shape and the engine are the same; else
/// computed into `local`.
const float *winogradFilters(const float *w, int64_t M, int64_t Cin, PackedFilters *kept,
                             std::vector<float, xsimd::aligned_allocator<float, 64>> &local) {
  const char *engine = gemmEngineName();
  if (kept && kept->source == w && kept->group == -1 && kept->Mg == M && kept->rows == Cin &&
      kept->engine == engine)
    return kept->data.data();
  std::vector<float> U(static_cast<size_t>(16 * M * Cin));
  for (int64_t m = 0; m < M; ++m)
    for (int64_t c = 0; c < Cin; ++c) {
      const float *k = w + (m * Cin + c) * 9;
      float t[4][3]; // G g
      for (int j = 0; j < 3; ++j) {
        t[0][j] = k[j];
        t[1][j] = 0.5f * (k[j] + k[3 + j] + k[6 + j]);
        t[2][j] = 0.5f * (k[j] - k[3 + j] + k[6 + j]);
        t[3][j] = k[6 + j];
      }
      for (int i = 0; i < 4; ++i) {
        const float u[4] = {t[i][0], 0.5f * (t[i][0] + t[i][1] + t[i][2]),
                            0.5f * (t[i][0] - t[i][1] + t[i][2]), t[i][2]};
        for (int j = 0; j < 4; ++j)
          U[static_cast<size_t>(((i * 4 + j) * M + m) * Cin + c)] = u[j];
      }
    }
  auto &data = kept ? kept->data : local;
  const int64_t size = directFilterElements(M, Cin);
  data.resize(static_cast<size_t>(16 * size));
  for (int64_t xi = 0; xi < 16; ++xi)
    packDirectFilters(M, Cin, U.data() + xi * M * Cin, Cin, data.data() + xi * size);
  if (kept) {
    kept->source = w;
    kept->group = -1;
    kept->Mg = M;
    kept->rows = Cin;
    kept->engine = engine;
  }
  return data.data();
}

} // namespace

/// Whether a float convolution runs as Winograd F(2x2, 3x3)
/// (convWinograd): 2-D, 3x3, unit strides and dilations, one group, at
/// least kWinogradMinChannels channels in and out, planes of at least 8x8.
bool winogradFits(const Window::Dims3 &g, int64_t Cin, int64_t M, int64_t group) {
  return group == 1 && Cin >= kWinogradMinChannels && M >= kWinogradMinChannels &&
         g.kernel[0] == 1 && g.in[0] == 1 && g.kernel[1] == 3 && g.kernel[2] == 3 &&
         g.strides[1] == 1 && g.strides[2] == 1 && g.dilations[1] == 1 && g.dilations[2] == 1 &&
         g.out[1] >= 8 && g.out[2] >= 8;
}

/// A 3x3 convolution as Winograd's minimal filtering F(2x2, 3x3) (Lavin
/// and Gray, 2016): each 2x2 block of outputs is A^T [(G g G^T) . (B^T d B)] A
/// over its 4x4 input patch d, so a block costs 16 multiply-adds per input
/// channel instead of 36. For each of the 16 positions of the 4x4
/// transformed domain, the products over the channels are one GEMM of the
/// transformed filters (M x Cin) by the transformed patches (Cin x tiles).
/// Tasks are chunks of an image's tiles (consecutive in row-major order,
/// about kWinogradTiles; on threads, equal shares); each task
/// transforms its patches, runs its 16 products and writes its outputs
/// (then the bias, then the epilogue). A tile's outputs do not depend on
/// its chunk (convProductDirect's column sums do not depend on where a
/// column lies), so results do not depend on the thread count. The sums
/// differ from the direct product's in their last bits (the transforms
/// round), as ONNX Runtime's algorithms differ among themselves.
void convWinograd(const float *x, const float *w, const float *bias, float *y, int64_t N,
                  int64_t Cin, int64_t M, const Window::Dims3 &g, const Epilogue<float> &epilogue,
                  PackedFilters *kept) {
  const int64_t ih = g.in[1], iw = g.in[2], oh = g.out[1], ow = g.out[2];
  const int64_t padTop = g.padBegin[1], padLeft = g.padBegin[2];
  const int64_t inS = ih * iw, outS = oh * ow;
  const int64_t tilesH = (oh + 1) / 2, tilesW = (ow + 1) / 2, tiles = tilesH * tilesW;
  const int64_t packedSize = directFilterElements(M, Cin);
  std::vector<float, xsimd::aligned_allocator<float, 64>> local;
  const float *packed = winogradFilters(w, M, Cin, kept, local);
  const bool split = worthSplitting(N * M * Cin * 9 * outS, N * (Cin * inS + M * outS));
  // Chunks of an image. On one thread, whole rows of tiles, kWinogradTiles
  // at most (a whole row if longer). With threads, as many as
  // kWinogradTiles needs and a whole number per thread, cut anywhere in the
  // rows of tiles: at whole rows, 14x14 and 28x28 planes left the threads
  // too few chunks or mostly empty column tiles. The cuts fall on
  // multiples of a column tile where the chunks are large, of 8 tiles
  // where they are small.
  // Layers with more output channels than tiles (SqueezeNet's and
  // ResNet's 3x3 layers on 13x13 and 14x14) are cut by blocks of output
  // channels instead, one per thread, over the same chunks as on one
  // thread: their transformed filters outweigh their transformed inputs,
  // and each thread then reads its block's filters only (cut by tiles,
  // each thread read all of them, from memory in a model run).
  const int64_t columnTile = directColumnTile(), panels = directPanels(M);
  const int64_t blocks =
      split && M >= tiles && panels >= 2 * threadCount() ? threadCount() : 1;
  int64_t rowsPer = 0, chunks = 0, granule = 0;
  if (split && blocks == 1) {
    const int64_t threads = threadCount();
    chunks = (tiles + kWinogradTiles - 1) / kWinogradTiles;
    chunks = (chunks + threads - 1) / threads * threads;
    granule = tiles / chunks >= 4 * columnTile ? columnTile : 8;
  } else {
    rowsPer = std::clamp<int64_t>(kWinogradTiles / tilesW, 1, tilesH);
    chunks = (tilesH + rowsPer - 1) / rowsPer;
  }
  auto chunkStart = [&](int64_t k) {
    if (rowsPer > 0)
      return std::min(tiles, k * rowsPer * tilesW);
    const int64_t at = (2 * tiles * k / chunks + granule) / (2 * granule) * granule;
    return k >= chunks ? tiles : std::min(at, tiles);
  };
  // A patch row's even and odd columns, padding included: padded column
  // 2k is input column 2k - padLeft.
  const int64_t half = tilesW + 1, padW = 2 * half;
  auto task = [&](int64_t job) {
    const int64_t block = job % blocks, chunk = job / blocks % chunks, n = job / blocks / chunks;
    const int64_t t0 = chunkStart(chunk), t1 = chunkStart(chunk + 1);
    if (t1 <= t0)
      return;
    const int64_t p0 = panels * block / blocks, p1 = panels * (block + 1) / blocks;
    const int64_t m0 = directPanelStart(M, p0), m1 = directPanelStart(M, p1);
    const int64_t ty0 = t0 / tilesW, ty1 = (t1 - 1) / tilesW + 1, count = t1 - t0;
    // The tiles of tile row ty in the chunk: [first(ty), last(ty)).
    auto first = [&](int64_t ty) { return std::max(t0, ty * tilesW) - ty * tilesW; };
    auto last = [&](int64_t ty) { return std::min(t1, (ty + 1) * tilesW) - ty * tilesW; };
    const int64_t bufRows = 2 * (ty1 - ty0) + 2;
    // The 16 transformed inputs (Cin x T each) and products (M x T), rows
    // of T (the tiles rounded up to whole column tiles of the direct
    // product, the columns past them zero), each 64 bytes further from a
    // multiple of 4 KB than the one before (16 streams at 4 KB strides
    // would share a set of the L1 cache).
    const int64_t T = (count + columnTile - 1) / columnTile * columnTile;
    const int64_t strideV = Cin * T + 16, strideP = M * T + 16;
    float *V = scratch<float, 2>(16 * strideV + kConvDirectSlack);
    for (int64_t xi = 0; xi < 16; ++xi)
      for (int64_t c = 0; c < Cin; ++c)
        std::fill(V + xi * strideV + c * T + count, V + xi * strideV + (c + 1) * T, 0.0f);
    std::fill(V + 16 * strideV, V + 16 * strideV + kConvDirectSlack, 0.0f);
    thread_local std::vector<int64_t> offsets;
    offsets.resize(static_cast<size_t>(Cin));
    for (int64_t c = 0; c < Cin; ++c)
      offsets[static_cast<size_t>(c)] = c * T;
    float *P = scratch<float, 3>(16 * strideP);
    float *E = scratch<float, 4>(2 * bufRows * half + 8 * half + padW);
    float *O = E + bufRows * half, *tE = O + bufRows * half, *tO = tE + 4 * half;
    float *row = tO + 4 * half;
    // V[xi] = B^T d B at xi, B^T = [1 0 -1 0; 0 1 1 0; 0 -1 1 0; 0 1 0 -1]:
    // the row combinations over the chunk's part of each patch row (even
    // and odd columns apart), then the column ones, in SIMD batches of
    // tiles.
    for (int64_t c = 0; c < Cin; ++c) {
      const float *plane = x + (n * Cin + c) * inS;
      for (int64_t r = 0; r < bufRows; ++r) {
        const int64_t iy = 2 * ty0 + r - padTop;
        std::fill(row, row + padW, 0.0f);
        if (iy >= 0 && iy < ih)
          std::memcpy(row + padLeft, plane + iy * iw,
                      sizeof(float) * static_cast<size_t>(std::min(iw, padW - padLeft)));
        gatherEven(row, half, E + r * half);
        gatherEven(row + 1, half, O + r * half);
      }
      for (int64_t ty = ty0; ty < ty1; ++ty) {
        const int64_t r0 = 2 * (ty - ty0), a = first(ty), cols = last(ty) - a;
        for (int h = 0; h < 2; ++h) {
          const float *d = (h == 0 ? E : O) + r0 * half + a;
          float *t = (h == 0 ? tE : tO) + a;
          if (winogradRowCombos(d, half, cols + 1, t, half))
            continue;
          forBatches(cols + 1, [&](int64_t q, auto tag) {
            using Vt = decltype(tag);
            const Vt d0 = loadAt<Vt>(d, q), d1 = loadAt<Vt>(d + half, q),
                     d2 = loadAt<Vt>(d + 2 * half, q), d3 = loadAt<Vt>(d + 3 * half, q);
            storeAt<Vt>(t, q, d0 - d2);
            storeAt<Vt>(t + half, q, d1 + d2);
            storeAt<Vt>(t + 2 * half, q, d2 - d1);
            storeAt<Vt>(t + 3 * half, q, d1 - d3);
          });
        }
        float *v = V + c * T + ty * tilesW + a - t0;
        for (int i = 0; i < 4; ++i) {
          const float *e = tE + i * half + a, *o = tO + i * half + a;
          float *v0 = v + 4 * i * strideV, *v1 = v0 + strideV, *v2 = v1 + strideV,
                *v3 = v2 + strideV;
          if (winogradColumnCombos(e, o, cols, v0, strideV))
            continue;
          forBatches(cols, [&](int64_t q, auto tag) {
            using Vt = decltype(tag);
            const Vt e0 = loadAt<Vt>(e, q), e1 = loadAt<Vt>(e + 1, q), o0 = loadAt<Vt>(o, q),
                     o1 = loadAt<Vt>(o + 1, q);
            storeAt<Vt>(v0, q, e0 - e1);
            storeAt<Vt>(v1, q, o0 + e1);
            storeAt<Vt>(v2, q, e1 - o0);
            storeAt<Vt>(v3, q, o0 - o1);
          });
        }
      }
    }
    for (int64_t xi = 0; xi < 16; ++xi)
      convProductDirect(M, Cin, packed + xi * packedSize, V + xi * strideV, offsets.data(), 1, T,
                        count, P + xi * strideP, T, nullptr, nullptr, p0, p1);
    // Y = A^T P A + bias, A^T = [1 1 1 0; 0 1 -1 -1]: a row of tiles' even
    // and odd outputs, then interleaved into the output row (columns and
    // rows past the output dropped); then the epilogue.
    float *ev = E, *od = E + tilesW;
    for (int64_t m = m0; m < m1; ++m) {
      const float b = bias ? bias[m] : 0.0f;
      float *ym = y + (n * M + m) * outS;
      for (int64_t ty = ty0; ty < ty1; ++ty) {
        const int64_t a = first(ty), cols = last(ty) - a;
        const float *p = P + m * T + ty * tilesW + a - t0;
        const int64_t width = std::min(ow - 2 * a, 2 * cols); // outputs in the output row
        for (int64_t i = 0; i < 2 && 2 * ty + i < oh; ++i) {
          float *out = ym + (2 * ty + i) * ow + 2 * a;
          if (!winogradOutputRow(p, strideP, static_cast<int>(i), cols, b, width, out)) {
            forBatches(cols, [&](int64_t q, auto tag) {
              using Vt = decltype(tag);
              auto at = [&](int xi) { return loadAt<Vt>(p + xi * strideP, q); };
              // s_j: row i of A^T P at column j.
              Vt sj[4];
              for (int j = 0; j < 4; ++j)
                sj[j] = i == 0 ? Vt(at(j) + at(4 + j) + at(8 + j))
                               : Vt(at(4 + j) - at(8 + j) - at(12 + j));
              storeAt<Vt>(ev, q, sj[0] + sj[1] + sj[2] + Vt(b));
              storeAt<Vt>(od, q, sj[1] - sj[2] - sj[3] + Vt(b));
            });
            using B = xsimd::batch<float>;
            constexpr int64_t W = static_cast<int64_t>(B::size);
            int64_t q = 0;
            for (; 2 * (q + W) <= width; q += W) {
              const B e = B::load_unaligned(ev + q), o = B::load_unaligned(od + q);
              xsimd::zip_lo(e, o).store_unaligned(out + 2 * q);
              xsimd::zip_hi(e, o).store_unaligned(out + 2 * q + W);
            }
            for (; 2 * q < width; ++q) {
              out[2 * q] = ev[q];
              if (2 * q + 1 < width)
                out[2 * q + 1] = od[q];
            }
          }
          epilogue(out, width);
        }
      }
    }
  };
  parallelForIf(split, N * chunks * blocks, task);
}

} // namespace onnxslim::rt::nn
