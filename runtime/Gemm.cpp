//===- runtime/Gemm.cpp - Blocked GEMM engine ------------------------------===//
//
// GotoBLAS-style GEMM: the N dimension is split in NC-wide blocks, K in
// KC-deep slices and M in MC-tall blocks. For each (NC, KC) block of op(B) a
// packed copy is made in NR-wide column panels; for each (MC, KC) block of
// op(A) a packed copy in MR-tall row panels. The micro-kernel multiplies one
// A panel by one B panel into an MR x NR register tile (two vector registers
// per row) and adds alpha times the tile into C. Edge tiles are zero-padded
// in the packed panels; partial columns go through a small scalar store.
// Matrix-vector shapes skip packing.
//
// Threads (runtime/ThreadPool.h): a wide product is cut into column parts,
// each running the whole K loop, with A packed once for all of them when
// it fits in L2 (kMaxSharedPackedA). Otherwise, within each (NC, KC) step,
// the tiles of MC rows x a range of B panels are tasks of parallelFor
// (about two per thread); each packs its own rows of A and writes its own
// part of C. The K slices stay in order, so every C element gets the same
// operations in the same order whatever the thread count: results are
// bit-identical.
//
// Micro-kernels, chosen once at run time from the CPU's features:
//  - baseline: xsimd batches of the compile-time architecture (SSE2 on a
//    portable x86-64 build), 6 x (2 batches), xsimd::fma;
//  - AVX2 + FMA: 6 x 16 floats / 6 x 8 doubles;
//  - AVX-512F: 12 x 32 floats / 12 x 16 doubles.
// The AVX kernels are compiled for their instruction set with function
// target attributes (the rest of the binary stays portable) and are
// specialized on the number of live rows, so short edge panels do not pay
// for a full tile. They split K in slices like ONNX Runtime's MLAS (128, or
// more when N is small) so that every C element sees the same sequence of
// fused multiply-adds as there; results then agree with ONNX Runtime to the
// last bit far more often, which keeps whole-model comparisons tight.
// The family is chosen once for the whole runtime (runtime/Simd.h);
// ONNXSLIM_GEMM_ISA=baseline|avx2|avx512 (or setGemmEngine) picks another
// family the CPU supports (tests, benchmarks).
//
//===----------------------------------------------------------------------===//
#include "runtime/Gemm.h"
#include "runtime/Simd.h"
#include "runtime/ThreadPool.h"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <type_traits>
#include <utility>
#include <vector>

namespace onnxslim::rt {
namespace {

using simd::AlignedVector;
using simd::Batch;
using simd::currentIsa;
using simd::Isa;
using simd::parseIsa;

/// Adds alpha * (packed A panel x packed B panel) into the rows x nr tile at
/// C, or with `overwrite` stores it there without reading C (as if C were 0);
/// then, when `bias` is not null, adds bias[i] to row i (a separate rounding).
template <typename T>
using MicroKernelFn = void (*)(int64_t kc, const T *a, const T *b, T alpha, T *C, int64_t ldc,
                               int64_t rows, int64_t nr, bool overwrite, const T *bias);

/// One micro-kernel with its tile and cache-block sizes.
template <typename T> struct Engine {
  const char *name;
  int64_t MR, NR;
  int64_t KC; ///< K slice; 0 = the MLAS rule (128, doubled while N is small)
  int64_t MC, NC;
  MicroKernelFn<T> micro;
};

//===----------------------------------------------------------------------===//
// Small vector helpers (xsimd body, scalar tail)
//===----------------------------------------------------------------------===//

/// y[i] += a * x[i].
template <typename T> void axpy(T a, const T *x, T *y, int64_t n) {
  constexpr int64_t W = static_cast<int64_t>(Batch<T>::size);
  Batch<T> av(a);
  int64_t i = 0;
  for (; i + W <= n; i += W)
    xsimd::fma(av, Batch<T>::load_unaligned(x + i), Batch<T>::load_unaligned(y + i))
        .store_unaligned(y + i);
  for (; i < n; ++i)
    y[i] += a * x[i];
}

/// C = beta * C over an M x N block (beta == 0 writes zeros without reading).
template <typename T> void scaleC(int64_t M, int64_t N, T beta, T *C, int64_t ldc) {
  if (beta == T(1))
    return;
  constexpr int64_t W = static_cast<int64_t>(Batch<T>::size);
  for (int64_t i = 0; i < M; ++i) {
    T *row = C + i * ldc;
    if (beta == T(0)) {
      std::fill(row, row + N, T(0));
      continue;
    }
    Batch<T> bv(beta);
    int64_t j = 0;
    for (; j + W <= N; j += W)
      (Batch<T>::load_unaligned(row + j) * bv).store_unaligned(row + j);
    for (; j < N; ++j)
      row[j] *= beta;
  }
}

//===----------------------------------------------------------------------===//
// Packing
//===----------------------------------------------------------------------===//

#ifdef ONNXSLIM_ISA_X86
/// packA of a row-major float A (not transposed) on AVX-512, for panels of
/// at most 16 rows: blocks of 16 columns of the panel's rows, transposed
/// in registers, each column stored as the panel's MR values. The same
/// values as the scalar loop.
__attribute__((target("avx512f"))) void packRowsAvx512(const float *A, int64_t lda, int64_t i0,
                                                       int64_t mc, int64_t k0, int64_t kc,
                                                       int64_t MR, float *dst) {
  const __mmask16 store = simd::firstLanes(MR);
  for (int64_t ir = 0; ir < mc; ir += MR) {
    const int64_t mr = std::min(MR, mc - ir);
    float *panel = dst + ir * kc;
    for (int64_t kb = 0; kb < kc; kb += 16) {
      const int64_t n = std::min<int64_t>(16, kc - kb);
      const __mmask16 cols = simd::firstLanes(n);
      __m512 r[16];
#pragma GCC unroll 16
      for (int64_t i = 0; i < 16; ++i)
        r[i] = i < mr ? _mm512_maskz_loadu_ps(cols, A + (i0 + ir + i) * lda + k0 + kb)
                      : _mm512_setzero_ps();
      simd::transpose16(r);
#pragma GCC unroll 16
      for (int64_t j = 0; j < 16; ++j)
        if (j < n)
          _mm512_mask_storeu_ps(panel + (kb + j) * MR, store, r[j]);
    }
  }
}
#endif

/// Packs rows [i0, i0+mc) x cols [k0, k0+kc) of op(A) into MR-tall panels:
/// panel p holds, for each k, MR consecutive row values (zero past the edge).
template <typename T>
void packA(bool transA, const T *A, int64_t lda, int64_t i0, int64_t mc, int64_t k0, int64_t kc,
           int64_t MR, T *dst) {
#ifdef ONNXSLIM_ISA_X86
  if constexpr (std::is_same_v<T, float>)
    if (!transA && MR <= 16 && currentIsa().load() == Isa::Avx512)
      return packRowsAvx512(A, lda, i0, mc, k0, kc, MR, dst);
#endif
  for (int64_t ir = 0; ir < mc; ir += MR) {
    int64_t mr = std::min(MR, mc - ir);
    T *panel = dst + ir * kc;
    if (!transA) {
      for (int64_t i = 0; i < mr; ++i) {
        const T *src = A + (i0 + ir + i) * lda + k0;
        for (int64_t k = 0; k < kc; ++k)
          panel[k * MR + i] = src[k];
      }
      for (int64_t i = mr; i < MR; ++i)
        for (int64_t k = 0; k < kc; ++k)
          panel[k * MR + i] = T(0);
    } else {
      for (int64_t k = 0; k < kc; ++k) {
        const T *src = A + (k0 + k) * lda + i0 + ir;
        T *out = panel + k * MR;
        int64_t i = 0;
        for (; i < mr; ++i)
          out[i] = src[i];
        for (; i < MR; ++i)
          out[i] = T(0);
      }
    }
  }
}

/// Packs rows [k0, k0+kc) x cols [j0, j0+nc) of op(B) into NR-wide panels:
/// panel p holds, for each k, NR consecutive column values (zero past the
/// edge). NR is a template parameter so that full-panel copies inline.
template <typename T, int64_t NR>
void packBFixed(bool transB, const T *B, int64_t ldb, int64_t k0, int64_t kc, int64_t j0,
                int64_t nc, T *dst) {
  for (int64_t jr = 0; jr < nc; jr += NR) {
    int64_t nr = std::min(NR, nc - jr);
    T *panel = dst + jr * kc;
    if (!transB) {
      const T *src = B + k0 * ldb + j0 + jr;
      if (nr == NR) {
        for (int64_t k = 0; k < kc; ++k, src += ldb)
          std::memcpy(panel + k * NR, src, sizeof(T) * NR);
      } else {
        for (int64_t k = 0; k < kc; ++k, src += ldb) {
          T *out = panel + k * NR;
          std::memcpy(out, src, sizeof(T) * static_cast<size_t>(nr));
          std::fill(out + nr, out + NR, T(0));
        }
      }
    } else {
      for (int64_t j = 0; j < nr; ++j) {
        const T *src = B + (j0 + jr + j) * ldb + k0;
        for (int64_t k = 0; k < kc; ++k)
          panel[k * NR + j] = src[k];
      }
      for (int64_t j = nr; j < NR; ++j)
        for (int64_t k = 0; k < kc; ++k)
          panel[k * NR + j] = T(0);
    }
  }
}

template <typename T>
void packB(bool transB, const T *B, int64_t ldb, int64_t k0, int64_t kc, int64_t j0, int64_t nc,
           int64_t NR, T *dst) {
  switch (NR) {
  case 4: return packBFixed<T, 4>(transB, B, ldb, k0, kc, j0, nc, dst);
  case 8: return packBFixed<T, 8>(transB, B, ldb, k0, kc, j0, nc, dst);
  case 16: return packBFixed<T, 16>(transB, B, ldb, k0, kc, j0, nc, dst);
  default: return packBFixed<T, 32>(transB, B, ldb, k0, kc, j0, nc, dst);
  }
}

/// Adds alpha * tile (rows x NR, row stride NR) into the rows x nr block of
/// C; with `overwrite`, C is not read (the same values as when it holds 0);
/// then adds bias[i] to row i when `bias` is not null.
template <typename T>
void addTile(const T *tile, int64_t NR, T alpha, T *C, int64_t ldc, int64_t rows, int64_t nr,
             bool overwrite, const T *bias) {
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < nr; ++j) {
      T v = (overwrite ? T(0) : C[i * ldc + j]) + alpha * tile[i * NR + j];
      C[i * ldc + j] = bias ? v + bias[i] : v;
    }
}

//===----------------------------------------------------------------------===//
// Baseline micro-kernel (xsimd, compile-time architecture)
//===----------------------------------------------------------------------===//

template <typename T>
void microBaseline(int64_t kc, const T *a, const T *b, T alpha, T *C, int64_t ldc, int64_t rows,
                   int64_t nr, bool overwrite, const T *bias) {
  using B = Batch<T>;
  constexpr int64_t W = static_cast<int64_t>(B::size);
  constexpr int64_t MR = 6;
  constexpr int64_t NR = 2 * W;
  B c00(T(0)), c01(T(0)), c10(T(0)), c11(T(0)), c20(T(0)), c21(T(0));
  B c30(T(0)), c31(T(0)), c40(T(0)), c41(T(0)), c50(T(0)), c51(T(0));
  for (int64_t k = 0; k < kc; ++k) {
    B b0 = B::load_aligned(b);
    B b1 = B::load_aligned(b + W);
    B a0(a[0]);
    c00 = xsimd::fma(a0, b0, c00);
    c01 = xsimd::fma(a0, b1, c01);
    B a1(a[1]);
    c10 = xsimd::fma(a1, b0, c10);
    c11 = xsimd::fma(a1, b1, c11);
    B a2(a[2]);
    c20 = xsimd::fma(a2, b0, c20);
    c21 = xsimd::fma(a2, b1, c21);
    B a3(a[3]);
    c30 = xsimd::fma(a3, b0, c30);
    c31 = xsimd::fma(a3, b1, c31);
    B a4(a[4]);
    c40 = xsimd::fma(a4, b0, c40);
    c41 = xsimd::fma(a4, b1, c41);
    B a5(a[5]);
    c50 = xsimd::fma(a5, b0, c50);
    c51 = xsimd::fma(a5, b1, c51);
    a += MR;
    b += NR;
  }
  B av(alpha);
  if (rows == MR && nr == NR) {
    auto update = [&](int64_t i, const B &x0, const B &x1) {
      T *row = C + i * ldc;
      B old0 = overwrite ? B(T(0)) : B::load_unaligned(row);
      B old1 = overwrite ? B(T(0)) : B::load_unaligned(row + W);
      B v0 = xsimd::fma(av, x0, old0), v1 = xsimd::fma(av, x1, old1);
      if (bias) {
        v0 += B(bias[i]);
        v1 += B(bias[i]);
      }
      v0.store_unaligned(row);
      v1.store_unaligned(row + W);
    };
    update(0, c00, c01);
    update(1, c10, c11);
    update(2, c20, c21);
    update(3, c30, c31);
    update(4, c40, c41);
    update(5, c50, c51);
    return;
  }
  alignas(64) T tile[MR * NR];
  const B *acc[MR][2] = {{&c00, &c01}, {&c10, &c11}, {&c20, &c21},
                         {&c30, &c31}, {&c40, &c41}, {&c50, &c51}};
  for (int64_t i = 0; i < MR; ++i) {
    acc[i][0]->store_aligned(tile + i * NR);
    acc[i][1]->store_aligned(tile + i * NR + W);
  }
  addTile(tile, NR, alpha, C, ldc, rows, nr, overwrite, bias);
}

template <typename T> Engine<T> baselineEngine() {
  constexpr int64_t NR = 2 * static_cast<int64_t>(Batch<T>::size);
  return Engine<T>{"baseline", 6, NR, 256, 6 * 24, NR * (2048 / NR), microBaseline<T>};
}

//===----------------------------------------------------------------------===//
// AVX2 + FMA and AVX-512F micro-kernels (run-time dispatched)
//===----------------------------------------------------------------------===//

#ifdef ONNXSLIM_ISA_X86

// Each kernel keeps two accumulator registers per row, named cI0 and cI1;
// ROW_STEP/ROW_STORE/ROW_TILE act only on rows below ROWS (the others are
// dead and optimized away), so every specialization is straight-line code
// with its accumulators in registers.
#define ONNXSLIM_ROWS_6(X) X(0) X(1) X(2) X(3) X(4) X(5)
#define ONNXSLIM_ROWS_12(X) ONNXSLIM_ROWS_6(X) X(6) X(7) X(8) X(9) X(10) X(11)

#define ONNXSLIM_DEFINE_KERNEL(NAME, TARGET, T, VEC, W, MRMAX, ROWS_LIST, LOAD, BCAST)           \
  template <int ROWS, bool OVER>                                                                   \
  __attribute__((target(TARGET))) void NAME(int64_t kc, const T *a, const T *b, T alpha, T *C,     \
                                            int64_t ldc, int64_t nr, const T *bias) {              \
    constexpr int64_t NR = 2 * (W);                                                                \
    ROWS_LIST(ONNXSLIM_ROW_DECL_##NAME)                                                            \
    for (int64_t k = 0; k < kc; ++k) {                                                             \
      /* B eight steps ahead: a panel of filters read once, from memory. */                         \
      __builtin_prefetch(b + 8 * NR);                                                              \
      if constexpr (NR * sizeof(T) > 64)                                                           \
        __builtin_prefetch(b + 8 * NR + 64 / sizeof(T));                                           \
      VEC b0 = LOAD(b);                                                                            \
      VEC b1 = LOAD(b + (W));                                                                      \
      ROWS_LIST(ONNXSLIM_ROW_STEP_##NAME)                                                          \
      a += (MRMAX);                                                                                \
      b += NR;                                                                                     \
    }                                                                                              \
    if (nr == NR) {                                                                                \
      VEC av = BCAST(&alpha);                                                                      \
      if (bias) {                                                                                  \
        ROWS_LIST(ONNXSLIM_ROW_STOREB_##NAME)                                                      \
      } else {                                                                                     \
        ROWS_LIST(ONNXSLIM_ROW_STORE_##NAME)                                                       \
      }                                                                                            \
    } else {                                                                                       \
      alignas(64) T tile[(MRMAX) * NR];                                                            \
      ROWS_LIST(ONNXSLIM_ROW_TILE_##NAME)                                                          \
      addTile(tile, NR, alpha, C, ldc, ROWS, nr, OVER, bias);                                      \
    }                                                                                              \
  }

// --- AVX2 float: 6 x 16 ---
#define ONNXSLIM_ROW_DECL_microAvx2F(i) [[maybe_unused]] __m256 c##i##0 = _mm256_setzero_ps(), c##i##1 = _mm256_setzero_ps();
#define ONNXSLIM_ROW_STEP_microAvx2F(i)                                                            \
  if constexpr (ROWS > i) {                                                                        \
    __m256 a##i = _mm256_broadcast_ss(a + i);                                                      \
    c##i##0 = _mm256_fmadd_ps(a##i, b0, c##i##0);                                                  \
    c##i##1 = _mm256_fmadd_ps(a##i, b1, c##i##1);                                                  \
  }
#define ONNXSLIM_ROW_STORE_microAvx2F(i)                                                           \
  if constexpr (ROWS > i) {                                                                        \
    float *r = C + i * ldc;                                                                        \
    __m256 o0 = OVER ? _mm256_setzero_ps() : _mm256_loadu_ps(r);                                   \
    _mm256_storeu_ps(r, _mm256_fmadd_ps(av, c##i##0, o0));                                         \
    __m256 o1 = OVER ? _mm256_setzero_ps() : _mm256_loadu_ps(r + 8);                               \
    _mm256_storeu_ps(r + 8, _mm256_fmadd_ps(av, c##i##1, o1));                                     \
  }
#define ONNXSLIM_ROW_STOREB_microAvx2F(i)                                                          \
  if constexpr (ROWS > i) {                                                                        \
    float *r = C + i * ldc;                                                                        \
    __m256 o0 = OVER ? _mm256_setzero_ps() : _mm256_loadu_ps(r);                                   \
    _mm256_storeu_ps(r, _mm256_add_ps(_mm256_fmadd_ps(av, c##i##0, o0), _mm256_set1_ps(bias[i]))); \
    __m256 o1 = OVER ? _mm256_setzero_ps() : _mm256_loadu_ps(r + 8);                               \
    _mm256_storeu_ps(r + 8,                                                                        \
                     _mm256_add_ps(_mm256_fmadd_ps(av, c##i##1, o1), _mm256_set1_ps(bias[i])));    \
  }
#define ONNXSLIM_ROW_TILE_microAvx2F(i)                                                            \
  if constexpr (ROWS > i) {                                                                        \
    _mm256_store_ps(tile + i * NR, c##i##0);                                                       \
    _mm256_store_ps(tile + i * NR + 8, c##i##1);                                                   \
  }
ONNXSLIM_DEFINE_KERNEL(microAvx2F, "avx2,fma", float, __m256, 8, 6, ONNXSLIM_ROWS_6, _mm256_load_ps,
                       _mm256_broadcast_ss)

// --- AVX2 double: 6 x 8 ---
#define ONNXSLIM_ROW_DECL_microAvx2D(i) [[maybe_unused]] __m256d c##i##0 = _mm256_setzero_pd(), c##i##1 = _mm256_setzero_pd();
#define ONNXSLIM_ROW_STEP_microAvx2D(i)                                                            \
  if constexpr (ROWS > i) {                                                                        \
    __m256d a##i = _mm256_broadcast_sd(a + i);                                                     \
    c##i##0 = _mm256_fmadd_pd(a##i, b0, c##i##0);                                                  \
    c##i##1 = _mm256_fmadd_pd(a##i, b1, c##i##1);                                                  \
  }
#define ONNXSLIM_ROW_STORE_microAvx2D(i)                                                           \
  if constexpr (ROWS > i) {                                                                        \
    double *r = C + i * ldc;                                                                       \
    __m256d o0 = OVER ? _mm256_setzero_pd() : _mm256_loadu_pd(r);                                  \
    _mm256_storeu_pd(r, _mm256_fmadd_pd(av, c##i##0, o0));                                         \
    __m256d o1 = OVER ? _mm256_setzero_pd() : _mm256_loadu_pd(r + 4);                              \
    _mm256_storeu_pd(r + 4, _mm256_fmadd_pd(av, c##i##1, o1));                                     \
  }
#define ONNXSLIM_ROW_STOREB_microAvx2D(i)                                                          \
  if constexpr (ROWS > i) {                                                                        \
    double *r = C + i * ldc;                                                                       \
    __m256d o0 = OVER ? _mm256_setzero_pd() : _mm256_loadu_pd(r);                                  \
    _mm256_storeu_pd(r, _mm256_add_pd(_mm256_fmadd_pd(av, c##i##0, o0), _mm256_set1_pd(bias[i]))); \
    __m256d o1 = OVER ? _mm256_setzero_pd() : _mm256_loadu_pd(r + 4);                              \
    _mm256_storeu_pd(r + 4,                                                                        \
                     _mm256_add_pd(_mm256_fmadd_pd(av, c##i##1, o1), _mm256_set1_pd(bias[i])));    \
  }
#define ONNXSLIM_ROW_TILE_microAvx2D(i)                                                            \
  if constexpr (ROWS > i) {                                                                        \
    _mm256_store_pd(tile + i * NR, c##i##0);                                                       \
    _mm256_store_pd(tile + i * NR + 4, c##i##1);                                                   \
  }
ONNXSLIM_DEFINE_KERNEL(microAvx2D, "avx2,fma", double, __m256d, 4, 6, ONNXSLIM_ROWS_6,
                       _mm256_load_pd, _mm256_broadcast_sd)

// --- AVX-512F float: 12 x 32 ---
#define ONNXSLIM_ROW_DECL_microAvx512F(i) [[maybe_unused]] __m512 c##i##0 = _mm512_setzero_ps(), c##i##1 = _mm512_setzero_ps();
#define ONNXSLIM_ROW_STEP_microAvx512F(i)                                                          \
  if constexpr (ROWS > i) {                                                                        \
    __m512 a##i = _mm512_set1_ps(a[i]);                                                            \
    c##i##0 = _mm512_fmadd_ps(a##i, b0, c##i##0);                                                  \
    c##i##1 = _mm512_fmadd_ps(a##i, b1, c##i##1);                                                  \
  }
#define ONNXSLIM_ROW_STORE_microAvx512F(i)                                                         \
  if constexpr (ROWS > i) {                                                                        \
    float *r = C + i * ldc;                                                                        \
    __m512 o0 = OVER ? _mm512_setzero_ps() : _mm512_loadu_ps(r);                                   \
    _mm512_storeu_ps(r, _mm512_fmadd_ps(av, c##i##0, o0));                                         \
    __m512 o1 = OVER ? _mm512_setzero_ps() : _mm512_loadu_ps(r + 16);                              \
    _mm512_storeu_ps(r + 16, _mm512_fmadd_ps(av, c##i##1, o1));                                    \
  }
#define ONNXSLIM_ROW_STOREB_microAvx512F(i)                                                        \
  if constexpr (ROWS > i) {                                                                        \
    float *r = C + i * ldc;                                                                        \
    __m512 o0 = OVER ? _mm512_setzero_ps() : _mm512_loadu_ps(r);                                   \
    _mm512_storeu_ps(r, _mm512_add_ps(_mm512_fmadd_ps(av, c##i##0, o0), _mm512_set1_ps(bias[i]))); \
    __m512 o1 = OVER ? _mm512_setzero_ps() : _mm512_loadu_ps(r + 16);                              \
    _mm512_storeu_ps(r + 16,                                                                       \
                     _mm512_add_ps(_mm512_fmadd_ps(av, c##i##1, o1), _mm512_set1_ps(bias[i])));    \
  }
#define ONNXSLIM_ROW_TILE_microAvx512F(i)                                                          \
  if constexpr (ROWS > i) {                                                                        \
    _mm512_store_ps(tile + i * NR, c##i##0);                                                       \
    _mm512_store_ps(tile + i * NR + 16, c##i##1);                                                  \
  }
#define ONNXSLIM_BCAST512F(p) _mm512_set1_ps(*(p))
ONNXSLIM_DEFINE_KERNEL(microAvx512F, "avx512f", float, __m512, 16, 12, ONNXSLIM_ROWS_12,
                       _mm512_load_ps, ONNXSLIM_BCAST512F)

// --- AVX-512F double: 12 x 16 ---
#define ONNXSLIM_ROW_DECL_microAvx512D(i) [[maybe_unused]] __m512d c##i##0 = _mm512_setzero_pd(), c##i##1 = _mm512_setzero_pd();
#define ONNXSLIM_ROW_STEP_microAvx512D(i)                                                          \
  if constexpr (ROWS > i) {                                                                        \
    __m512d a##i = _mm512_set1_pd(a[i]);                                                           \
    c##i##0 = _mm512_fmadd_pd(a##i, b0, c##i##0);                                                  \
    c##i##1 = _mm512_fmadd_pd(a##i, b1, c##i##1);                                                  \
  }
#define ONNXSLIM_ROW_STORE_microAvx512D(i)                                                         \
  if constexpr (ROWS > i) {                                                                        \
    double *r = C + i * ldc;                                                                       \
    __m512d o0 = OVER ? _mm512_setzero_pd() : _mm512_loadu_pd(r);                                  \
    _mm512_storeu_pd(r, _mm512_fmadd_pd(av, c##i##0, o0));                                         \
    __m512d o1 = OVER ? _mm512_setzero_pd() : _mm512_loadu_pd(r + 8);                              \
    _mm512_storeu_pd(r + 8, _mm512_fmadd_pd(av, c##i##1, o1));                                     \
  }
#define ONNXSLIM_ROW_STOREB_microAvx512D(i)                                                        \
  if constexpr (ROWS > i) {                                                                        \
    double *r = C + i * ldc;                                                                       \
    __m512d o0 = OVER ? _mm512_setzero_pd() : _mm512_loadu_pd(r);                                  \
    _mm512_storeu_pd(r, _mm512_add_pd(_mm512_fmadd_pd(av, c##i##0, o0), _mm512_set1_pd(bias[i]))); \
    __m512d o1 = OVER ? _mm512_setzero_pd() : _mm512_loadu_pd(r + 8);                              \
    _mm512_storeu_pd(r + 8,                                                                        \
                     _mm512_add_pd(_mm512_fmadd_pd(av, c##i##1, o1), _mm512_set1_pd(bias[i])));    \
  }
#define ONNXSLIM_ROW_TILE_microAvx512D(i)                                                          \
  if constexpr (ROWS > i) {                                                                        \
    _mm512_store_pd(tile + i * NR, c##i##0);                                                       \
    _mm512_store_pd(tile + i * NR + 8, c##i##1);                                                   \
  }
#define ONNXSLIM_BCAST512D(p) _mm512_set1_pd(*(p))
ONNXSLIM_DEFINE_KERNEL(microAvx512D, "avx512f", double, __m512d, 8, 12, ONNXSLIM_ROWS_12,
                       _mm512_load_pd, ONNXSLIM_BCAST512D)

/// Calls the ROWS-row specialization of kernel K for rows in [1, MAX].
template <typename T, int MAX, template <int> class K>
void byRows(int64_t kc, const T *a, const T *b, T alpha, T *C, int64_t ldc, int64_t rows,
            int64_t nr, bool overwrite, const T *bias) {
  [&]<int... I>(std::integer_sequence<int, I...>) {
    ((rows == I + 1 ? (overwrite ? K<I + 1>::template run<true>(kc, a, b, alpha, C, ldc, nr, bias)
                                 : K<I + 1>::template run<false>(kc, a, b, alpha, C, ldc, nr, bias),
                       true)
                    : false) ||
     ...);
  }(std::make_integer_sequence<int, MAX>{});
}

template <int R> struct Avx2F {
  template <bool Over>
  static void run(int64_t kc, const float *a, const float *b, float al, float *C, int64_t ldc,
                  int64_t nr, const float *bias) {
    microAvx2F<R, Over>(kc, a, b, al, C, ldc, nr, bias);
  }
};
template <int R> struct Avx2D {
  template <bool Over>
  static void run(int64_t kc, const double *a, const double *b, double al, double *C, int64_t ldc,
                  int64_t nr, const double *bias) {
    microAvx2D<R, Over>(kc, a, b, al, C, ldc, nr, bias);
  }
};
template <int R> struct Avx512F {
  template <bool Over>
  static void run(int64_t kc, const float *a, const float *b, float al, float *C, int64_t ldc,
                  int64_t nr, const float *bias) {
    microAvx512F<R, Over>(kc, a, b, al, C, ldc, nr, bias);
  }
};
template <int R> struct Avx512D {
  template <bool Over>
  static void run(int64_t kc, const double *a, const double *b, double al, double *C,
                  int64_t ldc, int64_t nr, const double *bias) {
    microAvx512D<R, Over>(kc, a, b, al, C, ldc, nr, bias);
  }
};

template <typename T> Engine<T> avx2Engine();
template <> Engine<float> avx2Engine() {
  return Engine<float>{"avx2", 6, 16, 0, 6 * 32, 2048, byRows<float, 6, Avx2F>};
}
template <> Engine<double> avx2Engine() {
  return Engine<double>{"avx2", 6, 8, 0, 6 * 16, 1024, byRows<double, 6, Avx2D>};
}
template <typename T> Engine<T> avx512Engine();
template <> Engine<float> avx512Engine() {
  return Engine<float>{"avx512", 12, 32, 0, 12 * 16, 2048, byRows<float, 12, Avx512F>};
}
template <> Engine<double> avx512Engine() {
  return Engine<double>{"avx512", 12, 16, 0, 12 * 8, 1024, byRows<double, 12, Avx512D>};
}

#endif // ONNXSLIM_ISA_X86

//===----------------------------------------------------------------------===//
// Engine selection
//===----------------------------------------------------------------------===//

template <typename T> Engine<T> engineFor(Isa isa) {
#ifdef ONNXSLIM_ISA_X86
  if (isa == Isa::Avx512)
    return avx512Engine<T>();
  if (isa == Isa::Avx2)
    return avx2Engine<T>();
#endif
  (void)isa;
  return baselineEngine<T>();
}

//===----------------------------------------------------------------------===//
// Drivers
//===----------------------------------------------------------------------===//

//===----------------------------------------------------------------------===//
// Few columns: dot products, no packing
//===----------------------------------------------------------------------===//

/// out[i * ldo + j] = sum_k A[i][k] * Bt[j][k] for i < M, j < N: each a dot
/// product of two contiguous rows, summed lane-wise over K then reduced in
/// a fixed order (the same for every call).
template <typename T, int N>
void dotRowsBaseline(int64_t M, int64_t K, const T *A, int64_t lda, const T *Bt, int64_t ldbt,
                     T *out, int64_t ldo) {
  using B = Batch<T>;
  constexpr int64_t W = static_cast<int64_t>(B::size);
  for (int64_t i = 0; i < M; ++i) {
    const T *a = A + i * lda;
    B acc[N];
    for (int j = 0; j < N; ++j)
      acc[j] = B(T(0));
    int64_t k = 0;
    for (; k + W <= K; k += W) {
      const B av = B::load_unaligned(a + k);
      for (int j = 0; j < N; ++j)
        acc[j] = xsimd::fma(av, B::load_unaligned(Bt + j * ldbt + k), acc[j]);
    }
    for (int j = 0; j < N; ++j) {
      T sum = xsimd::hadd(acc[j]);
      for (int64_t kk = k; kk < K; ++kk)
        sum += a[kk] * Bt[j * ldbt + kk];
      out[i * ldo + j] = sum;
    }
  }
}

#ifdef ONNXSLIM_ISA_X86
/// The sum of the 16 lanes, halves added pairwise (a fixed order). GCC 12's
/// _mm512_reduce_add_ps trips -Wmaybe-uninitialized in its own header.
__attribute__((target("avx512f"))) inline float sumLanes(__m512 v) {
  // The zero-masked extracts: the plain ones start from an undefined vector.
  const __m256 lo = _mm256_castpd_ps(_mm512_maskz_extractf64x4_pd(0xF, _mm512_castps_pd(v), 0));
  const __m256 hi = _mm256_castpd_ps(_mm512_maskz_extractf64x4_pd(0xF, _mm512_castps_pd(v), 1));
  const __m256 s8 = _mm256_add_ps(lo, hi);
  const __m128 s4 = _mm_add_ps(_mm256_castps256_ps128(s8), _mm256_extractf128_ps(s8, 1));
  const __m128 s2 = _mm_add_ps(s4, _mm_movehl_ps(s4, s4));
  return _mm_cvtss_f32(_mm_add_ss(s2, _mm_shuffle_ps(s2, s2, 1)));
}

template <int N>
__attribute__((target("avx512f"))) void dotRowsAvx512(int64_t M, int64_t K, const float *A,
                                                      int64_t lda, const float *Bt, int64_t ldbt,
                                                      float *out, int64_t ldo) {
  for (int64_t i = 0; i < M; ++i) {
    const float *a = A + i * lda;
    __m512 acc[N];
#pragma GCC unroll 8
    for (int j = 0; j < N; ++j)
      acc[j] = _mm512_setzero_ps();
    // Plain loads before the masked tail (masked ones stall longer on
    // cache misses).
    int64_t k = 0;
    for (; k + 16 <= K; k += 16) {
      const __m512 av = _mm512_loadu_ps(a + k);
#pragma GCC unroll 8
      for (int j = 0; j < N; ++j)
        acc[j] = _mm512_fmadd_ps(av, _mm512_loadu_ps(Bt + j * ldbt + k), acc[j]);
    }
    if (k < K) {
      const __mmask16 m = __mmask16((1u << (K - k)) - 1);
      const __m512 av = _mm512_maskz_loadu_ps(m, a + k);
#pragma GCC unroll 8
      for (int j = 0; j < N; ++j)
        acc[j] = _mm512_fmadd_ps(av, _mm512_maskz_loadu_ps(m, Bt + j * ldbt + k), acc[j]);
    }
#pragma GCC unroll 8
    for (int j = 0; j < N; ++j)
      out[i * ldo + j] = sumLanes(acc[j]);
  }
}
#endif

template <typename T>
void dotRows(int64_t M, int64_t N, int64_t K, const T *A, int64_t lda, const T *Bt, int64_t ldbt,
             T *out, int64_t ldo) {
  auto go = [&]<int J>() {
#ifdef ONNXSLIM_ISA_X86
    if constexpr (std::is_same_v<T, float>)
      if (currentIsa().load() == Isa::Avx512)
        return dotRowsAvx512<J>(M, K, A, lda, Bt, ldbt, out, ldo);
#endif
    dotRowsBaseline<T, J>(M, K, A, lda, Bt, ldbt, out, ldo);
  };
  switch (N) {
  case 1: return go.template operator()<1>();
  case 2: return go.template operator()<2>();
  case 3: return go.template operator()<3>();
  case 4: return go.template operator()<4>();
  case 5: return go.template operator()<5>();
  case 6: return go.template operator()<6>();
  case 7: return go.template operator()<7>();
  default: return go.template operator()<8>();
  }
}

/// op(A) is 1 x K or op(B) is K x 1: a matrix-vector product without packing
/// (dot products of rows through dotRows when they are contiguous).
/// Elements of a matrix-vector product's matrix from which its rows are
/// cut across the threads (128K: 512 KB of floats). Each element is read
/// once, so the product is bound by memory, which two cores read faster
/// than one; in a model the matrix is cold (the layers between two runs of
/// a node used the caches), so even a matrix that would fit in one core's
/// L2 (squeeze-excitation weights) streams from memory.
constexpr int64_t kGemvSplitElements = int64_t{1} << 17;

/// Given a matrix-vector product of `rows` dot products of length K,
/// Result: how many row ranges to cut it into (1: do not split), two per
/// thread, outside a pool task.
int64_t gemvParts(int64_t rows, int64_t K) {
  const int threads = threadCount();
  if (threads <= 1 || insideParallelTask() || rows * K < kGemvSplitElements || rows < 2 * threads)
    return 1;
  return 2 * threads;
}

template <typename T>
void gemv(bool transA, bool transB, int64_t M, int64_t N, int64_t K, T alpha, const T *A,
          int64_t lda, const T *B, int64_t ldb, T beta, T *C, int64_t ldc) {
  AlignedVector<T> vec(static_cast<size_t>(K));
  if (N == 1) {
    // x[k] = op(B)(k, 0).
    for (int64_t k = 0; k < K; ++k)
      vec[k] = transB ? B[k] : B[k * ldb];
    AlignedVector<T> y(static_cast<size_t>(M), T(0));
    if (!transA) {
      const int64_t parts = gemvParts(M, K);
      parallelForIf(parts > 1, parts, [&](int64_t t) {
        const int64_t i0 = M * t / parts, i1 = M * (t + 1) / parts;
        dotRows(i1 - i0, 1, K, A + i0 * lda, lda, vec.data(), K, y.data() + i0, 1);
      });
    } else {
      for (int64_t k = 0; k < K; ++k)
        axpy(vec[k], A + k * lda, y.data(), M);
    }
    for (int64_t i = 0; i < M; ++i)
      C[i * ldc] = alpha * y[i] + (beta == T(0) ? T(0) : beta * C[i * ldc]);
    return;
  }
  // M == 1: a[k] = op(A)(0, k).
  for (int64_t k = 0; k < K; ++k)
    vec[k] = transA ? A[k * lda] : A[k];
  AlignedVector<T> y(static_cast<size_t>(N), T(0));
  if (!transB) {
    for (int64_t k = 0; k < K; ++k)
      axpy(vec[k], B + k * ldb, y.data(), N);
  } else {
    // Each output is one row's dot product, the same however the rows are
    // cut: a large B (a classifier's or a decoder's weights, read once and
    // bound by memory) is cut across the threads.
    const int64_t parts = gemvParts(N, K);
    parallelForIf(parts > 1, parts, [&](int64_t t) {
      const int64_t j0 = N * t / parts, j1 = N * (t + 1) / parts;
      dotRows(j1 - j0, 1, K, B + j0 * ldb, ldb, vec.data(), K, y.data() + j0, 1);
    });
  }
  for (int64_t j = 0; j < N; ++j)
    C[j] = alpha * y[j] + (beta == T(0) ? T(0) : beta * C[j]);
}

/// The product for op(B) of at most kFewColumns columns and A not
/// transposed: the columns of op(B) gathered into rows, then dot products
/// with the rows of A in place (packing A would cost more than the product).
template <typename T>
void gemmFewColumnsImpl(bool transB, int64_t M, int64_t N, int64_t K, T alpha, const T *A,
                        int64_t lda, const T *B, int64_t ldb, T beta, T *C, int64_t ldc) {
  AlignedVector<T> gathered;
  const T *Bt = B;
  int64_t ldbt = ldb;
  if (!transB) {
    gathered.resize(static_cast<size_t>(N * K));
    for (int64_t k = 0; k < K; ++k)
      for (int64_t j = 0; j < N; ++j)
        gathered[static_cast<size_t>(j * K + k)] = B[k * ldb + j];
    Bt = gathered.data();
    ldbt = K;
  }
  AlignedVector<T> y(static_cast<size_t>(M * N));
  // Each output is one row's dot products, the same however the rows are
  // cut: a large A (squeeze-excitation weights over one position) is cut
  // across the threads as gemv's is.
  const int64_t parts = gemvParts(M, K);
  parallelForIf(parts > 1, parts, [&](int64_t t) {
    const int64_t i0 = M * t / parts, i1 = M * (t + 1) / parts;
    dotRows(i1 - i0, N, K, A + i0 * lda, lda, Bt, ldbt, y.data() + i0 * N, N);
  });
  for (int64_t i = 0; i < M; ++i)
    for (int64_t j = 0; j < N; ++j)
      C[i * ldc + j] = alpha * y[static_cast<size_t>(i * N + j)] +
                       (beta == T(0) ? T(0) : beta * C[i * ldc + j]);
}

/// The K slice: the engine's, or MLAS's rule (128, doubled while N is small).
int64_t sliceK(int64_t engineKC, int64_t N) {
  if (engineKC > 0)
    return engineKC;
  int64_t kc = 128, sn = 128;
  while (sn > 16 && sn / 2 >= N) {
    kc *= 2;
    sn /= 2;
  }
  return kc;
}

/// C[i][j] += bias[i] over an M x N block.
template <typename T> void addRowBias(int64_t M, int64_t N, const T *bias, T *C, int64_t ldc) {
  constexpr int64_t W = static_cast<int64_t>(Batch<T>::size);
  for (int64_t i = 0; i < M; ++i) {
    T *row = C + i * ldc;
    Batch<T> bv(bias[i]);
    int64_t j = 0;
    for (; j + W <= N; j += W)
      (Batch<T>::load_unaligned(row + j) + bv).store_unaligned(row + j);
    for (; j < N; ++j)
      row[j] += bias[i];
  }
}

/// Fewest columns of a part when a product is split by columns.
constexpr int64_t kMinPartColumns = 128;

/// Most elements of A packed once for all the column parts of a product
/// (1 MB of floats, which stays in L2); a larger A is packed by each part.
constexpr int64_t kMaxSharedPackedA = int64_t{1} << 18;

/// Given the pool size and a product's shape, Result: how many column
/// ranges to run it as (1: do not split), up to four per thread. Only from outside a pool task,
/// and only when every part keeps kMinPartColumns columns (so the K slice,
/// which MLAS's rule shortens for narrow products, is the same either way).
int64_t columnParts(int threads, int64_t M, int64_t N, int64_t K, int64_t NR) {
  if (threads <= 1 || !worthSplitting(M * N * K, M * K + K * N + M * N))
    return 1;
  // Several parts per thread, so that a late worker leaves its share to
  // the others instead of holding them up; a whole number per thread once
  // there are more parts than threads (three parts on two threads left one
  // thread idle for a third of the product).
  int64_t parts = std::min<int64_t>(4 * threads, N / std::max(kMinPartColumns, NR));
  if (parts > threads)
    parts -= parts % threads;
  return std::max<int64_t>(parts, 1);
}

/// The blocked product. With `prepacked`, op(B) is not read from B: its
/// panels come ready from `prepacked` (see gemmPackedB in Gemm.h); with
/// `packer` (and `prepacked`), op(A) is not read from A either: the packer
/// writes each block's row panels (gemmPackedB's overload). With `rowBias`,
/// rowBias[i] is then added to row i of C (in the micro-kernels' stores of
/// the last K slice).
template <typename T>
void gemmImpl(bool transA, bool transB, int64_t M, int64_t N, int64_t K, T alpha, const T *A,
              int64_t lda, const T *B, int64_t ldb, T beta, T *C, int64_t ldc,
              const T *prepacked = nullptr, const T *rowBias = nullptr, int64_t kSlice = 0,
              const RowPanelPacker<T> *packer = nullptr, const T *packedAll = nullptr) {
  if (M <= 0 || N <= 0)
    return;
  if (K <= 0 || alpha == T(0)) {
    scaleC(M, N, beta, C, ldc);
    if (rowBias)
      addRowBias(M, N, rowBias, C, ldc);
    return;
  }
  if (!prepacked && !transA && N <= kFewColumns && M > 1) {
    gemmFewColumnsImpl(transB, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
    if (rowBias)
      addRowBias(M, N, rowBias, C, ldc);
    return;
  }
  if (!prepacked && (M == 1 || N == 1)) {
    gemv(transA, transB, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
    if (rowBias)
      addRowBias(M, N, rowBias, C, ldc);
    return;
  }
  // With beta == 0 the first K slice stores its products instead of adding
  // them to C, so C is neither cleared first nor read.
  const bool zeroC = beta == T(0);
  if (!zeroC)
    scaleC(M, N, beta, C, ldc);

  // A product of no more columns than an AVX2 tile on the AVX-512 engine
  // runs on the AVX2 micro-kernel: a 12x32 tile would be half empty or
  // more, and both compute each output as the same chain of fused
  // multiply-adds from zero (the same K slices), so the same bits.
  Engine<T> engine = engineFor<T>(currentIsa());
  if (!prepacked && !packedAll && currentIsa().load() == Isa::Avx512)
    if (const Engine<T> narrow = engineFor<T>(Isa::Avx2); N <= narrow.NR)
      engine = narrow;
  const int64_t MR = engine.MR, NR = engine.NR;
  const int64_t KC = kSlice > 0 ? kSlice : sliceK(engine.KC, N), MC = engine.MC, NC = engine.NC;
  const int threads = threadCount();
  // Wide products are split by columns first: a few tasks per thread, each
  // packing its own B panels and running the whole K loop for its columns
  // (the K slice stays the one of the full product, so every element sees
  // the same operations as on one thread).
  if (int64_t parts = columnParts(threads, M, N, K, NR); parts > 1) {
    const int64_t panels = (N + NR - 1) / NR;
    // A packed once for all the parts (each would pack all of it again,
    // and on two threads that half of the packing did not scale): every
    // (K slice, MC block) in the panels packA writes, slice pc's blocks
    // from pc * Mpad, block ic at ic * kc within them (sharedPanelsOf).
    thread_local AlignedVector<T> sharedA;
    const int64_t Mpad = (M + MR - 1) / MR * MR;
    const bool share = !packer && Mpad * K <= kMaxSharedPackedA;
    if (share) {
      if (sharedA.size() < static_cast<size_t>(Mpad * K))
        sharedA.resize(static_cast<size_t>(Mpad * K));
      const int64_t slices = (K + KC - 1) / KC, blocks = (M + MC - 1) / MC;
      T *shared = sharedA.data();
      parallelFor(slices * blocks, [&](int64_t t) {
        const int64_t pc = t / blocks * KC, ic = t % blocks * MC;
        const int64_t kc = std::min(KC, K - pc), mc = std::min(MC, M - ic);
        packA(transA, A, lda, ic, mc, pc, kc, MR, shared + pc * Mpad + ic * kc);
      });
    }
    const T *shared = share ? sharedA.data() : nullptr;
    parallelFor(parts, [&](int64_t t) {
      int64_t j0 = panels * t / parts * NR, j1 = std::min(N, panels * (t + 1) / parts * NR);
      if (j1 <= j0)
        return;
      const T *b = prepacked ? nullptr : transB ? B + j0 * ldb : B + j0;
      gemmImpl<T>(transA, transB, M, j1 - j0, K, alpha, A, lda, b, ldb, beta, C + j0, ldc,
                  prepacked ? prepacked + j0 * K : nullptr, rowBias, KC, packer, shared);
    });
    return;
  }
  thread_local AlignedVector<T> packedB;
  int64_t ncMax = std::min(NC, (N + NR - 1) / NR * NR);
  int64_t mcMax = std::min(MC, (M + MR - 1) / MR * MR);
  int64_t kcMax = std::min(KC, K);
  if (!prepacked && packedB.size() < static_cast<size_t>(ncMax * kcMax))
    packedB.resize(static_cast<size_t>(ncMax * kcMax));
  const int64_t icBlocks = (M + MC - 1) / MC;

  for (int64_t jc = 0; jc < N; jc += NC) {
    int64_t nc = std::min(NC, N - jc);
    for (int64_t pc = 0; pc < K; pc += KC) {
      int64_t kc = std::min(KC, K - pc);
      if (!prepacked)
        packB(transB, B, ldb, pc, kc, jc, nc, NR, packedB.data());
      // The (MC rows) x (a range of NR panels) tiles of this step are
      // independent tasks: each packs its rows of A and writes its own part
      // of C, every element computed as a single thread would.
      const int64_t panels = (nc + NR - 1) / NR;
      const bool split = threads > 1 && worthSplitting(M * nc * kc, M * kc + kc * nc + M * nc);
      const int64_t chunks =
          split ? std::min<int64_t>(panels, (2 * threads + icBlocks - 1) / icBlocks) : 1;
      const T *bStep = prepacked ? nullptr : packedB.data();
      auto tile = [&](int64_t t) {
        int64_t ic = t / chunks * MC, mc = std::min(MC, M - ic), chunk = t % chunks;
        thread_local AlignedVector<T> packedA;
        const T *aBlock = packedAll ? packedAll + pc * ((M + MR - 1) / MR * MR) + ic * kc : nullptr;
        if (!aBlock) {
          if (packedA.size() < static_cast<size_t>(mcMax * kcMax))
            packedA.resize(static_cast<size_t>(mcMax * kcMax));
          if (packer)
            (*packer)(ic, mc, pc, kc, packedA.data());
          else
            packA(transA, A, lda, ic, mc, pc, kc, MR, packedA.data());
          aBlock = packedA.data();
        }
        int64_t end = std::min(nc, panels * (chunk + 1) / chunks * NR);
        for (int64_t jr = panels * chunk / chunks * NR; jr < end; jr += NR) {
          int64_t nr = std::min(NR, nc - jr);
          const T *bPanel = prepacked ? prepacked + (jc + jr) * K + pc * NR : bStep + jr * kc;
          for (int64_t ir = 0; ir < mc; ir += MR) {
            int64_t rows = std::min(MR, mc - ir);
            const T *bias = rowBias && pc + kc >= K ? rowBias + ic + ir : nullptr;
            engine.micro(kc, aBlock + ir * kc, bPanel, alpha,
                         C + (ic + ir) * ldc + jc + jr, ldc, rows, nr, zeroC && pc == 0, bias);
          }
        }
      };
      // A step not worth splitting runs here: posting its row blocks would
      // wake a worker (which then spins through the run) for nothing.
      if (split)
        parallelFor(icBlocks * chunks, tile);
      else
        for (int64_t t = 0; t < icBlocks * chunks; ++t)
          tile(t);
    }
  }
}

/// A product whose B was packed for `width`-column panels: straight to the
/// engine when the width is the engine's, else unpacked and multiplied.
template <typename T>
void gemmPackedImpl(bool transA, int64_t M, int64_t N, int64_t K, T alpha, const T *A,
                    int64_t lda, const T *Bp, int64_t width, T beta, T *C, int64_t ldc,
                    const T *rowBias, int64_t sliceColumns) {
  const Engine<T> engine = engineFor<T>(currentIsa());
  const int64_t kSlice = sliceColumns > 0 ? sliceK(engine.KC, sliceColumns) : 0;
  if (width == engine.NR) {
    gemmImpl<T>(transA, false, M, N, K, alpha, A, lda, nullptr, 0, beta, C, ldc, Bp, rowBias,
                kSlice);
    return;
  }
  std::vector<T> B(static_cast<size_t>(std::max<int64_t>(K * N, 0)));
  for (int64_t j = 0; j < N; ++j)
    for (int64_t k = 0; k < K; ++k)
      B[static_cast<size_t>(k * N + j)] = Bp[(j / width) * K * width + k * width + j % width];
  gemmImpl<T>(transA, false, M, N, K, alpha, A, lda, B.data(), N, beta, C, ldc, nullptr, rowBias,
              kSlice);
}

} // namespace

void sgemm(bool transA, bool transB, int64_t M, int64_t N, int64_t K, float alpha, const float *A,
           int64_t lda, const float *B, int64_t ldb, float beta, float *C, int64_t ldc,
           const float *rowBias) {
  gemmImpl<float>(transA, transB, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc, nullptr, rowBias);
}

void dgemm(bool transA, bool transB, int64_t M, int64_t N, int64_t K, double alpha,
           const double *A, int64_t lda, const double *B, int64_t ldb, double beta, double *C,
           int64_t ldc, const double *rowBias) {
  gemmImpl<double>(transA, transB, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc, nullptr,
                   rowBias);
}

template <> int64_t gemmPanelWidth<float>() { return engineFor<float>(currentIsa()).NR; }
template <> int64_t gemmPanelWidth<double>() { return engineFor<double>(currentIsa()).NR; }

void gemmPackedB(bool transA, int64_t M, int64_t N, int64_t K, float alpha, const float *A,
                 int64_t lda, const float *Bp, int64_t panelWidth, float beta, float *C,
                 int64_t ldc, const float *rowBias, int64_t sliceColumns) {
  gemmPackedImpl<float>(transA, M, N, K, alpha, A, lda, Bp, panelWidth, beta, C, ldc, rowBias,
                      sliceColumns);
}

void gemmPackedB(bool transA, int64_t M, int64_t N, int64_t K, double alpha, const double *A,
                 int64_t lda, const double *Bp, int64_t panelWidth, double beta, double *C,
                 int64_t ldc, const double *rowBias, int64_t sliceColumns) {
  gemmPackedImpl<double>(transA, M, N, K, alpha, A, lda, Bp, panelWidth, beta, C, ldc, rowBias,
                      sliceColumns);
}

int64_t gemmRowPanelHeight() { return engineFor<float>(currentIsa()).MR; }

void gemmPackedB(const RowPanelPacker<float> &packA, int64_t M, int64_t N, int64_t K,
                 const float *Bp, float *C, int64_t ldc, int64_t sliceColumns) {
  const Engine<float> engine = engineFor<float>(currentIsa());
  const int64_t kSlice = sliceColumns > 0 ? sliceK(engine.KC, sliceColumns) : 0;
  gemmImpl<float>(false, false, M, N, K, 1.0f, nullptr, 0, nullptr, 0, 0.0f, C, ldc, Bp, nullptr,
                  kSlice, &packA);
}

void packBPanels(bool transB, int64_t K, int64_t N, const float *B, int64_t ldb, float *packed) {
  packB<float>(transB, B, ldb, 0, K, 0, N, gemmPanelWidth<float>(), packed);
}

bool sgemmBlocked(bool transA, int64_t M, int64_t N) {
  return M > 1 && N > 1 && (transA || N > kFewColumns);
}

bool gemmSplitsColumns(int64_t M, int64_t N, int64_t K) {
  return columnParts(threadCount(), M, N, K, engineFor<float>(currentIsa()).NR) > 1;
}

void packRowPanels(int64_t rows, int64_t K, const float *A, int64_t lda, int64_t MR,
                   float *packed) {
  packA<float>(false, A, lda, 0, rows, 0, K, MR, packed);
}

void gemmFewColumns(int64_t M, int64_t N, int64_t K, const float *A, int64_t lda,
                    const float *Bt, int64_t ldbt, float *C, int64_t ldc, const float *rowBias) {
  if (M <= 0 || N <= 0)
    return;
  for (int64_t j0 = 0; j0 < N; j0 += kFewColumns) {
    const int64_t n = std::min(kFewColumns, N - j0);
    dotRows(M, n, K, A, lda, Bt + j0 * ldbt, ldbt, C + j0, ldc);
  }
  if (rowBias)
    addRowBias(M, N, rowBias, C, ldc);
}

void gemmFewColumns(int64_t M, int64_t N, int64_t K, const double *A, int64_t lda,
                    const double *Bt, int64_t ldbt, double *C, int64_t ldc,
                    const double *rowBias) {
  if (M <= 0 || N <= 0)
    return;
  for (int64_t j0 = 0; j0 < N; j0 += kFewColumns) {
    const int64_t n = std::min(kFewColumns, N - j0);
    dotRows(M, n, K, A, lda, Bt + j0 * ldbt, ldbt, C + j0, ldc);
  }
  if (rowBias)
    addRowBias(M, N, rowBias, C, ldc);
}

bool setGemmEngine(const char *name) {
  Isa isa;
  if (!parseIsa(name, isa))
    return false;
  currentIsa() = isa;
  return true;
}

bool gemmEngineIsAvx512() { return currentIsa().load() == Isa::Avx512; }

const char *gemmEngineName() {
  switch (currentIsa().load()) {
  case Isa::Avx512:
    return "avx512";
  case Isa::Avx2:
    return "avx2";
  case Isa::Baseline:
    break;
  }
  return "baseline";
}

} // namespace onnxslim::rt
