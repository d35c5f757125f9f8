//===- runtime/Gemm.h - Blocked GEMM engine --------------------*- C++ -*-===//
//
// General matrix multiplication C = alpha * op(A) * op(B) + beta * C on
// row-major matrices, where op(X) is X or its transpose. op(A) is M x K,
// op(B) is K x N and C is M x N; lda/ldb/ldc are row strides in elements of
// the matrices as stored (so A stored transposed is K x M with stride lda).
//
// The engine blocks for the caches (GotoBLAS style: NC/KC/MC), packs panels
// of A and B into contiguous aligned buffers and runs a register-tile
// micro-kernel with scalar handling of the edges: an xsimd kernel for the
// compile-time architecture, or AVX2+FMA / AVX-512F kernels selected at run
// time when the CPU has them. Matrix-vector products (M == 1 or N == 1) take
// a direct path without packing. When beta is 0, C is not read (so it may
// hold NaNs or garbage). Large products run on the thread pool
// (runtime/ThreadPool.h) with results identical for every thread count.
//
// Convolution is built on it but lives apart (runtime/conv/); nothing here
// knows about it. This header is plain C++: xsimd stays inside the .cpp
// files (runtime/Simd.h).
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstdint>
#include <functional>

namespace onnxslim::rt {

/// Given row-major A, B, C and the shapes above, Execute: C = alpha*op(A)*op(B) + beta*C,
/// then, when `rowBias` (M values) is given, C[i][j] += rowBias[i] as a separate
/// rounding (the same values as a second pass, without one over memory).
void sgemm(bool transA, bool transB, int64_t M, int64_t N, int64_t K, float alpha, const float *A,
           int64_t lda, const float *B, int64_t ldb, float beta, float *C, int64_t ldc,
           const float *rowBias = nullptr);

/// The double-precision version of sgemm, same contract.
void dgemm(bool transA, bool transB, int64_t M, int64_t N, int64_t K, double alpha,
           const double *A, int64_t lda, const double *B, int64_t ldb, double beta, double *C,
           int64_t ldc, const double *rowBias = nullptr);

/// Width (columns per panel) of the packed-B layout of the active engine.
/// A packed K x N matrix B is a sequence of ceil(N / width) panels; panel p
/// holds, row after row, the K rows of columns [p*width, (p+1)*width), zero
/// past column N-1; panel p starts at element p * K * width.
template <typename T> int64_t gemmPanelWidth();
template <> int64_t gemmPanelWidth<float>();
template <> int64_t gemmPanelWidth<double>();

/// Given B already in the packed layout for `panelWidth` (from
/// gemmPanelWidth), Execute: C = alpha*op(A)*B + beta*C without reading or
/// packing a row-major B (convolution writes its column matrix this way).
/// A width other than the active engine's is accepted (slower path).
/// Bp must be 64-byte aligned: the micro-kernels load its panels aligned.
/// `rowBias` as in sgemm. `sliceColumns`, when > 0, is the column count
/// whose K slice the engine uses instead of N's: a caller that computes one
/// product as several column ranges passes the whole product's, so that
/// every range rounds as the whole would, however it was cut.
void gemmPackedB(bool transA, int64_t M, int64_t N, int64_t K, float alpha, const float *A,
                 int64_t lda, const float *Bp, int64_t panelWidth, float beta, float *C,
                 int64_t ldc, const float *rowBias = nullptr, int64_t sliceColumns = 0);
void gemmPackedB(bool transA, int64_t M, int64_t N, int64_t K, double alpha, const double *A,
                 int64_t lda, const double *Bp, int64_t panelWidth, double beta, double *C,
                 int64_t ldc, const double *rowBias = nullptr, int64_t sliceColumns = 0);

/// Height (rows per panel) of the packed-A layout of the active float
/// engine (packRowPanels' MR; the rows a RowPanelPacker writes per panel).
int64_t gemmRowPanelHeight();

/// Given rows [i0, i0 + rows) and columns [k0, k0 + kc) of a product's A,
/// Execute: writes them into dst as row panels of gemmRowPanelHeight() =
/// MR rows: panel r / MR at dst + r * kc holds, column after column, its MR
/// values (zero past the last row of A).
template <typename T>
using RowPanelPacker = std::function<void(int64_t i0, int64_t rows, int64_t k0, int64_t kc, T *dst)>;

/// gemmPackedB (beta 0, alpha 1, the engine's panel width) with A's blocks
/// written by `packA` where the engine would pack them from A: for an A
/// never stored whole (a convolution's column matrix, built slice by slice
/// into the caches the product reads it from). The bits are gemmPackedB's
/// on that A. Runs on the calling thread only when called from a pool task.
void gemmPackedB(const RowPanelPacker<float> &packA, int64_t M, int64_t N, int64_t K,
                 const float *Bp, float *C, int64_t ldc, int64_t sliceColumns);

/// Given op(B) (K x N: B row-major with row stride ldb, read transposed
/// when transB), Execute: writes it whole into `packed` in the packed-B
/// layout of the active engine (gemmPanelWidth<float>() wide panels,
/// ceil(N / width) * K * width elements), for a constant B multiplied again
/// and again (a MatMul's weights): gemmPackedB with sliceColumns = N then
/// computes the very bits sgemm does from B itself, where sgemmBlocked.
void packBPanels(bool transB, int64_t K, int64_t N, const float *B, int64_t ldb, float *packed);

/// Whether sgemm runs a product of this shape as the blocked product (the
/// one gemmPackedB shares), not as dot products (few columns) or a
/// matrix-vector product.
bool sgemmBlocked(bool transA, int64_t M, int64_t N);

/// Whether the blocked product of this shape, called from outside a pool
/// task, cuts its columns across the threads itself (wide products); a
/// narrower one splits each K slice only where that slice is worth it.
bool gemmSplitsColumns(int64_t M, int64_t N, int64_t K);

/// Given A (rows x K, row-major, lda), Execute: packs it into `packed` in
/// MR-tall row panels, the layout in which the micro-kernels read op(A):
/// panel p, at element p * MR * K, holds for each k < K the values of rows
/// p * MR to p * MR + MR - 1 in column k, zero past the last row. (The
/// direct convolution product, runtime/conv/Kernels.h, multiplies filters
/// packed so.)
void packRowPanels(int64_t rows, int64_t K, const float *A, int64_t lda, int64_t MR,
                   float *packed);

/// Columns of op(B) up to which a product takes dot products instead of
/// packing (sgemm with A not transposed, and gemmFewColumns).
constexpr int64_t kFewColumns = 8;

/// Given A (M x K, row-major, lda) and the columns of B as the rows of Bt
/// (N x K, ldbt), Execute: C[i * ldc + j] = sum_k A[i][k] * Bt[j][k] (then
/// + rowBias[i], a separate rounding, when given): dot products of rows in
/// place, no packing, for products with few columns (kFewColumns at a
/// time), where packing A would cost more than multiplying.
void gemmFewColumns(int64_t M, int64_t N, int64_t K, const float *A, int64_t lda,
                    const float *Bt, int64_t ldbt, float *C, int64_t ldc,
                    const float *rowBias = nullptr);
void gemmFewColumns(int64_t M, int64_t N, int64_t K, const double *A, int64_t lda,
                    const double *Bt, int64_t ldbt, double *C, int64_t ldc,
                    const double *rowBias = nullptr);

/// Given "baseline", "avx2" or "avx512", Execute: makes later calls use that
/// micro-kernel family, Result: false (and no change) when the CPU lacks it.
/// For tests and benchmarks; the default is the best family the CPU has.
bool setGemmEngine(const char *name);

/// The micro-kernel family in use: "baseline", "avx2" or "avx512".
const char *gemmEngineName();

/// Whether that family is AVX-512 (the other kernels' AVX-512 loops follow
/// it); cheap enough to ask per row.
bool gemmEngineIsAvx512();

/// Overloads picking sgemm or dgemm from the element type (for templated kernels).
inline void gemm(bool transA, bool transB, int64_t M, int64_t N, int64_t K, float alpha,
                 const float *A, int64_t lda, const float *B, int64_t ldb, float beta, float *C,
                 int64_t ldc, const float *rowBias = nullptr) {
  sgemm(transA, transB, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc, rowBias);
}
inline void gemm(bool transA, bool transB, int64_t M, int64_t N, int64_t K, double alpha,
                 const double *A, int64_t lda, const double *B, int64_t ldb, double beta,
                 double *C, int64_t ldc, const double *rowBias = nullptr) {
  dgemm(transA, transB, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc, rowBias);
}

} // namespace onnxslim::rt
