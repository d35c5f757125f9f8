//===- runtime/conv/Kernels.h - SIMD kernels of convolution ----*- C++ -*-===//
//
// The vector kernels the convolution algorithms (runtime/conv/*.cpp) are
// built on, each with a scalar or xsimd version and AVX2 / AVX-512 ones
// chosen at run time with the GEMM engine's family (runtime/Simd.h):
//  - the multi-tap and depthwise rows (runtime/conv/DepthwiseRows.cpp);
//  - the direct product, a GEMM whose B is read straight from padded input
//    planes (runtime/conv/DirectProduct.cpp).
// Every kernel computes each output with the same operations in the same
// order whatever the family's vector width, as the comments say, so that
// the paths agree to the bit where the comments promise it.
//
// This header is plain C++: xsimd and the intrinsics stay in the .cpp files.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstdint>

namespace onnxslim::rt {

/// A clamp applied to results as they are stored: x < lo ? lo : x, then
/// > hi ? hi : that (NaN passes), as the Clip and Relu kernels compute it.
struct StoreClamp {
  float lo, hi;
};

//===----------------------------------------------------------------------===//
// Multi-tap and depthwise rows (runtime/conv/DepthwiseRows.cpp)
//===----------------------------------------------------------------------===//

/// Given `taps` input rows (src[t][i] is tap t's input for output i) and
/// their weights, Execute: y[i] = sum_t w[t] * src[t][i] + bias for i < n,
/// the taps accumulated in order from zero (fused multiply-adds where the
/// engine has them), the bias added last, then the clamp applied when given
/// (see StoreClamp). The row step of direct (depthwise) convolution.
void multiTapRow(int64_t n, int64_t taps, const float *const *src, const float *w, float bias,
                 float *y, const StoreClamp *clamp = nullptr);
void multiTapRow(int64_t n, int64_t taps, const double *const *src, const double *w, double bias,
                 double *y, const StoreClamp *clamp = nullptr);

/// Most kernel rows of a depthwise convolution read straight from its
/// input rows (depthwiseStride2Row, depthwiseStride1Row take kh up to it).
constexpr int64_t kMaxFromInputRows = 7;

/// One output row of a depthwise convolution with kh x 3 taps, a column
/// stride of 2 and no column dilation, read straight from the input rows
/// (no padded, phase-split copy). rows[r] is kernel row r's input row of
/// `iw` floats, or null when it lies in the padding; w[3 * r + kx] its
/// weights. Execute: for ox < ow, y[ox] = clamp(sum over the non-null r
/// and kx < 3 of w[3r+kx] * in_r[2 ox - padLeft + kx] + bias), with in_r
/// zero outside [0, iw): the sums multiTapRow computes over a zero-padded
/// copy (the same taps in the same order from zero, fused multiply-adds,
/// the bias, then the clamp when given). Result: false, with nothing
/// written, when the active engine has no such kernel (it is AVX-512's).
bool depthwiseStride2Row(int64_t ow, int64_t iw, int64_t padLeft, int64_t kh,
                         const float *const *rows, const float *w, float bias, float *y,
                         const StoreClamp *clamp = nullptr);

/// depthwiseStride2Row at a column stride of 1: y[ox] sums
/// w[3r+kx] * in_r[ox - padLeft + kx].
bool depthwiseStride1Row(int64_t ow, int64_t iw, int64_t padLeft, int64_t kh,
                         const float *const *rows, const float *w, float bias, float *y,
                         const StoreClamp *clamp = nullptr);

/// Output rows [oy0, oy1) of one plane of a 3x3 depthwise convolution at
/// unit strides and dilations, read straight from the input plane (ih x iw,
/// row pitch iw) and written to y (output row oy0 first, row pitch ow):
/// y[oy][ox] = clamp(sum over the kernel rows inside the plane and kx < 3
/// of w[3 ky + kx] * in[oy - padTop + ky][ox - padLeft + kx] + bias), with
/// in zero left and right of the rows; the sums multiTapRow computes over a
/// zero-padded copy (the same taps in the same order from zero, fused
/// multiply-adds, the bias, then the clamp when given). For narrow planes,
/// whose rows are too short for a call each: several rows' sums are
/// computed at once. Result: false, with nothing written, when the active
/// engine has no such kernel (it is AVX-512's) or the geometry is outside
/// depthwiseNarrowFits.
bool depthwiseNarrowRows(int64_t oy0, int64_t oy1, int64_t ow, int64_t ih, int64_t iw,
                         int64_t padTop, int64_t padLeft, const float *plane, const float *w,
                         float bias, float *y, const StoreClamp *clamp = nullptr);

/// Output rows [oy0, oy1) of one plane of a 3x3 depthwise convolution at
/// strides of 2 and unit dilations, read straight from the input plane (ih
/// x iw, row pitch iw) and written to y (output row oy0 first, row pitch
/// ow): each row the sums of depthwiseStride2Row over input rows 2 oy -
/// padTop + ky (null outside the plane). One call a plane band: the
/// weights are set up once, not once a row. Result: false, with nothing
/// written, when the active engine has no such kernel (it is AVX-512's) or
/// padLeft is not 0 or 1.
bool depthwiseStride2Rows(int64_t oy0, int64_t oy1, int64_t ow, int64_t ih, int64_t iw,
                          int64_t padTop, int64_t padLeft, const float *plane, const float *w,
                          float bias, float *y, const StoreClamp *clamp = nullptr);

/// depthwiseStride2Rows at unit strides (input rows oy - padTop + ky,
/// columns ox - padLeft + kx): depthwiseNarrowRows's sums for rows of any
/// width, in strips of up to 64 outputs, several rows at once. Result:
/// false, with nothing written, when the active engine has no such kernel
/// (it is AVX-512's) or padLeft is not 0 or 1.
bool depthwiseStride1Rows(int64_t oy0, int64_t oy1, int64_t ow, int64_t ih, int64_t iw,
                          int64_t padTop, int64_t padLeft, const float *plane, const float *w,
                          float bias, float *y, const StoreClamp *clamp = nullptr);

/// depthwiseStride1Rows for a 5x5 kernel (w[5 ky + kx]; input rows oy -
/// padTop + ky, columns ox - padLeft + kx): the same sums, in the same
/// strips and groups of rows. Result: false, with nothing written, when the
/// active engine has no such kernel (it is AVX-512's) or padLeft is not 0
/// to 2.
bool depthwiseStride1Rows5(int64_t oy0, int64_t oy1, int64_t ow, int64_t ih, int64_t iw,
                           int64_t padTop, int64_t padLeft, const float *plane, const float *w,
                           float bias, float *y, const StoreClamp *clamp = nullptr);

/// Whether depthwiseNarrowRows takes rows of ow outputs from input rows of
/// iw with padLeft columns of padding: on AVX-512, up to 64 outputs and 80
/// inputs a row, padLeft 0 or 1.
bool depthwiseNarrowFits(int64_t ow, int64_t iw, int64_t padLeft);

/// Whether depthwiseStride2Row and depthwiseStride1Row run on the active
/// engine.
bool depthwiseRowsAvailable();

//===----------------------------------------------------------------------===//
// Direct product (runtime/conv/DirectProduct.cpp)
//===----------------------------------------------------------------------===//

/// Row panels of a direct convolution product of M rows: as few as the
/// active engine's panel height allows, of balanced heights (panel p holds
/// rows directPanelStart(M, p) to directPanelStart(M, p + 1)), so that no
/// panel is a thin remainder (64 rows are 10 to 11 a panel, not 5 x 12 and
/// a panel of 4, whose few rows use the register tile poorly).
int64_t directPanels(int64_t M);
int64_t directPanelStart(int64_t M, int64_t p);

/// Elements of the packed filters of a direct convolution product: M x K
/// in the active engine's row panels.
int64_t directFilterElements(int64_t M, int64_t K);

/// Given A (M x K, row-major, lda), Execute: packs it for convProductDirect
/// into `packed` (directFilterElements(M, K) elements, 64-byte aligned).
void packDirectFilters(int64_t M, int64_t K, const float *A, int64_t lda, float *packed);

/// Which slices of K a convProductDirect call sums. K is cut into at
/// least `count` balanced slices (directSliceCount); the call
/// writes the sum of slices [begin, end) (to the last when end < 0), the
/// bias and clamp applied only when that range ends with K's last slice.
/// An output's bits depend on the count, never on how the range is cut:
/// a caller that sums two ranges itself (fl(fl(first + second) + bias))
/// gets the bits of one call over all slices.
struct DirectSlices {
  int64_t count = 1;
  int64_t begin = 0, end = -1;
};

/// How many slices convProductDirect cuts K into when asked for at least
/// `count` (DirectSlices); slice s is k in [s * KC, (s + 1) * KC) with KC =
/// K / slices rounded up.
int64_t directSliceCount(int64_t K, int64_t count);

/// The product of a convolution read straight from zero-padded input
/// planes, with no column matrix ("implicit GEMM"). Row k of the
/// virtual K x columns matrix B is the run B + offsets[k]; output (oy, ox),
/// for oy < rows and ox < width, is virtual column v = oy * pitch + ox (the
/// columns between rows, under the padding, are not computed). Given A
/// packed by packDirectFilters, Execute: for m < M and every output,
/// C[m * ldc + oy * width + ox] = clamp(sum_k A[m][k] * B[offsets[k] + v] +
/// rowBias[m]), the sum taken over k in order from zero with fused
/// multiply-adds (in K slices fixed by K alone), the bias (when given) and
/// then the clamp (when given) applied as separate roundings: an output's
/// result does not depend on `rows` or on where it lies. B is read below
/// offsets[k] + (rows - 1) * pitch + width + kConvDirectSlack for every k
/// (callers leave that much readable slack), and below
/// offsets[k] + rows * pitch when width is a multiple of
/// directColumnTile() / 2. Only the rows of panels [panelBegin, panelEnd)
/// are computed (all of them when panelEnd < 0); C and rowBias stay those
/// of row 0. `slices`: which part of the sum over k (DirectSlices). Runs on
/// the calling thread. Float only: the kernels of the active engine's
/// family.
void convProductDirect(int64_t M, int64_t K, const float *packed, const float *B,
                       const int64_t *offsets, int64_t rows, int64_t pitch, int64_t width,
                       float *C, int64_t ldc, const float *rowBias, const StoreClamp *clamp,
                       int64_t panelBegin = 0, int64_t panelEnd = -1,
                       DirectSlices slices = {});

/// Elements past the last output's virtual column that convProductDirect
/// may read.
constexpr int64_t kConvDirectSlack = 32;

/// The column tile of convProductDirect's active engine.
int64_t directColumnTile();

} // namespace onnxslim::rt
