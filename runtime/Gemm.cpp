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
// The direct convolution product (convProductDirect) reuses the packed A
// panels and the register tiles, but reads each row of B straight from the
// caller's zero-padded input planes at a per-row offset (2 unaligned
// vectors per k) instead of from packed panels: a unit-stride convolution
// then needs no column matrix at all. It runs on the calling thread: the
// convolution cuts its output rows into bands, each a task that fills its
// own planes (runtime/kernels/Conv.cpp).
//
// Threads (runtime/ThreadPool.h): within each (NC, KC) step, the tiles of
// MC rows x a range of B panels are tasks of parallelFor (about two per
// thread); each packs its own rows of A and writes its own part of C, and
// the K slices stay in order, so every C element gets the same operations
// in the same order whatever the thread count: results are bit-identical.
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
#include <cmath>
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

/// Packs rows [i0, i0+mc) x cols [k0, k0+kc) of op(A) into MR-tall panels:
/// panel p holds, for each k, MR consecutive row values (zero past the edge).
template <typename T>
void packA(bool transA, const T *A, int64_t lda, int64_t i0, int64_t mc, int64_t k0, int64_t kc,
           int64_t MR, T *dst) {
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
      dotRows(M, 1, K, A, lda, vec.data(), K, y.data(), 1);
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
    dotRows(N, 1, K, B, ldb, vec.data(), K, y.data(), 1);
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
  dotRows(M, N, K, A, lda, Bt, ldbt, y.data(), N);
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

/// Given the pool size and a product's shape, Result: how many column
/// ranges to run it as (1: do not split), up to four per thread. Only from outside a pool task,
/// and only when every part keeps kMinPartColumns columns (so the K slice,
/// which MLAS's rule shortens for narrow products, is the same either way).
int64_t columnParts(int threads, int64_t M, int64_t N, int64_t K, int64_t NR) {
  if (threads <= 1 || !worthSplitting(M * N * K, M * K + K * N + M * N))
    return 1;
  // Several parts per thread, so that a late worker leaves its share to
  // the others instead of holding them up.
  int64_t parts = std::min<int64_t>(4 * threads, N / std::max(kMinPartColumns, NR));
  return std::max<int64_t>(parts, 1);
}

/// The blocked product. With `prepacked`, op(B) is not read from B: its
/// panels come ready from `prepacked` (see gemmPackedB in Gemm.h). With
/// `rowBias`, rowBias[i] is then added to row i of C (in the micro-kernels'
/// stores of the last K slice).
template <typename T>
void gemmImpl(bool transA, bool transB, int64_t M, int64_t N, int64_t K, T alpha, const T *A,
              int64_t lda, const T *B, int64_t ldb, T beta, T *C, int64_t ldc,
              const T *prepacked = nullptr, const T *rowBias = nullptr, int64_t kSlice = 0) {
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

  const Engine<T> engine = engineFor<T>(currentIsa());
  const int64_t MR = engine.MR, NR = engine.NR;
  const int64_t KC = kSlice > 0 ? kSlice : sliceK(engine.KC, N), MC = engine.MC, NC = engine.NC;
  const int threads = threadCount();
  // Wide products are split by columns first: a few tasks per thread, each
  // packing its own B panels and running the whole K loop for its columns
  // (the K slice stays the one of the full product, so every element sees
  // the same operations as on one thread).
  if (int64_t parts = columnParts(threads, M, N, K, NR); parts > 1) {
    const int64_t panels = (N + NR - 1) / NR;
    parallelFor(parts, [&](int64_t t) {
      int64_t j0 = panels * t / parts * NR, j1 = std::min(N, panels * (t + 1) / parts * NR);
      if (j1 <= j0)
        return;
      const T *b = prepacked ? nullptr : transB ? B + j0 * ldb : B + j0;
      gemmImpl<T>(transA, transB, M, j1 - j0, K, alpha, A, lda, b, ldb, beta, C + j0, ldc,
                  prepacked ? prepacked + j0 * K : nullptr, rowBias, KC);
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
        if (packedA.size() < static_cast<size_t>(mcMax * kcMax))
          packedA.resize(static_cast<size_t>(mcMax * kcMax));
        packA(transA, A, lda, ic, mc, pc, kc, MR, packedA.data());
        int64_t end = std::min(nc, panels * (chunk + 1) / chunks * NR);
        for (int64_t jr = panels * chunk / chunks * NR; jr < end; jr += NR) {
          int64_t nr = std::min(NR, nc - jr);
          const T *bPanel = prepacked ? prepacked + (jc + jr) * K + pc * NR : bStep + jr * kc;
          for (int64_t ir = 0; ir < mc; ir += MR) {
            int64_t rows = std::min(MR, mc - ir);
            const T *bias = rowBias && pc + kc >= K ? rowBias + ic + ir : nullptr;
            engine.micro(kc, packedA.data() + ir * kc, bPanel, alpha,
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

//===----------------------------------------------------------------------===//
// Multi-tap row kernel (direct convolution rows)
//===----------------------------------------------------------------------===//

/// x < lo ? lo : x, then > hi ? hi : that (NaN passes), when clamping: the
/// StoreClamp of the multi-tap rows and of the direct product's stores.
template <typename T> inline T clampScalar(T x, const StoreClamp *clamp) {
  if (!clamp)
    return x;
  const T lo = static_cast<T>(clamp->lo), hi = static_cast<T>(clamp->hi);
  x = x < lo ? lo : x;
  return x > hi ? hi : x;
}

template <typename B> inline B clampBatch(B x, const StoreClamp *clamp) {
  if (!clamp)
    return x;
  using T = typename B::value_type;
  const B lo(static_cast<T>(clamp->lo)), hi(static_cast<T>(clamp->hi));
  x = xsimd::select(x < lo, lo, x);
  return xsimd::select(x > hi, hi, x);
}

/// y[i] = clamp(bias + sum_t w[t] * src[t][i]) for i < n, accumulating the
/// taps in order from zero, adding the bias last, then clamping (if asked).
template <typename T>
void multiTapBaseline(int64_t n, int64_t taps, const T *const *src, const T *w, T bias,
                      const StoreClamp *clamp, T *y) {
  using B = Batch<T>;
  constexpr int64_t W = static_cast<int64_t>(B::size);
  int64_t i = 0;
  for (; i + W <= n; i += W) {
    B acc(T(0));
    for (int64_t t = 0; t < taps; ++t)
      acc = xsimd::fma(B(w[t]), B::load_unaligned(src[t] + i), acc);
    clampBatch(acc + B(bias), clamp).store_unaligned(y + i);
  }
  for (; i < n; ++i) {
    T acc = 0;
    for (int64_t t = 0; t < taps; ++t)
      acc += w[t] * src[t][i];
    y[i] = clampScalar(acc + bias, clamp);
  }
}

#ifdef ONNXSLIM_ISA_X86
__attribute__((target("avx2,fma"))) inline __m256 clampAvx2(__m256 x, const StoreClamp *clamp) {
  if (!clamp)
    return x;
  const __m256 lo = _mm256_set1_ps(clamp->lo), hi = _mm256_set1_ps(clamp->hi);
  x = _mm256_blendv_ps(x, lo, _mm256_cmp_ps(x, lo, _CMP_LT_OQ));
  return _mm256_blendv_ps(x, hi, _mm256_cmp_ps(x, hi, _CMP_GT_OQ));
}

__attribute__((target("avx512f"))) inline __m512 clampAvx512(__m512 x, const StoreClamp *clamp) {
  if (!clamp)
    return x;
  const __m512 lo = _mm512_set1_ps(clamp->lo), hi = _mm512_set1_ps(clamp->hi);
  x = _mm512_mask_blend_ps(_mm512_cmp_ps_mask(x, lo, _CMP_LT_OQ), x, lo);
  return _mm512_mask_blend_ps(_mm512_cmp_ps_mask(x, hi, _CMP_GT_OQ), x, hi);
}

__attribute__((target("avx2,fma"))) void multiTapAvx2(int64_t n, int64_t taps,
                                                      const float *const *src, const float *w,
                                                      float bias, const StoreClamp *clamp,
                                                      float *y) {
  int64_t i = 0;
  __m256 bv = _mm256_set1_ps(bias);
  for (; i + 16 <= n; i += 16) {
    __m256 a0 = _mm256_setzero_ps(), a1 = _mm256_setzero_ps();
    for (int64_t t = 0; t < taps; ++t) {
      __m256 wv = _mm256_set1_ps(w[t]);
      a0 = _mm256_fmadd_ps(wv, _mm256_loadu_ps(src[t] + i), a0);
      a1 = _mm256_fmadd_ps(wv, _mm256_loadu_ps(src[t] + i + 8), a1);
    }
    _mm256_storeu_ps(y + i, clampAvx2(_mm256_add_ps(a0, bv), clamp));
    _mm256_storeu_ps(y + i + 8, clampAvx2(_mm256_add_ps(a1, bv), clamp));
  }
  for (; i < n; ++i) {
    float acc = 0;
    for (int64_t t = 0; t < taps; ++t)
      acc = std::fma(w[t], src[t][i], acc);
    y[i] = clampScalar(acc + bias, clamp);
  }
}

__attribute__((target("avx512f"))) void multiTapAvx512(int64_t n, int64_t taps,
                                                       const float *const *src, const float *w,
                                                       float bias, const StoreClamp *clamp,
                                                       float *y) {
  int64_t i = 0;
  __m512 bv = _mm512_set1_ps(bias);
  for (; i + 32 <= n; i += 32) {
    __m512 a0 = _mm512_setzero_ps(), a1 = _mm512_setzero_ps();
    for (int64_t t = 0; t < taps; ++t) {
      __m512 wv = _mm512_set1_ps(w[t]);
      a0 = _mm512_fmadd_ps(wv, _mm512_loadu_ps(src[t] + i), a0);
      a1 = _mm512_fmadd_ps(wv, _mm512_loadu_ps(src[t] + i + 16), a1);
    }
    _mm512_storeu_ps(y + i, clampAvx512(_mm512_add_ps(a0, bv), clamp));
    _mm512_storeu_ps(y + i + 16, clampAvx512(_mm512_add_ps(a1, bv), clamp));
  }
  for (; i < n; i += 16) {
    __mmask16 m = n - i >= 16 ? __mmask16(0xFFFF) : __mmask16((1u << (n - i)) - 1);
    __m512 a0 = _mm512_setzero_ps();
    for (int64_t t = 0; t < taps; ++t)
      a0 = _mm512_fmadd_ps(_mm512_set1_ps(w[t]), _mm512_maskz_loadu_ps(m, src[t] + i), a0);
    _mm512_mask_storeu_ps(y + i, m, clampAvx512(_mm512_add_ps(a0, bv), clamp));
  }
}

/// multiTapAvx512 for a compile-time number of taps: the weights stay in
/// registers and the tap loop is unrolled (same operations, same order).
template <int TAPS>
__attribute__((target("avx512f"))) void multiTapAvx512Fixed(int64_t n, const float *const *src,
                                                            const float *w, float bias,
                                                            const StoreClamp *clamp, float *y) {
  __m512 wv[TAPS];
  const float *s[TAPS];
  for (int t = 0; t < TAPS; ++t) {
    wv[t] = _mm512_set1_ps(w[t]);
    s[t] = src[t];
  }
  __m512 bv = _mm512_set1_ps(bias);
  int64_t i = 0;
  for (; i + 32 <= n; i += 32) {
    __m512 a0 = _mm512_setzero_ps(), a1 = _mm512_setzero_ps();
#pragma GCC unroll 32
    for (int t = 0; t < TAPS; ++t) {
      a0 = _mm512_fmadd_ps(wv[t], _mm512_loadu_ps(s[t] + i), a0);
      a1 = _mm512_fmadd_ps(wv[t], _mm512_loadu_ps(s[t] + i + 16), a1);
    }
    _mm512_storeu_ps(y + i, clampAvx512(_mm512_add_ps(a0, bv), clamp));
    _mm512_storeu_ps(y + i + 16, clampAvx512(_mm512_add_ps(a1, bv), clamp));
  }
  for (; i < n; i += 16) {
    __mmask16 m = n - i >= 16 ? __mmask16(0xFFFF) : __mmask16((1u << (n - i)) - 1);
    __m512 a0 = _mm512_setzero_ps();
#pragma GCC unroll 32
    for (int t = 0; t < TAPS; ++t)
      a0 = _mm512_fmadd_ps(wv[t], _mm512_maskz_loadu_ps(m, s[t] + i), a0);
    _mm512_mask_storeu_ps(y + i, m, clampAvx512(_mm512_add_ps(a0, bv), clamp));
  }
}

/// row[start + l] for lanes l < 16, zero where start + l is outside
/// [0, iw); reads nothing outside the row.
__attribute__((target("avx512f"))) inline __m512 loadInRow(const float *row, int64_t start,
                                                          int64_t iw) {
  if (start >= 0 && start + 16 <= iw)
    return _mm512_loadu_ps(row + start);
  const int64_t lo = std::max<int64_t>(0, -start), hi = std::min<int64_t>(16, iw - start);
  if (hi <= lo)
    return _mm512_setzero_ps();
  const auto m = static_cast<__mmask16>(((1u << hi) - 1u) & ~((1u << lo) - 1u));
  // Lanes [lo, hi) take row[start + lo], row[start + lo + 1], ... in order.
  return _mm512_maskz_expandloadu_ps(m, row + start + lo);
}

/// y[x0 + 16 v + l] = clamp(acc[v][l] + bias) for those below ow.
template <int V>
__attribute__((target("avx512f"))) inline void storeDepthwiseSums(const __m512 *acc, __m512 bias,
                                                                  const StoreClamp *clamp,
                                                                  int64_t x0, int64_t ow,
                                                                  float *y) {
#pragma GCC unroll 4
  for (int v = 0; v < V; ++v) {
    const __m512 out = clampAvx512(_mm512_add_ps(acc[v], bias), clamp);
    const int64_t x = x0 + 16 * v;
    if (ow - x >= 16)
      _mm512_storeu_ps(y + x, out);
    else
      _mm512_mask_storeu_ps(y + x, static_cast<__mmask16>((1u << (ow - x)) - 1u), out);
  }
}

/// V x 16 outputs of depthwiseStride2Row from output x0 on (stored up to
/// ow). Per input row, each 32 input columns are split into their even
/// and odd columns by two permutes (taps 0 and 1), and tap 2's columns are
/// the even ones shifted by one lane (the next split's first even column
/// coming in). V sums at once, so that their chains of dependent
/// multiply-adds overlap. Checked: some of the 32 V columns from
/// 2 x0 - padLeft on may fall outside the row (read as zeros; else plain
/// loads).
template <int V, bool Checked>
__attribute__((target("avx512f"))) inline void
depthwiseStride2Step(int64_t x0, int64_t ow, int64_t iw, int64_t padLeft, int64_t kh,
                     const float *const *rows, const float *w, __m512 bias,
                     const StoreClamp *clamp, float *y) {
  const __m512i evens =
      _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
  const __m512i odds =
      _mm512_setr_epi32(1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23, 25, 27, 29, 31);
  const int64_t base = 2 * x0 - padLeft; // input column of output x0's first tap
  __m512 acc[V];
  for (int v = 0; v < V; ++v)
    acc[v] = _mm512_setzero_ps();
  for (int64_t r = 0; r < kh; ++r) {
    const float *row = rows[r];
    if (!row)
      continue;
    __m512 even[V + 1], odd[V];
#pragma GCC unroll 4
    for (int v = 0; v < V; ++v) {
      const int64_t c = base + 32 * v;
      const __m512 a = Checked ? loadInRow(row, c, iw) : _mm512_loadu_ps(row + c);
      const __m512 b = Checked ? loadInRow(row, c + 16, iw) : _mm512_loadu_ps(row + c + 16);
      even[v] = _mm512_permutex2var_ps(a, evens, b);
      odd[v] = _mm512_permutex2var_ps(a, odds, b);
    }
    // Only lane 0 of the last is used: input column base + 32 V.
    const int64_t c = base + 32 * V;
    even[V] = c >= 0 && c < iw ? _mm512_set1_ps(row[c]) : _mm512_setzero_ps();
    const __m512 w0 = _mm512_set1_ps(w[3 * r]), w1 = _mm512_set1_ps(w[3 * r + 1]),
                 w2 = _mm512_set1_ps(w[3 * r + 2]);
#pragma GCC unroll 4
    for (int v = 0; v < V; ++v) {
      const __m512 shifted = _mm512_castsi512_ps(_mm512_maskz_alignr_epi32(
          0xFFFF, _mm512_castps_si512(even[v + 1]), _mm512_castps_si512(even[v]), 1));
      acc[v] = _mm512_fmadd_ps(w0, even[v], acc[v]);
      acc[v] = _mm512_fmadd_ps(w1, odd[v], acc[v]);
      acc[v] = _mm512_fmadd_ps(w2, shifted, acc[v]);
    }
  }
  storeDepthwiseSums<V>(acc, bias, clamp, x0, ow, y);
}

/// V x 16 outputs of depthwiseStride1Row from output x0 on (stored up to
/// ow): each tap's columns are one load. Checked: some of the columns
/// x0 - padLeft ... x0 - padLeft + 16 V + 1 may fall outside the row (read
/// as zeros; else plain loads).
template <int V, bool Checked>
__attribute__((target("avx512f"))) inline void
depthwiseStride1Step(int64_t x0, int64_t ow, int64_t iw, int64_t padLeft, int64_t kh,
                     const float *const *rows, const float *w, __m512 bias,
                     const StoreClamp *clamp, float *y) {
  const int64_t base = x0 - padLeft; // input column of output x0's first tap
  __m512 acc[V];
  for (int v = 0; v < V; ++v)
    acc[v] = _mm512_setzero_ps();
  for (int64_t r = 0; r < kh; ++r) {
    const float *row = rows[r];
    if (!row)
      continue;
    const __m512 w0 = _mm512_set1_ps(w[3 * r]), w1 = _mm512_set1_ps(w[3 * r + 1]),
                 w2 = _mm512_set1_ps(w[3 * r + 2]);
#pragma GCC unroll 4
    for (int v = 0; v < V; ++v) {
      const int64_t c = base + 16 * v;
      acc[v] = _mm512_fmadd_ps(w0, Checked ? loadInRow(row, c, iw) : _mm512_loadu_ps(row + c),
                               acc[v]);
      acc[v] = _mm512_fmadd_ps(
          w1, Checked ? loadInRow(row, c + 1, iw) : _mm512_loadu_ps(row + c + 1), acc[v]);
      acc[v] = _mm512_fmadd_ps(
          w2, Checked ? loadInRow(row, c + 2, iw) : _mm512_loadu_ps(row + c + 2), acc[v]);
    }
  }
  storeDepthwiseSums<V>(acc, bias, clamp, x0, ow, y);
}

/// A step of depthwiseStride1Row or depthwiseStride2Row (S: the column stride).
template <int S, int V, bool Checked>
__attribute__((target("avx512f"))) inline void
depthwiseStep(int64_t x0, int64_t ow, int64_t iw, int64_t padLeft, int64_t kh,
              const float *const *rows, const float *w, __m512 bias, const StoreClamp *clamp,
              float *y) {
  if constexpr (S == 1)
    depthwiseStride1Step<V, Checked>(x0, ow, iw, padLeft, kh, rows, w, bias, clamp, y);
  else
    depthwiseStride2Step<V, Checked>(x0, ow, iw, padLeft, kh, rows, w, bias, clamp, y);
}

/// depthwiseStride1Row (S = 1) or depthwiseStride2Row (S = 2) with AVX-512:
/// 64 outputs a step, then 16.
template <int S>
__attribute__((target("avx512f"))) void
depthwiseRowAvx512(int64_t ow, int64_t iw, int64_t padLeft, int64_t kh, const float *const *rows,
                   const float *w, float bias, float *y, const StoreClamp *clamp) {
  const __m512 bv = _mm512_set1_ps(bias);
  // Steps whose input columns lie in the row load without checks: from
  // S x - padLeft, 16 V S of them (and the two after the last at S = 1;
  // at S = 2 the one after is read on its own, checked).
  auto inside = [&](int64_t x, int64_t v) {
    const int64_t c = S * x - padLeft;
    return c >= 0 && c + 16 * S * v + (S == 1 ? 2 : 0) <= iw;
  };
  int64_t x0 = 0;
  if (padLeft > 0) { // the first 16 outputs read left of the row
    depthwiseStep<S, 1, true>(x0, ow, iw, padLeft, kh, rows, w, bv, clamp, y);
    x0 = 16;
  }
  for (; x0 + 64 <= ow; x0 += 64) {
    if (inside(x0, 4))
      depthwiseStep<S, 4, false>(x0, ow, iw, padLeft, kh, rows, w, bv, clamp, y);
    else
      depthwiseStep<S, 4, true>(x0, ow, iw, padLeft, kh, rows, w, bv, clamp, y);
  }
  for (; x0 < ow; x0 += 16) {
    if (inside(x0, 1))
      depthwiseStep<S, 1, false>(x0, ow, iw, padLeft, kh, rows, w, bv, clamp, y);
    else
      depthwiseStep<S, 1, true>(x0, ow, iw, padLeft, kh, rows, w, bv, clamp, y);
  }
}

/// Tap kx's input columns for output vector v of a narrow row: lanes l of
/// columns 16 v + l + D, from the row's vectors R (R[u + 1] holds columns
/// 16 u to 16 u + 15, zero past the row; R[0] and R[U + 1] are zero).
template <int D>
__attribute__((target("avx512f"))) inline __m512 narrowTap(const __m512 *R, int v) {
  // (The maskz form: the plain one leaves an undefined operand that GCC
  // reports as maybe uninitialized.)
  if constexpr (D == 0)
    return R[v + 1];
  else if constexpr (D > 0)
    return _mm512_castsi512_ps(_mm512_maskz_alignr_epi32(
        0xFFFF, _mm512_castps_si512(R[v + 2]), _mm512_castps_si512(R[v + 1]), D));
  else
    return _mm512_castsi512_ps(_mm512_maskz_alignr_epi32(
        0xFFFF, _mm512_castps_si512(R[v + 1]), _mm512_castps_si512(R[v]), 16 + D));
}

/// RB output rows from oy on of depthwiseNarrowRows (U input vectors a row,
/// V output vectors, PL columns of left padding). Input row i of the group
/// feeds output row r through kernel row i - r, so each output's taps are
/// summed in kernel-row order, then column order, from zero: the order of
/// multiTapRow over a padded copy. RB x V sums at once, so that their
/// chains of dependent multiply-adds overlap.
template <int U, int V, int RB, int PL>
__attribute__((target("avx512f"))) void
depthwiseNarrowGroup(int64_t oy, int64_t ow, int64_t ih, int64_t iw, int64_t padTop,
                     const float *plane, const float *w, __m512 bias, const StoreClamp *clamp,
                     float *y) {
  const auto lastLanes = static_cast<__mmask16>((1u << (iw - 16 * (U - 1))) - 1u);
  __m512 acc[RB][V];
#pragma GCC unroll 8
  for (int r = 0; r < RB; ++r)
#pragma GCC unroll 4
    for (int v = 0; v < V; ++v)
      acc[r][v] = _mm512_setzero_ps();
#pragma GCC unroll 10
  for (int i = 0; i < RB + 2; ++i) {
    const int64_t iy = oy - padTop + i;
    if (iy < 0 || iy >= ih)
      continue;
    const float *row = plane + iy * iw;
    __m512 R[U + 2];
    R[0] = R[U + 1] = _mm512_setzero_ps();
#pragma GCC unroll 5
    for (int u = 0; u < U; ++u)
      R[u + 1] = u + 1 < U ? _mm512_loadu_ps(row + 16 * u)
                           : _mm512_maskz_loadu_ps(lastLanes, row + 16 * u);
    __m512 t0[V], t1[V], t2[V];
#pragma GCC unroll 4
    for (int v = 0; v < V; ++v) {
      t0[v] = narrowTap<0 - PL>(R, v);
      t1[v] = narrowTap<1 - PL>(R, v);
      t2[v] = narrowTap<2 - PL>(R, v);
    }
#pragma GCC unroll 8
    for (int r = 0; r < RB; ++r) {
      const int ky = i - r;
      if (ky < 0 || ky > 2)
        continue;
      const __m512 w0 = _mm512_set1_ps(w[3 * ky]), w1 = _mm512_set1_ps(w[3 * ky + 1]),
                   w2 = _mm512_set1_ps(w[3 * ky + 2]);
#pragma GCC unroll 4
      for (int v = 0; v < V; ++v) {
        acc[r][v] = _mm512_fmadd_ps(w0, t0[v], acc[r][v]);
        acc[r][v] = _mm512_fmadd_ps(w1, t1[v], acc[r][v]);
        acc[r][v] = _mm512_fmadd_ps(w2, t2[v], acc[r][v]);
      }
    }
  }
#pragma GCC unroll 8
  for (int r = 0; r < RB; ++r)
    storeDepthwiseSums<V>(acc[r], bias, clamp, 0, ow, y + r * ow);
}

/// depthwiseNarrowRows for U input and V output vectors a row: groups of
/// RB rows (about 8 sums at once), then the remaining rows one by one.
template <int U, int V, int PL>
__attribute__((target("avx512f"))) void
depthwiseNarrowPlane(int64_t oy0, int64_t oy1, int64_t ow, int64_t ih, int64_t iw,
                     int64_t padTop, const float *plane, const float *w, float bias,
                     float *y, const StoreClamp *clamp) {
  constexpr int RB = V == 1 ? 8 : V == 2 ? 4 : V == 3 ? 3 : 2;
  const __m512 bv = _mm512_set1_ps(bias);
  int64_t oy = oy0;
  for (; oy + RB <= oy1; oy += RB, y += RB * ow)
    depthwiseNarrowGroup<U, V, RB, PL>(oy, ow, ih, iw, padTop, plane, w, bv, clamp, y);
  for (; oy < oy1; ++oy, y += ow)
    depthwiseNarrowGroup<U, V, 1, PL>(oy, ow, ih, iw, padTop, plane, w, bv, clamp, y);
}

/// depthwiseNarrowPlane's instance for the geometry, or null.
using NarrowPlaneFn = void (*)(int64_t, int64_t, int64_t, int64_t, int64_t, int64_t,
                               const float *, const float *, float, float *, const StoreClamp *);
template <int PL> NarrowPlaneFn narrowPlaneFor(int64_t U, int64_t V) {
  static constexpr NarrowPlaneFn kTable[5][4] = {
      {depthwiseNarrowPlane<1, 1, PL>},
      {depthwiseNarrowPlane<2, 1, PL>, depthwiseNarrowPlane<2, 2, PL>},
      {depthwiseNarrowPlane<3, 1, PL>, depthwiseNarrowPlane<3, 2, PL>,
       depthwiseNarrowPlane<3, 3, PL>},
      {depthwiseNarrowPlane<4, 1, PL>, depthwiseNarrowPlane<4, 2, PL>,
       depthwiseNarrowPlane<4, 3, PL>, depthwiseNarrowPlane<4, 4, PL>},
      {depthwiseNarrowPlane<5, 1, PL>, depthwiseNarrowPlane<5, 2, PL>,
       depthwiseNarrowPlane<5, 3, PL>, depthwiseNarrowPlane<5, 4, PL>}};
  return U >= 1 && U <= 5 && V >= 1 && V <= 4 ? kTable[U - 1][V - 1] : nullptr;
}

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

//===----------------------------------------------------------------------===//
// Direct convolution product (implicit GEMM over padded planes)
//===----------------------------------------------------------------------===//

/// Computes the rows x NR tile of a direct convolution product made of two
/// halves of NR/2 virtual columns: the first starts at b (row k at
/// b + off[k]), the second at b + bStep. Multiplies by the A panel `a`
/// (K x MR, packA's layout), adds bias[i] to row i when given, clamps when
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
    for (int h = 0; h < 2; ++h) {
      if (n[h] == 0)
        continue;
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

template <int ROWS>
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
    const __m512 b0 = _mm512_loadu_ps(bk), b1 = _mm512_loadu_ps(bk + bStep);
#pragma GCC unroll 12
    for (int i = 0; i < ROWS; ++i) {
      const __m512 ai = _mm512_set1_ps(a[i]);
      c[0][i] = _mm512_fmadd_ps(ai, b0, c[0][i]);
      c[1][i] = _mm512_fmadd_ps(ai, b1, c[1][i]);
    }
  }
  const int64_t n[2] = {n0, n1};
  for (int h = 0; h < 2; ++h) {
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
    directAvx512<ROWS>(K, a, b, bStep, off, accumulate, bias, clamp, dst, dstStep, ldd, n0,
                       n1);
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
/// reloads and stores the block's results again; slices of 256 (an A panel
/// slice in L1) made 3x3 convolutions of 32 to 512 channels take 1.04x to
/// 1.09x as long as one slice of up to 2048 (the panel then streams from
/// L2, which the kernel's 24 multiply-adds per step hide).
constexpr int64_t kDirectSlice = 2048;

} // namespace

int64_t directColumnTile() { return directEngine().NR; }

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
    packA(false, A + m0 * lda, lda, 0, m1 - m0, 0, K, MR, packed + p * MR * K);
  }
}

void convProductDirect(int64_t M, int64_t K, const float *packed, const float *B,
                       const int64_t *offsets, int64_t rows, int64_t pitch, int64_t width,
                       float *C, int64_t ldc, const float *rowBias, const StoreClamp *clamp,
                       int64_t panelBegin, int64_t panelEnd) {
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
  // last half is nearly full (3x3 layers with tiles through the padding
  // took 1.03x to 1.08x as long at widths of 64 to 256; by halves, 1.06x
  // at 40 and 1.25x at 20).
  const int64_t rowHalves = (width + W - 1) / W;
  const bool byHalves = rowHalves * W <= pitch;
  const int64_t halves = rows * rowHalves;
  const int64_t tiles = byHalves ? (halves + 1) / 2 : (columns + NR - 1) / NR;
  // K in balanced slices of at most kDirectSlice: an A panel's slice and
  // the block's B runs for it stay in L2.
  const int64_t slices = (K + kDirectSlice - 1) / kDirectSlice, KC = (K + slices - 1) / slices;
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
    for (int64_t pc = 0; pc < K; pc += KC) {
      const int64_t kc = std::min(KC, K - pc);
      const bool last = pc + kc == K;
      for (int64_t p = panelBegin; p < panelEnd; ++p) {
        const int64_t m0 = panelStart(p), panelRows = panelStart(p + 1) - m0;
        const float *bias = last && rowBias ? rowBias + m0 : nullptr;
        for (int64_t t = tb; t < te; ++t) {
          const Place pl = place(t);
          float *dst = pl.aside ? block.data() + (p - panelBegin) * MR * ldd + (t - tb) * NR
                                : C + m0 * ldc + pl.output;
          e.kernel(kc, packed + p * MR * K + pc * MR, B + pl.column, pl.bStep, offsets + pc,
                   pc > 0, bias, last ? clamp : nullptr, dst, pl.outStep, pl.aside ? ldd : ldc,
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

namespace {

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

void multiTapRow(int64_t n, int64_t taps, const float *const *src, const float *w, float bias,
                 float *y, const StoreClamp *clamp) {
#ifdef ONNXSLIM_ISA_X86
  switch (currentIsa().load()) {
  case Isa::Avx512:
    // The common depthwise kernels (3, 3x3, 5x5) get unrolled versions.
    if (taps == 9)
      return multiTapAvx512Fixed<9>(n, src, w, bias, clamp, y);
    if (taps == 25)
      return multiTapAvx512Fixed<25>(n, src, w, bias, clamp, y);
    if (taps == 3)
      return multiTapAvx512Fixed<3>(n, src, w, bias, clamp, y);
    return multiTapAvx512(n, taps, src, w, bias, clamp, y);
  case Isa::Avx2:
    return multiTapAvx2(n, taps, src, w, bias, clamp, y);
  case Isa::Baseline:
    break;
  }
#endif
  multiTapBaseline(n, taps, src, w, bias, clamp, y);
}

namespace {
/// depthwiseStride1Row (S = 1) or depthwiseStride2Row (S = 2).
template <int S>
bool depthwiseRow(int64_t ow, int64_t iw, int64_t padLeft, int64_t kh, const float *const *rows,
                  const float *w, float bias, float *y, const StoreClamp *clamp) {
#ifdef ONNXSLIM_ISA_X86
  if (currentIsa().load() == Isa::Avx512) {
    depthwiseRowAvx512<S>(ow, iw, padLeft, kh, rows, w, bias, y, clamp);
    return true;
  }
#endif
  (void)ow, (void)iw, (void)padLeft, (void)kh, (void)rows, (void)w, (void)bias, (void)y,
      (void)clamp;
  return false;
}
} // namespace

bool depthwiseStride2Row(int64_t ow, int64_t iw, int64_t padLeft, int64_t kh,
                         const float *const *rows, const float *w, float bias, float *y,
                         const StoreClamp *clamp) {
  return depthwiseRow<2>(ow, iw, padLeft, kh, rows, w, bias, y, clamp);
}

bool depthwiseStride1Row(int64_t ow, int64_t iw, int64_t padLeft, int64_t kh,
                         const float *const *rows, const float *w, float bias, float *y,
                         const StoreClamp *clamp) {
  return depthwiseRow<1>(ow, iw, padLeft, kh, rows, w, bias, y, clamp);
}

namespace {
/// The narrow-plane kernel for the geometry on the active engine, or null.
#ifdef ONNXSLIM_ISA_X86
NarrowPlaneFn narrowPlane(int64_t ow, int64_t iw, int64_t padLeft) {
  if (currentIsa().load() != Isa::Avx512 || ow < 1 || iw < 1 || padLeft < 0 || padLeft > 1)
    return nullptr;
  const int64_t U = (iw + 15) / 16, V = (ow + 15) / 16;
  if (V > 4 || U > 5 || V > U)
    return nullptr;
  return padLeft == 0 ? narrowPlaneFor<0>(U, V) : narrowPlaneFor<1>(U, V);
}
#endif
} // namespace

bool depthwiseNarrowFits(int64_t ow, int64_t iw, int64_t padLeft) {
#ifdef ONNXSLIM_ISA_X86
  return narrowPlane(ow, iw, padLeft) != nullptr;
#else
  (void)ow, (void)iw, (void)padLeft;
  return false;
#endif
}

bool depthwiseNarrowRows(int64_t oy0, int64_t oy1, int64_t ow, int64_t ih, int64_t iw,
                         int64_t padTop, int64_t padLeft, const float *plane, const float *w,
                         float bias, float *y, const StoreClamp *clamp) {
#ifdef ONNXSLIM_ISA_X86
  if (NarrowPlaneFn fn = narrowPlane(ow, iw, padLeft)) {
    fn(oy0, oy1, ow, ih, iw, padTop, plane, w, bias, y, clamp);
    return true;
  }
#endif
  (void)oy0, (void)oy1, (void)ow, (void)ih, (void)iw, (void)padTop, (void)padLeft, (void)plane,
      (void)w, (void)bias, (void)y, (void)clamp;
  return false;
}

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

bool depthwiseRowsAvailable() {
#ifdef ONNXSLIM_ISA_X86
  return currentIsa().load() == Isa::Avx512;
#else
  return false;
#endif
}

void multiTapRow(int64_t n, int64_t taps, const double *const *src, const double *w, double bias,
                 double *y, const StoreClamp *clamp) {
  multiTapBaseline(n, taps, src, w, bias, clamp, y);
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
